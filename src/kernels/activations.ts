// Activation functions in float64, the references for the WGSL versions (gelu-tanh.wgsl, swiglu.wgsl and
// the fused epilogues of the matmuls). Match PyTorch: GELU(approximate='tanh') and SiLU.

export type Activation = 'none' | 'gelu_tanh' | 'silu';

/** The activation code in the matmul shaders' epilogue uniform (bits 1..2). */
export const ACTIVATION_CODE: Record<Activation, number> = { none: 0, gelu_tanh: 1, silu: 2 };

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
  return x;
}
