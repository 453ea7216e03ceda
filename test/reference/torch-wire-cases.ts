// The tensors of the torch wire-format check (test/reference/torch_wire.py, test/unit/torch-tensor.test.ts):
// shapes and dtypes an image_embeds part carries, with values from a formula both sides compute.

import type { TorchDtype } from '../../src/protocol/torch-tensor';

export interface TorchWireCase {
  name: string;
  shape: number[];
  dtype: TorchDtype;
}

export const TORCH_WIRE_CASES: TorchWireCase[] = [
  { name: 'f32-tiles', shape: [2, 64, 24], dtype: 'float32' },
  { name: 'f32-rows', shape: [64, 576], dtype: 'float32' },
  { name: 'f16-tiles', shape: [5, 64, 24], dtype: 'float16' },
  { name: 'bf16-rows', shape: [3, 7], dtype: 'bfloat16' },
  // Qwen-VL patch grids (image_grid_thw), one [t, h, w] per row.
  { name: 'i64-grids', shape: [4, 3], dtype: 'int64' },
];

/**
 * Value i of a case: sin(i * 0.37) * 3 + i / 1000 (torch_wire.py computes the same in float64); of an int64
 * case, (i * 7919) % 20011 - 10000.
 */
export function caseValues(c: TorchWireCase): Float32Array {
  const n = c.shape.reduce((a, b) => a * b, 1);
  if (c.dtype === 'int64') return Float32Array.from({ length: n }, (_, i) => ((i * 7919) % 20011) - 10000);
  return Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.37) * 3 + i / 1000);
}
