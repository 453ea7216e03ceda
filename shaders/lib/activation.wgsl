// lib/activation.wgsl: the activations of the fused matmul epilogues and the elementwise kernels.
// Match PyTorch GELU(approximate='tanh'), GELU (exact, with erf) and SiLU (references:
// src/kernels/activations.ts).

// The argument of tanh is clamped so large |v| cannot overflow to NaN (tanh is +-1 there anyway).
fn gelu_tanh(v: f32) -> f32 {
  let u = clamp(0.7978845608028654 * (v + 0.044715 * v * v * v), -15.0, 15.0);
  return 0.5 * v * (1.0 + tanh(u));
}

// gelu(v) = v / 2 * (1 + erf(v / sqrt(2))). WGSL has no erf: Abramowitz and Stegun 7.1.26, whose
// absolute error is below 1.5e-7 (well under f32's rounding of the result near 1).
fn erf_approx(x: f32) -> f32 {
  let a = abs(x);
  let t = 1.0 / (1.0 + 0.3275911 * a);
  let poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))));
  return sign(x) * (1.0 - poly * exp(-a * a));
}

fn gelu_erf(v: f32) -> f32 {
  return 0.5 * v * (1.0 + erf_approx(v * 0.7071067811865476));
}

// silu(g) = g / (1 + exp(-g)); exp overflows to inf for g < -88 and g / inf = -0, the right limit.
fn silu(v: f32) -> f32 {
  return v / (1.0 + exp(-v));
}

// The matmuls' fused epilogue (matmul.wgsl, matmul-register.wgsl through lib/store-y-*.wgsl, gemv.wgsl),
// y = act(x · Wᵀ + b) + y's previous value, given as the bits of one u32. src/kernels/matmul.ts packs it
// from these constants (wgslConstant).
const EPILOGUE_BIAS: u32 = 1u;
const EPILOGUE_ACTIVATION_SHIFT: u32 = 1u;
const EPILOGUE_ACCUMULATE: u32 = 8u;

fn epilogue_bias(e: u32) -> bool {
  return (e & EPILOGUE_BIAS) != 0u;
}

fn epilogue_activation(e: u32) -> u32 {
  return (e >> EPILOGUE_ACTIVATION_SHIFT) & 3u;
}

fn epilogue_accumulate(e: u32) -> bool {
  return (e & EPILOGUE_ACCUMULATE) != 0u;
}

// act: 0 none, 1 GELU tanh, 2 SiLU, 3 GELU erf (ACTIVATION_CODE in src/kernels/activations.ts).
fn activate(v: f32, act: u32) -> f32 {
  if (act == 1u) { return gelu_tanh(v); }
  if (act == 2u) { return silu(v); }
  if (act == 3u) { return gelu_erf(v); }
  return v;
}
