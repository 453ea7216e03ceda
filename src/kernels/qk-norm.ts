// Per-head RMSNorm of q and k in place (HF Qwen3 `q_norm` / `k_norm`, applied before RoPE). One workgroup
// per (token, head) of the q and k heads; the v heads of the fused row are untouched.
//   x: [numTokens, numHeads, headDim] f32 (q heads, then k heads, then v heads)   weight: [2, headDim] f32

import source from '../../shaders/qk-norm.wgsl?raw';
import reduceSource from '../../shaders/lib/workgroup-reduce.wgsl?raw';
import { UnsupportedShapeError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { DEFAULT_WORKGROUP_SIZE, expectPositiveInt, expectTensor, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';

export interface QkNormShape {
  numTokens: number;
  /** Heads in a token's row (q, k and v). */
  numHeads: number;
  numQHeads: number;
  numKHeads: number;
  headDim: number;
}

export function qkNormReference(x: Float32Array, w: Float32Array, shape: QkNormShape, eps: number): Float32Array {
  const { numTokens, numHeads, numQHeads, numKHeads, headDim } = shape;
  const y = Float32Array.from(x);
  for (let t = 0; t < numTokens; t++) {
    for (let h = 0; h < numQHeads + numKHeads; h++) {
      const base = (t * numHeads + h) * headDim;
      const wBase = h < numQHeads ? 0 : headDim;
      let sq = 0;
      for (let i = 0; i < headDim; i++) sq += x[base + i] * x[base + i];
      const inv = 1 / Math.sqrt(sq / headDim + eps);
      for (let i = 0; i < headDim; i++) y[base + i] = w[wBase + i] * (x[base + i] * inv);
    }
  }
  return y;
}

export async function prepareQkNorm(
  gpu: GpuContext,
  io: { x: Tensor; weight: Tensor },
  shape: QkNormShape,
  options: { eps: number; workgroupSize?: number },
): Promise<KernelDispatch> {
  const kernel = 'qk-norm';
  const { numTokens, numHeads, numQHeads, numKHeads, headDim } = shape;
  const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
  for (const [name, v] of Object.entries({ numTokens, numHeads, numQHeads, numKHeads, headDim })) expectPositiveInt(kernel, name, v);
  if (numQHeads + numKHeads > numHeads) {
    throw new UnsupportedShapeError(`qk-norm: ${numQHeads} q heads and ${numKHeads} k heads do not fit in a row of ${numHeads} heads`);
  }
  expectWorkgroupSize(gpu, kernel, wg);
  expectTensor(gpu, kernel, 'x', io.x, [numTokens, numHeads, headDim]);
  expectTensor(gpu, kernel, 'weight', io.weight, [2, headDim]);
  const normed = numTokens * (numQHeads + numKHeads);
  return createDispatch(gpu, {
    label: kernel,
    code: [reduceSource, source].join('\n'),
    constants: { WG: wg },
    resources: [io.x, io.weight],
    params: packParams([
      ['u32', numTokens],
      ['u32', numHeads],
      ['u32', numQHeads],
      ['u32', numKHeads],
      ['u32', headDim],
      ['f32', options.eps],
      ['u32', 0],
      ['u32', 0],
    ]),
    grid: linearGrid(gpu, kernel, normed),
    // Each normed head read and written once, and the two weight rows.
    cost: { flops: 0, bytes: 4 * (2 * normed * headDim + 2 * headDim) },
  });
}
