// Activation functions in float64, the references for the WGSL versions (gelu-tanh.wgsl, swiglu.wgsl and
// the fused epilogues of the matmuls). Match PyTorch: GELU(approximate='tanh'), GELU (exact: 'gelu', as
// HF's ACT2FN['gelu'] and nn.functional.gelu) and SiLU.

export type Activation = 'none' | 'gelu_tanh' | 'silu' | 'gelu';

/** The activation code in the matmul shaders' epilogue uniform (bits 1..2). */
export const ACTIVATION_CODE: Record<Activation, number> = { none: 0, gelu_tanh: 1, silu: 2, gelu: 3 };

/**
 * erf in float64: its Maclaurin series below |x| = 3 (terms fall under 1e-17 of the sum before 60), the
 * continued fraction of erfc above (Lentz's method), 1 past |x| = 6 (erfc(6) < 3e-17).
 */
export function erf(x: number): number {
  const a = Math.abs(x);
  if (a >= 6) return Math.sign(x);
  if (a < 3) {
    let term = a;
    let sum = a;
    for (let n = 1; n < 100; n++) {
      term *= (-a * a) / n;
      const add = term / (2 * n + 1);
      sum += add;
      if (Math.abs(add) < 1e-17 * Math.abs(sum)) break;
    }
    return Math.sign(x) * (2 / Math.sqrt(Math.PI)) * sum;
  }
  // erfc(a) = exp(-a²)/√π · 1/(a + (1/2)/(a + 1/(a + (3/2)/(a + 2/(a + ...))))), evaluated from the tail.
  let f = a;
  for (let k = 60; k >= 1; k--) f = a + k / 2 / f;
  const erfc = Math.exp(-a * a) / Math.sqrt(Math.PI) / f;
  return Math.sign(x) * (1 - erfc);
}

export function gelu(x: number): number {
  return 0.5 * x * (1 + erf(x / Math.SQRT2));
}

const SQRT_2_OVER_PI = Math.sqrt(2 / Math.PI);

export function geluTanh(x: number): number {
  return 0.5 * x * (1 + Math.tanh(SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)));
}

export function silu(x: number): number {
  return x / (1 + Math.exp(-x));
}

export function activate(x: number, activation: Activation): number {
  if (activation === 'gelu_tanh') return geluTanh(x);
  if (activation === 'silu') return silu(x);
  if (activation === 'gelu') return gelu(x);
  return x;
}
