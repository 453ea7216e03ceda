// lib/activation.wgsl: the activations of the fused matmul epilogues and the elementwise kernels.
// Match PyTorch GELU(approximate='tanh') and SiLU (references: src/kernels/activations.ts).

// The argument of tanh is clamped so large |v| cannot overflow to NaN (tanh is +-1 there anyway).
fn gelu_tanh(v: f32) -> f32 {
  let u = clamp(0.7978845608028654 * (v + 0.044715 * v * v * v), -15.0, 15.0);
  return 0.5 * v * (1.0 + tanh(u));
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

// act: 0 none, 1 GELU tanh, 2 SiLU (ACTIVATION_CODE in src/kernels/activations.ts).
fn activate(v: f32, act: u32) -> f32 {
  if (act == 1u) { return gelu_tanh(v); }
  if (act == 2u) { return silu(v); }
  return v;
}
