// Write the new tokens' K and V rows (from a fused qkv projection) into the paged KV cache.
//   qkv: [numTokens, rowStride] f32   slots: [numTokens] u32
//   kCache, vCache: [numSlots, numKvHeads, headDim] f32   errors: [2] u32 (see kv-write.wgsl)

import source from '../../shaders/kv-write.wgsl?raw';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { DEFAULT_WORKGROUP_SIZE, expectPositiveInt, expectTensor, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';

export interface KvWriteShape {
  numTokens: number;
  numKvHeads: number;
  headDim: number;
  /** Elements per qkv row. */
  rowStride: number;
  /** Where k and v start inside a qkv row, in elements. */
  kOffset: number;
  vOffset: number;
  numSlots: number;
}

/** Returns updated copies of the caches; bad slots are skipped. */
export function kvWriteReference(
  qkv: Float32Array,
  slots: Uint32Array,
  kCache: Float32Array,
  vCache: Float32Array,
  shape: KvWriteShape,
): { k: Float32Array; v: Float32Array } {
  const { numTokens, numKvHeads, headDim, rowStride, kOffset, vOffset, numSlots } = shape;
  const row = numKvHeads * headDim;
  const k = Float32Array.from(kCache);
  const v = Float32Array.from(vCache);
  for (let t = 0; t < numTokens; t++) {
    if (slots[t] >= numSlots) continue;
    k.set(qkv.subarray(t * rowStride + kOffset, t * rowStride + kOffset + row), slots[t] * row);
    v.set(qkv.subarray(t * rowStride + vOffset, t * rowStride + vOffset + row), slots[t] * row);
  }
  return { k, v };
}

export async function prepareKvWrite(
  gpu: GpuContext,
  io: { qkv: Tensor; slots: Tensor; kCache: Tensor; vCache: Tensor; errors: Tensor },
  shape: KvWriteShape,
  options: { workgroupSize?: number } = {},
): Promise<KernelDispatch> {
  const kernel = 'kv-write';
  const { numTokens, numKvHeads, headDim, rowStride, kOffset, vOffset, numSlots } = shape;
  const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
  for (const [name, value] of Object.entries({ numTokens, numKvHeads, headDim, rowStride, numSlots })) {
    expectPositiveInt(kernel, name, value);
  }
  expectWorkgroupSize(gpu, kernel, wg);
  expectTensor(gpu, kernel, 'qkv', io.qkv, [numTokens, rowStride]);
  expectTensor(gpu, kernel, 'slots', io.slots, [numTokens], 'u32');
  expectTensor(gpu, kernel, 'kCache', io.kCache, [numSlots, numKvHeads, headDim]);
  expectTensor(gpu, kernel, 'vCache', io.vCache, [numSlots, numKvHeads, headDim]);
  expectTensor(gpu, kernel, 'errors', io.errors, [2], 'u32');
  return createDispatch(gpu, {
    label: kernel,
    code: source,
    constants: { WG: wg },
    resources: [io.qkv, io.slots, io.kCache, io.vCache, io.errors],
    params: packParams([
      ['u32', numTokens],
      ['u32', numKvHeads],
      ['u32', headDim],
      ['u32', rowStride],
      ['u32', kOffset],
      ['u32', vOffset],
      ['u32', numSlots],
    ]),
    grid: linearGrid(gpu, kernel, Math.ceil((numTokens * numKvHeads * headDim) / wg)),
    // k and v of each token read from qkv and written to the caches, and its slot.
    cost: { flops: 0, bytes: 4 * numTokens * (4 * numKvHeads * headDim + 1) },
  });
}
