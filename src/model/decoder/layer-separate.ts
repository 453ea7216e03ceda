// A decoder layer and the head as a dispatch per kernel: the plan of prefill chunks, and of every step on
// CPU adapters, whose register kernels have no barriers.
//
//   x = rms1(h); qkv = x·Wqkvᵀ (+ b) [by parts of rows]; [q, k per-head RMSNorm]; rope(q, k); kv-write(k, v)
//   a = paged-attn(q, cache); h += a·Woᵀ; x = rms2(h); gu = x·Wguᵀ; act = swiglu(gu); h += act·Wdownᵀ
//   head: hl = h[headRows]; xl = rms(hl); logits = xl·Wlmᵀ [by parts of rows]

import type { Dispatch } from '../../kernels/dispatch';
import { prepareEmbeddingGather } from '../../kernels/embedding-gather';
import { prepareKvWrite } from '../../kernels/kv-write';
import { prepareMatmul } from '../../kernels/matmul';
import { preparePagedAttention, type PagedAttentionShape } from '../../kernels/paged-attention';
import { prepareQkNorm } from '../../kernels/qk-norm';
import { prepareRmsNorm } from '../../kernels/rms-norm';
import { prepareRope } from '../../kernels/rope';
import { prepareSwiglu } from '../../kernels/swiglu';
import type { DecoderParts, LayerSteps } from './decoder-parts';

export function separateLayer(p: DecoderParts, l: number, T: number, attentionShape: PagedAttentionShape): LayerSteps {
  const { gpu, weights, c, tensors } = p;
  const H = c.hiddenSize;
  const eps = c.rmsNormEps;
  const v = (name: string) => tensors.rows(name, T);
  const w = (name: string) => weights.get(`text.layers.${l}.${name}`);
  const m = (name: string) => weights.matrix(`text.layers.${l}.${name}`); // in the loaded dtype
  const steps = [
    ...layerInput(p, l, T),
    preparePagedAttention(
      gpu,
      {
        qkv: v('qkv'),
        tokenSeq: v('tokenSeq'),
        tokenPos: v('positions'),
        blockTables: tensors.get('blockTables'),
        kCache: p.kv.k[l],
        vCache: p.kv.v[l],
        out: v('attn'),
      },
      attentionShape,
      { partial: tensors.get('attnPartial') },
    ),
    // The residual adds are the matmuls' epilogues: h += a·Woᵀ, h += act·Wdownᵀ.
    prepareMatmul(gpu, { x: v('attn'), weight: m('o'), y: v('h') }, { M: T, N: H, K: c.numHeads * c.headDim }, { accumulate: true }),
    prepareRmsNorm(gpu, { x: v('h'), weight: w('ln2'), y: v('x') }, { rows: T, dim: H }, { eps }),
    prepareMatmul(gpu, { x: v('x'), weight: m('gate_up'), y: v('gu') }, { M: T, N: 2 * c.intermediateSize, K: H }),
    prepareSwiglu(gpu, { x: v('gu'), y: v('act') }, { rows: T, dim: c.intermediateSize }),
    prepareMatmul(gpu, { x: v('act'), weight: m('down'), y: v('h') }, { M: T, N: H, K: c.intermediateSize }, { accumulate: true }),
  ];
  return { steps, attentionAt: steps.length - 6, hOut: 'h' };
}

/** A layer's attention input, a kernel each: RMSNorm, the q|k|v product(s), [q/k norms], RoPE, the KV write. */
function layerInput(p: DecoderParts, l: number, T: number): Array<Promise<Dispatch>> {
  const { gpu, weights, c, tensors, flags } = p;
  const H = c.hiddenSize;
  const eps = c.rmsNormEps;
  const numHeads = c.numHeads + 2 * c.numKvHeads;
  const qkvWidth = numHeads * c.headDim;
  const v = (name: string) => tensors.rows(name, T);
  const w = (name: string) => weights.get(`text.layers.${l}.${name}`);
  // qkv by parts of rows when its tensors are held in different formats (weights/row-split.ts): each
  // part's product writes its columns, with its share of the bias.
  const qkv = weights.rowParts(`text.layers.${l}.qkv`);
  const qkvBias = c.qkvBias ? w('qkv_b') : undefined;
  const steps: Array<Promise<Dispatch>> = [
    prepareRmsNorm(gpu, { x: v('h'), weight: w('ln1'), y: v('x') }, { rows: T, dim: H }, { eps }),
    ...qkv.map((part) =>
      prepareMatmul(
        gpu,
        {
          x: v('x'),
          weight: part.weight,
          bias: qkvBias && qkv.length > 1 ? { ...qkvBias, shape: [part.rows], offsetBytes: qkvBias.offsetBytes + part.first * 4 } : qkvBias,
          y: v('qkv'),
        },
        { M: T, N: part.rows, K: H },
        qkv.length > 1 ? { yColumns: { offset: part.first, stride: qkvWidth } } : {},
      ),
    ),
  ];
  const heads = { ...v('qkv'), shape: [T, numHeads, c.headDim] };
  if (c.qkNorm) {
    steps.push(
      prepareQkNorm(
        gpu,
        { x: heads, weight: { ...w('qk_norm'), shape: [2, c.headDim] } },
        { numTokens: T, numHeads, numQHeads: c.numHeads, numKHeads: c.numKvHeads, headDim: c.headDim },
        { eps },
      ),
    );
  }
  steps.push(
    prepareRope(
      gpu,
      {
        x: heads,
        positions: c.mrope ? tensors.ropePositions(T) : v('positions'),
        cosSin: tensors.get('rope'),
        errors: flags.of('rope'),
      },
      {
        numTokens: T,
        numHeads,
        headDim: c.headDim,
        maxPositions: c.maxPositions,
        rotaryHeads: c.numHeads + c.numKvHeads,
        mrope: c.mrope,
      },
    ),
    prepareKvWrite(
      gpu,
      { qkv: v('qkv'), slots: v('slots'), kCache: p.kv.k[l], vCache: p.kv.v[l], errors: flags.of('kv-write') },
      {
        numTokens: T,
        numKvHeads: c.numKvHeads,
        headDim: c.headDim,
        rowStride: qkvWidth,
        kOffset: c.numHeads * c.headDim,
        vOffset: (c.numHeads + c.numKvHeads) * c.headDim,
        numSlots: p.kv.numSlots,
      },
    ),
  );
  return steps;
}

/** The head up to the logits, a kernel each: the head rows' gather from `h` (T rows), RMSNorm, the LM head. */
export function separateHeadLogits(p: DecoderParts, T: number, R: number, h: string): Array<Promise<Dispatch>> {
  const { gpu, weights, c, tensors } = p;
  const H = c.hiddenSize;
  const head = weights.rowParts('text.lm_head');
  return [
    prepareEmbeddingGather(
      gpu,
      { ids: tensors.rows('headRows', R), table: tensors.rows(h, T), out: tensors.rows('hl', R), errors: p.flags.of('head-gather') },
      { numTokens: R, vocab: T, dim: H },
    ),
    prepareRmsNorm(
      gpu,
      { x: tensors.rows('hl', R), weight: weights.get('text.norm'), y: tensors.rows('xl', R) },
      { rows: R, dim: H },
      { eps: c.rmsNormEps },
    ),
    // By parts of rows when the head is larger than one binding: each part writes its logits' columns.
    ...head.map((part) =>
      prepareMatmul(
        gpu,
        { x: tensors.rows('xl', R), weight: part.weight, y: tensors.rows('logits', R) },
        { M: R, N: part.rows, K: H },
        head.length > 1 ? { yColumns: { offset: part.first, stride: c.vocabSize } } : {},
      ),
    ),
  ];
}
