// Causal attention over a paged KV cache, for prefill chunks and decode steps (HF LlamaAttention, GQA).
//   qkv: [numTokens, rowStride] f32 (q heads first)   tokenSeq, tokenPos: [numTokens] u32
//   blockTables: [numSeqs, maxBlocksPerSeq] u32   kCache, vCache: [numSlots, numKvHeads, headDim] f32
//   out: [numTokens, numHeads * headDim] f32
// Any head_dim that is a multiple of 4 up to MAX_HEAD_DIM (SmolVLM 64, Idefics3-8B 128); the head code is
// generated for it (attention-head.ts) and prepended with lib/online-softmax.wgsl.

import source from '../../shaders/paged-attention.wgsl?raw';
import onlineSoftmax from '../../shaders/lib/online-softmax.wgsl?raw';
import { UnsupportedShapeError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { attentionHeadSource, checkHeadDim, defaultHeadCode, type HeadCode } from './attention-head';
import { expectPositiveInt, expectTensor, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, packParams, type DispatchCost, type KernelDispatch } from './dispatch';

export interface PagedAttentionShape {
  numTokens: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  rowStride: number;
  numSeqs: number;
  maxBlocksPerSeq: number;
  blockSize: number;
  numSlots: number;
}

export function pagedAttentionReference(
  qkv: Float32Array,
  tokenSeq: Uint32Array,
  tokenPos: Uint32Array,
  blockTables: Uint32Array,
  kCache: Float32Array,
  vCache: Float32Array,
  shape: PagedAttentionShape,
  scale = 1 / Math.sqrt(shape.headDim),
): Float32Array {
  const { numTokens, numHeads, numKvHeads, headDim: D, rowStride, maxBlocksPerSeq, blockSize } = shape;
  const out = new Float32Array(numTokens * numHeads * D);
  const group = numHeads / numKvHeads;
  for (let t = 0; t < numTokens; t++) {
    const ctx = tokenPos[t] + 1;
    const table = tokenSeq[t] * maxBlocksPerSeq;
    const base = (k: number) => (blockTables[table + Math.floor(k / blockSize)] * blockSize + (k % blockSize)) * numKvHeads;
    for (let h = 0; h < numHeads; h++) {
      const kvh = Math.floor(h / group);
      const scores = new Float64Array(ctx);
      let m = -Infinity;
      for (let k = 0; k < ctx; k++) {
        const ko = (base(k) + kvh) * D;
        let s = 0;
        for (let d = 0; d < D; d++) s += qkv[t * rowStride + h * D + d] * kCache[ko + d];
        scores[k] = s * scale;
        m = Math.max(m, scores[k]);
      }
      let l = 0;
      const acc = new Float64Array(D);
      for (let k = 0; k < ctx; k++) {
        const pk = Math.exp(scores[k] - m);
        l += pk;
        const vo = (base(k) + kvh) * D;
        for (let d = 0; d < D; d++) acc[d] += pk * vCache[vo + d];
      }
      for (let d = 0; d < D; d++) out[(t * numHeads + h) * D + d] = acc[d] / l;
    }
  }
  return out;
}

/** Keys one step's queries attend to, which only the step's positions tell (the prepared plan serves many). */
export interface PagedAttentionKeys {
  /** Query-key pairs per head: sum over the step's rows of (position + 1). */
  attended: number;
  /** KV slots read at least once: sum over the step's sequences of their context length. */
  distinct: number;
}

/**
 * q·k and p·v for every attended pair, 2·headDim flops each per query head; q, each distinct K and V row
 * (all kv heads), the rows' sequence and position read once, out written once. Not set by the prepare
 * function: the same plan runs steps of any context length.
 */
export function pagedAttentionCost(shape: PagedAttentionShape, keys: PagedAttentionKeys): DispatchCost {
  const { numTokens: T, numHeads: H, numKvHeads: KH, headDim: D } = shape;
  return { flops: 4 * H * D * keys.attended, bytes: 4 * (T * (2 * H * D + 2) + 2 * KH * D * keys.distinct) };
}

export async function preparePagedAttention(
  gpu: GpuContext,
  io: { qkv: Tensor; tokenSeq: Tensor; tokenPos: Tensor; blockTables: Tensor; kCache: Tensor; vCache: Tensor; out: Tensor },
  shape: PagedAttentionShape,
  options: { workgroupSize?: number; scale?: number; headCode?: HeadCode } = {},
): Promise<KernelDispatch> {
  const kernel = 'paged-attention';
  const { numTokens, numHeads, numKvHeads, headDim, rowStride, numSeqs, maxBlocksPerSeq, blockSize, numSlots } = shape;
  for (const [name, value] of Object.entries(shape)) expectPositiveInt(kernel, name, value);
  checkHeadDim(kernel, headDim);
  const headCode = options.headCode ?? defaultHeadCode(headDim);
  if (numHeads % numKvHeads !== 0) {
    throw new UnsupportedShapeError(`paged-attention: ${numHeads} query heads are not a multiple of ${numKvHeads} kv heads`);
  }
  if (rowStride % 4 !== 0) throw new UnsupportedShapeError(`paged-attention: qkv row stride ${rowStride} must be a multiple of 4`);
  const wg = options.workgroupSize ?? 64;
  expectWorkgroupSize(gpu, kernel, wg);
  expectTensor(gpu, kernel, 'qkv', io.qkv, [numTokens, rowStride]);
  expectTensor(gpu, kernel, 'tokenSeq', io.tokenSeq, [numTokens], 'u32');
  expectTensor(gpu, kernel, 'tokenPos', io.tokenPos, [numTokens], 'u32');
  expectTensor(gpu, kernel, 'blockTables', io.blockTables, [numSeqs, maxBlocksPerSeq], 'u32');
  expectTensor(gpu, kernel, 'kCache', io.kCache, [numSlots, numKvHeads, headDim]);
  expectTensor(gpu, kernel, 'vCache', io.vCache, [numSlots, numKvHeads, headDim]);
  expectTensor(gpu, kernel, 'out', io.out, [numTokens, numHeads * headDim]);
  return createDispatch(gpu, {
    label: `${kernel}[D=${headDim},${headCode}]`,
    code: [attentionHeadSource(kernel, headDim, headCode, { q: 'qkv', k: 'kCache', v: 'vCache', out: 'out' }), onlineSoftmax, source].join('\n'),
    constants: { WG: wg },
    resources: [io.qkv, io.tokenSeq, io.tokenPos, io.blockTables, io.kCache, io.vCache, io.out],
    params: packParams([
      ['u32', numTokens],
      ['u32', numHeads],
      ['u32', numKvHeads],
      ['u32', rowStride],
      ['u32', maxBlocksPerSeq],
      ['u32', blockSize],
      ['f32', options.scale ?? 1 / Math.sqrt(headDim)],
    ]),
    grid: linearGrid(gpu, kernel, Math.ceil((numTokens * numHeads) / wg)),
  });
}
