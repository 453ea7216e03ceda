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
];

/** Value i of a case: sin(i * 0.37) * 3 + i / 1000 (torch_wire.py computes the same in float64). */
export function caseValues(c: TorchWireCase): Float32Array {
  const n = c.shape.reduce((a, b) => a * b, 1);
  return Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.37) * 3 + i / 1000);
}
