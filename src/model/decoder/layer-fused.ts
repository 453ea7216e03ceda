// A decoder layer in 4 dispatches and the head's logits in one (docs/internals.md, "Decode plans"): the
// plan of decode steps (at most NARROW_MAX_ROWS rows) on GPUs.
//
//   decode-qkv:           rms1(h) · Wqkvᵀ (+ b), RoPE, the KV write
//   decode-attention-out: paged attention by groups of query heads, each group times its columns of Wo -> parts
//   decode-gate-up:       h' = h + Σ parts; act = swiglu(rms2(h') · Wguᵀ); h' into the other h buffer
//   down (gemv):          h' += act · Wdownᵀ
//   head:                 logits = rms(h[headRows]) · Wlmᵀ (decode-head)
//
// The layers read h from one buffer and leave it in the other (h, h2 by turns): each decode-gate-up
// workgroup reads the whole row and writes its share of h' (hAfter).

import { tensorSizeBytes } from '../../gpu/tensor';
import { decodeAttentionGroups, prepareDecodeAttentionOut } from '../../kernels/decode-attention-out';
import { prepareDecodeGateUp } from '../../kernels/decode-gate-up';
import { prepareDecodeHead } from '../../kernels/decode-head';
import { prepareDecodeQkv } from '../../kernels/decode-qkv';
import type { Dispatch } from '../../kernels/dispatch';
import { NARROW_MAX_ROWS, prepareMatmul } from '../../kernels/matmul';
import type { PagedAttentionShape } from '../../kernels/paged-attention';
import { isPacked } from '../../kernels/weight-format';
import type { TextConfig } from '../config';
import type { ModelWeights } from '../weights';
import type { DecoderParts, LayerSteps } from './decoder-parts';
import type { DecoderTensors } from './decoder-tensors';

/** The most rows a step of the fused plan has (larger steps, prefill chunks, run the separate plan). */
export const FUSED_MAX_ROWS = NARROW_MAX_ROWS;

/**
 * Whether the fused decode kernels can take this checkpoint: no q/k norms (they come between the
 * projection and RoPE), each layer's q|k|v, o and gate|up one weight (not parts of rows in different formats
 * or bindings), every operand they read as vec4 aligned for it, and the packed operands within one binding.
 */
export function fusable(c: TextConfig, weights: ModelWeights, tensors: DecoderTensors, maxBinding: number): boolean {
  if (c.qkNorm || c.hiddenSize % 4 !== 0 || c.headDim % 4 !== 0) return false;
  // The packed operands are bound whole (a long RoPE table can outgrow a small binding limit).
  if (tensorSizeBytes(tensors.consts.whole) > maxBinding || tensorSizeBytes(tensors.ints.whole) > maxBinding) return false;
  const aligned = (w: ReturnType<ModelWeights['matrix']>) => (isPacked(w) ? w.data.offsetBytes : w.offsetBytes) % 16 === 0;
  for (let l = 0; l < c.numLayers; l++) {
    for (const name of ['qkv', 'o', 'gate_up']) {
      const parts = weights.rowParts(`text.layers.${l}.${name}`);
      if (parts.length !== 1 || !aligned(parts[0]!.weight)) return false;
    }
  }
  return weights.rowParts('text.lm_head').every((part) => aligned(part.weight));
}

/** The fused plan's own buffers: the second h and the output projection's parts, [rows, groups, H]. */
export function makeFusedTensors(tensors: DecoderTensors, c: TextConfig, maxRows: number): void {
  const rows = Math.min(maxRows, FUSED_MAX_ROWS);
  tensors.make('h2', [rows, c.hiddenSize]);
  tensors.make('parts', [rows, decodeAttentionGroups(c.numHeads, c.numKvHeads), c.hiddenSize]);
}

/** The buffer of h after layer l (before the first layer, -1: 'h', where the embedding is). */
export function hAfter(l: number): 'h' | 'h2' {
  return l % 2 === 0 ? 'h2' : 'h';
}

export function fusedLayer(p: DecoderParts, l: number, T: number, attentionShape: PagedAttentionShape): LayerSteps {
  const { gpu, weights, c, tensors } = p;
  const H = c.hiddenSize;
  const v = (name: string) => tensors.rows(name, T);
  const hIn = hAfter(l - 1);
  const hOut = hAfter(l);
  // The output projection's parts for T rows: [T, groups, H].
  const parts = tensors.rows('parts', T);
  const options = fusedOptions(p);
  const steps = [
    layerInput(p, l, T),
    prepareDecodeAttentionOut(
      gpu,
      {
        qkv: v('qkv'),
        ints: tensors.ints.whole,
        kCache: p.kv.k[l],
        vCache: p.kv.v[l],
        weight: weights.matrix(`text.layers.${l}.o`),
        part: parts,
      },
      { ...attentionShape, H },
      {
        tokenSeq: tensors.ints.offsetOf('tokenSeq'),
        tokenPos: tensors.ints.offsetOf('positions'),
        blockTables: tensors.ints.offsetOf('blockTables'),
      },
      { workgroupSize: options.workgroupSize },
    ),
    prepareDecodeGateUp(
      gpu,
      {
        x: v(hIn),
        part: parts,
        hOut: v(hOut),
        weight: weights.matrix(`text.layers.${l}.gate_up`),
        consts: tensors.consts.whole,
        act: v('act'),
      },
      { M: T, K: H, I: c.intermediateSize, parts: parts.shape[1]! },
      tensors.consts.offsetOf(`ln2.${l}`),
      options,
    ),
    prepareMatmul(
      gpu,
      { x: v('act'), weight: weights.matrix(`text.layers.${l}.down`), y: v(hOut) },
      { M: T, N: H, K: c.intermediateSize },
      { accumulate: true },
    ),
  ];
  return { steps, attentionAt: 1, hOut };
}

/** A layer's attention input in one dispatch (decode-qkv.wgsl): RMSNorm, q|k|v (+ bias), RoPE, the KV write. */
function layerInput(p: DecoderParts, l: number, T: number): Promise<Dispatch> {
  const { c, tensors } = p;
  const { consts, ints } = tensors;
  return prepareDecodeQkv(
    p.gpu,
    {
      x: tensors.rows(hAfter(l - 1), T),
      weight: p.weights.matrix(`text.layers.${l}.qkv`),
      consts: consts.whole,
      ints: ints.whole,
      qkv: tensors.rows('qkv', T),
      kCache: p.kv.k[l],
      vCache: p.kv.v[l],
    },
    {
      M: T,
      K: c.hiddenSize,
      numHeads: c.numHeads,
      numKvHeads: c.numKvHeads,
      headDim: c.headDim,
      maxPositions: c.maxPositions,
      numSlots: p.kv.numSlots,
      mrope: c.mrope,
    },
    {
      ln: consts.offsetOf(`ln1.${l}`),
      bias: c.qkvBias ? consts.offsetOf(`qkv_b.${l}`) : undefined,
      positions: ints.offsetOf(c.mrope ? 'ropePositions' : 'positions'),
      // A step's M-RoPE rows are T apart (step-input.ts mropeRows).
      positionStride: T,
      slots: ints.offsetOf('slots'),
    },
    fusedOptions(p),
  );
}

/** The head up to the logits in one dispatch per part of the LM head's rows (decode-head.wgsl), reading `h` (T rows). */
export function fusedHeadLogits(p: DecoderParts, T: number, R: number, h: string): Array<Promise<Dispatch>> {
  const { c, tensors } = p;
  const head = p.weights.rowParts('text.lm_head');
  return head.map((part) =>
    prepareDecodeHead(
      p.gpu,
      { x: tensors.rows(h, T), weight: part.weight, consts: tensors.consts.whole, ints: tensors.ints.whole, y: tensors.rows('logits', R) },
      { M: R, N: part.rows, K: c.hiddenSize, numRows: T },
      { ln: tensors.consts.offsetOf('norm'), rows: tensors.ints.offsetOf('headRows') },
      { ...fusedOptions(p), ...(head.length > 1 ? { yColumns: { offset: part.first, stride: c.vocabSize } } : {}) },
    ),
  );
}

/**
 * The fused kernels' options: on a CPU adapter (where only a forced 'fused' plan runs them) workgroups of
 * 8, whose barriers SwiftShader passes at a fraction of the cost of 64's (an LM head of 49280 columns over
 * 192: 0.27 s against 2-2.8 s; the register kernel's 18-33 ms is why 'separate' is the default there).
 */
function fusedOptions(p: DecoderParts): { eps: number; workgroupSize?: number } {
  return { eps: p.c.rmsNormEps, ...(p.gpu.kernelVariant === 'register' ? { workgroupSize: 8 } : {}) };
}
