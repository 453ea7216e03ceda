// Bidirectional multi-head attention for the ViT with a key mask for padded patches (HF SiglipAttention).
//   qkv:  [batch * tokens, 3 * heads * headDim] f32, each row q | k | v
//   mask: [batch * tokens] u32 (1 = real patch, 0 = padding)
//   out:  [batch * tokens, heads * headDim] f32
// Any head_dim that is a multiple of 4 up to MAX_HEAD_DIM (SigLIP-base 64, so400m 72).
//
// Three plans, one chosen from the device's kernel variant like the matmuls:
//   tiled    vit-attention-tiled.wgsl: one workgroup per (image, head, block of queries) walks the keys in
//            tiles of K and V copied to workgroup memory, each invocation its query's online softmax; no
//            score matrix, no scratch, each key read once per block (GPUs: the 'workgroup' variant).
//   stream   vit-attention.wgsl: one invocation per (image, query, head) streams the keys with an online
//            softmax, no score matrix, no barrier. The head code is generated for head_dim
//            (attention-head.ts) and prepended with lib/online-softmax.wgsl.
//   matmuls  per image and block of heads: Q and K copied head-major (attention-split-heads.wgsl),
//            S = Q Kᵀ on the register matmul kernel (batched over heads,
//            batched-matmul.ts), a masked row softmax in place (attention-softmax.wgsl, with the image's
//            key mask as vec4s from attention-key-mask.wgsl), V transposed
//            (attention-transpose-v.wgsl), then out = P · V on the same matmul kernel. The scores live in
//            one reused scratch buffer of at most SCORES_BUDGET_BYTES (CPU adapters: the 'register'
//            variant, where the tuned matmul runs several times faster than the streaming kernel).

import source from '../../shaders/vit-attention.wgsl?raw';
import tiledSource from '../../shaders/vit-attention-tiled.wgsl?raw';
import inputsSource from '../../shaders/lib/vit-attention-inputs.wgsl?raw';
import softmaxSource from '../../shaders/attention-softmax.wgsl?raw';
import transposeSource from '../../shaders/attention-transpose-v.wgsl?raw';
import keyMaskSource from '../../shaders/attention-key-mask.wgsl?raw';
import splitHeadsSource from '../../shaders/attention-split-heads.wgsl?raw';
import onlineSoftmax from '../../shaders/lib/online-softmax.wgsl?raw';
import { UnsupportedShapeError } from '../errors';
import type { KernelVariant } from '../gpu/adapter-info';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { attentionHeadSource, checkHeadDim, defaultHeadCode, type HeadCode } from './attention-head';
import { prepareBatchedMatmul } from './batched-matmul';
import { DEFAULT_WORKGROUP_SIZE, expectPositiveInt, expectTensor, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, DispatchSequence, packParams, preparePiecewise, type Dispatch, type ParamField } from './dispatch';

export interface VitAttentionShape {
  batch: number;
  tokens: number;
  heads: number;
  headDim: number;
}

/** softmax over the unmasked keys in float64; a query with no unmasked key gets zeros. */
export function vitAttentionReference(
  qkv: Float32Array,
  mask: Uint32Array,
  shape: VitAttentionShape,
  scale = 1 / Math.sqrt(shape.headDim),
): Float32Array {
  const { batch, tokens: T, heads: H, headDim: D } = shape;
  const row = 3 * H * D;
  const out = new Float32Array(batch * T * H * D);
  const scores = new Float64Array(T);
  const acc = new Float64Array(D);
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < H; h++) {
      for (let t = 0; t < T; t++) {
        const qo = (b * T + t) * row + h * D;
        let m = -Infinity;
        for (let j = 0; j < T; j++) {
          if (!mask[b * T + j]) continue;
          const ko = (b * T + j) * row + H * D + h * D;
          let s = 0;
          for (let d = 0; d < D; d++) s += qkv[qo + d] * qkv[ko + d];
          scores[j] = s * scale;
          m = Math.max(m, scores[j]);
        }
        acc.fill(0);
        let l = 0;
        for (let j = 0; j < T; j++) {
          if (!mask[b * T + j]) continue;
          const pj = Math.exp(scores[j] - m);
          l += pj;
          const vo = (b * T + j) * row + 2 * H * D + h * D;
          for (let d = 0; d < D; d++) acc[d] += pj * qkv[vo + d];
        }
        const oo = (b * T + t) * H * D + h * D;
        for (let d = 0; d < D; d++) out[oo + d] = l > 0 ? acc[d] / l : 0;
      }
    }
  }
  return out;
}

export type VitAttentionPlan = 'tiled' | 'stream' | 'matmuls';
export const VIT_ATTENTION_PLANS: readonly VitAttentionPlan[] = ['tiled', 'stream', 'matmuls'];

/**
 * Most keys per tile of the 'tiled' plan: 64 on GPUs; 16 on CPU adapters, where (forced: their default is
 * 'matmuls') SwiftShader's compile time grows with the tiles: head_dim 64 took 1.1, 2.0, 2.2 and 8.2 s to
 * compile with tiles of 4, 8, 16 and 28 keys.
 */
const MAX_TILE_KEYS = { workgroup: 64, register: 16 } as const;

/** Most bytes the 'matmuls' plan's score block takes (heads are processed in blocks that fit). */
export const SCORES_BUDGET_BYTES = 64 * 1024 * 1024;

export interface VitAttentionOptions {
  /** Force a plan (tests and benchmarks cover each); default from the kernel variant. */
  plan?: VitAttentionPlan;
  variant?: KernelVariant;
  workgroupSize?: number;
  scale?: number;
  /** tiled plan: keys per tile (a multiple of 4; default the most the workgroup storage holds, up to 64). */
  tileKeys?: number;
  /** tiled and stream plans: how the head is held in registers. */
  headCode?: HeadCode;
  /** matmuls plan: cap on the score block's bytes (default SCORES_BUDGET_BYTES and the binding limit). */
  scoresBudgetBytes?: number;
  /**
   * matmuls plan: also prepare QKᵀ, the softmax and P·V in pieces of this many heads (0 = whole only),
   * for paced encoding: each becomes a PiecewiseDispatch (whole + pieces over the same buffers).
   */
  headsPerPiece?: number;
  /**
   * matmuls plan: the scratch to run in (from createVitAttentionScratch), shared by every attention of a
   * forward pass since they run one after another; the caller releases it. Default: the dispatch owns its
   * own, released with it.
   */
  scratch?: VitAttentionScratch;
}

/**
 * The 'matmuls' plan's scratch for one shape: the score block (heads x tokens x tokens, padded to vec4s),
 * Vᵀ and the head-major copies of Q and K of that many heads, and the key mask. One per forward pass: a
 * ViT's layers share it (12 layers each holding their own 57 MB block was most of the engine's memory).
 */
export interface VitAttentionScratch {
  tokens: number;
  headDim: number;
  /** Heads per score block. */
  heads: number;
  scores: Tensor;
  vt: Tensor;
  keyOk: Tensor;
  qk: Tensor;
}

/** The 'matmuls' plan's scratch tensors for one shape: heads per score block, then each tensor's shape. */
function scratchShapes(gpu: GpuContext, shape: VitAttentionShape, budgetBytes?: number) {
  const { tokens: T, headDim: D } = shape;
  const stride = Math.ceil(T / 4) * 4; // score rows and V columns padded to whole vec4s
  const block = headsPerScoreBlock(gpu, shape, budgetBytes);
  return { block, scores: [block * T, stride], vt: [block * D, stride], keyOk: [stride], qk: [2 * block * T, D] } as const;
}

export function createVitAttentionScratch(gpu: GpuContext, shape: VitAttentionShape, budgetBytes?: number): VitAttentionScratch {
  const s = scratchShapes(gpu, shape, budgetBytes);
  return {
    tokens: shape.tokens,
    headDim: shape.headDim,
    heads: s.block,
    scores: gpu.createTensor([...s.scores], 'f32', 'vit-attention.scores'),
    vt: gpu.createTensor([...s.vt], 'f32', 'vit-attention.vt'),
    keyOk: gpu.createTensor([...s.keyOk], 'f32', 'vit-attention.key-ok'),
    qk: gpu.createTensor([...s.qk], 'f32', 'vit-attention.qk'),
  };
}

/**
 * Global memory a plan's attention of this shape needs besides its inputs and output: the 'matmuls' plan's
 * scratch (createVitAttentionScratch); none for 'tiled' and 'stream'.
 */
export function vitAttentionScratchBytes(gpu: GpuContext, shape: VitAttentionShape, plan: VitAttentionPlan, budgetBytes?: number): number {
  if (plan !== 'matmuls') return 0;
  const s = scratchShapes(gpu, shape, budgetBytes);
  return 4 * [s.scores, s.vt, s.keyOk, s.qk].reduce((sum, dims) => sum + dims.reduce((a, b) => a * b, 1), 0);
}

export function releaseVitAttentionScratch(gpu: GpuContext, s: VitAttentionScratch): void {
  for (const t of [s.scores, s.vt, s.keyOk, s.qk]) gpu.release(t);
}

export function chooseVitAttentionPlan(gpu: GpuContext, options: VitAttentionOptions = {}): VitAttentionPlan {
  if (options.plan) return options.plan;
  return (options.variant ?? gpu.kernelVariant) === 'register' ? 'matmuls' : 'tiled';
}

/**
 * Keys per tile of the 'tiled' plan for head_dim D: the most (a multiple of 4, at most MAX_TILE_KEYS) whose
 * K and V tiles (4 D bytes a key each) and mask (4 bytes a key) fit the device's workgroup storage.
 */
export function vitAttentionTileKeys(gpu: GpuContext, headDim: number): number {
  const perKey = 2 * 4 * headDim + 4;
  return Math.min(MAX_TILE_KEYS[gpu.kernelVariant], Math.floor(gpu.limits.maxComputeWorkgroupStorageSize / perKey / 4) * 4);
}

export async function prepareVitAttention(
  gpu: GpuContext,
  io: { qkv: Tensor; mask: Tensor; out: Tensor },
  shape: VitAttentionShape,
  options: VitAttentionOptions = {},
): Promise<Dispatch> {
  const kernel = 'vit-attention';
  const { batch, tokens, heads, headDim } = shape;
  expectPositiveInt(kernel, 'batch', batch);
  expectPositiveInt(kernel, 'tokens', tokens);
  expectPositiveInt(kernel, 'heads', heads);
  checkHeadDim(kernel, headDim);
  const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
  expectWorkgroupSize(gpu, kernel, wg);
  expectTensor(gpu, kernel, 'qkv', io.qkv, [batch * tokens, 3 * heads * headDim]);
  expectTensor(gpu, kernel, 'mask', io.mask, [batch * tokens], 'u32');
  expectTensor(gpu, kernel, 'out', io.out, [batch * tokens, heads * headDim]);
  const scale = options.scale ?? 1 / Math.sqrt(headDim);
  if (chooseVitAttentionPlan(gpu, options) === 'matmuls') {
    const per = options.headsPerPiece ?? 0;
    if (!Number.isInteger(per) || per < 0)
      throw new UnsupportedShapeError(`${kernel}: headsPerPiece must be a non-negative integer, got ${per}`);
    return prepareAsMatmuls(gpu, io, shape, scale, wg, options.scratch ?? options.scoresBudgetBytes, per);
  }
  const headCode = options.headCode ?? defaultHeadCode(headDim);
  if (chooseVitAttentionPlan(gpu, options) === 'tiled')
    return prepareTiled(gpu, io, shape, { scale, wg, headCode, tileKeys: options.tileKeys });
  return createDispatch(gpu, {
    label: `${kernel}[D=${headDim},${headCode}]`,
    code: [
      attentionHeadSource(kernel, headDim, headCode, { q: 'qkv', k: 'qkv', v: 'qkv', out: 'out' }),
      onlineSoftmax,
      inputsSource,
      source,
    ].join('\n'),
    constants: { WG: wg },
    resources: [io.qkv, io.mask, io.out],
    params: oneDispatchParams(shape, scale),
    grid: linearGrid(gpu, kernel, Math.ceil((batch * tokens * heads) / wg)),
    // Every query against every key of its tile (masked ones too): q·k and p·v, 2·headDim flops each;
    // qkv and mask read once, out written once.
    cost: { flops: 4 * batch * heads * tokens * tokens * headDim, bytes: 4 * batch * tokens * (4 * heads * headDim + 1) },
  });
}

/** Params of lib/vit-attention-inputs.wgsl. */
function oneDispatchParams(shape: VitAttentionShape, scale: number): ArrayBuffer {
  return packParams([
    ['u32', shape.batch],
    ['u32', shape.tokens],
    ['u32', shape.heads],
    ['f32', scale],
  ]);
}

async function prepareTiled(
  gpu: GpuContext,
  io: { qkv: Tensor; mask: Tensor; out: Tensor },
  shape: VitAttentionShape,
  o: { scale: number; wg: number; headCode: HeadCode; tileKeys?: number },
): Promise<Dispatch> {
  const { batch, tokens, heads, headDim } = shape;
  const { wg, tileKeys = vitAttentionTileKeys(gpu, headDim) } = o;
  const storage = tileKeys * (2 * 4 * headDim + 4);
  if (!Number.isInteger(tileKeys) || tileKeys < 4 || tileKeys % 4 !== 0 || storage > gpu.limits.maxComputeWorkgroupStorageSize) {
    throw new UnsupportedShapeError(
      `vit-attention: the tiled plan needs tiles of a positive multiple of 4 keys within the device's ${gpu.limits.maxComputeWorkgroupStorageSize} bytes of workgroup storage; ` +
        `${tileKeys} keys of head_dim ${headDim} take ${storage} bytes. Use the 'stream' plan.`,
    );
  }
  const blocks = Math.ceil(tokens / wg);
  return createDispatch(gpu, {
    label: `vit-attention:tiled[D=${headDim},${o.headCode},KT=${tileKeys}]`,
    code: [
      `const KT: u32 = ${tileKeys}u;`,
      attentionHeadSource('vit-attention', headDim, o.headCode, { q: 'qkv', k: 'kTile', v: 'vTile', out: 'out' }),
      onlineSoftmax,
      inputsSource,
      tiledSource,
    ].join('\n'),
    constants: { WG: wg },
    resources: [io.qkv, io.mask, io.out],
    params: oneDispatchParams(shape, o.scale),
    grid: linearGrid(gpu, 'vit-attention', batch * heads * blocks),
    // Every query against every key (masked ones too): q·k and p·v, 2·headDim flops each; q and out once,
    // K and V once per block of queries.
    cost: {
      flops: 4 * batch * heads * tokens * tokens * headDim,
      bytes: 4 * batch * (tokens * (2 * heads * headDim + 1) + 2 * blocks * tokens * heads * headDim),
    },
  });
}

/** Heads per block of the 'matmuls' plan: as many as fit the score budget and the binding limit, at least 1. */
export function headsPerScoreBlock(gpu: GpuContext, shape: VitAttentionShape, budgetBytes = SCORES_BUDGET_BYTES): number {
  const stride = Math.ceil(shape.tokens / 4) * 4;
  const perHead = shape.tokens * stride * 4;
  const cap = Math.min(budgetBytes, gpu.limits.maxStorageBufferBindingSize);
  return Math.max(1, Math.min(shape.heads, Math.floor(cap / perHead)));
}

async function prepareAsMatmuls(
  gpu: GpuContext,
  io: { qkv: Tensor; mask: Tensor; out: Tensor },
  shape: VitAttentionShape,
  scale: number,
  wg: number,
  scratchOrBudget: VitAttentionScratch | number | undefined,
  headsPerPiece: number,
): Promise<Dispatch> {
  const { batch, tokens: T, heads: H, headDim: D } = shape;
  const stride = Math.ceil(T / 4) * 4; // score rows and V columns padded to whole vec4s
  const given = typeof scratchOrBudget === 'object' ? scratchOrBudget : undefined;
  if (given && (given.tokens !== T || given.headDim !== D)) {
    throw new UnsupportedShapeError(
      `vit-attention: the scratch given was made for ${given.tokens} tokens x head_dim ${given.headDim}, this attention has ${T} x ${D}`,
    );
  }
  const own = given ? undefined : createVitAttentionScratch(gpu, shape, scratchOrBudget as number | undefined);
  const { scores, vt, keyOk, qk } = given ?? own!;
  const block = Math.min(H, (given ?? own!).heads);
  const releaseOwn = () => {
    if (own) releaseVitAttentionScratch(gpu, own);
  };
  const row = 3 * H * D;
  const parts: Dispatch[] = [];
  // The plan's own small kernels: one element (a vec4 or a score row) per invocation, no arithmetic to speak of.
  const small = (label: string, code: string, resources: Tensor[], params: ParamField[], invocations: number, bytes: number) =>
    createDispatch(gpu, {
      label: `vit-attention:${label}`,
      code,
      constants: { WG: wg },
      resources,
      params: packParams(params),
      grid: linearGrid(gpu, 'vit-attention', Math.ceil(invocations / wg)),
      cost: { flops: 0, bytes },
    });
  try {
    for (let b = 0; b < batch; b++) {
      const qkvImage = b * T * row; // first element of image b's rows in qkv
      const keyMaskParams: ParamField[] = [
        ['u32', T],
        ['u32', stride / 4],
        ['u32', b * T],
      ];
      parts.push(await small('key-mask', keyMaskSource, [io.mask, keyOk], keyMaskParams, stride / 4, 4 * (T + stride)));
      const outImage = b * T * H * D; // first element of image b's rows in out
      for (let h0 = 0; h0 < H; h0 += block) {
        const n = Math.min(block, H - h0);
        // A step over heads h .. h + count - 1 of this block: whole, and in pieces of headsPerPiece heads when asked.
        const piecewise = (label: string, make: (h: number, count: number) => Promise<Dispatch>): Promise<Dispatch> => {
          const pieces: Array<() => Promise<Dispatch>> = [];
          if (headsPerPiece > 0) for (let h = 0; h < n; h += headsPerPiece) pieces.push(() => make(h, Math.min(headsPerPiece, n - h)));
          return preparePiecewise(label, () => make(0, n), pieces);
        };
        parts.push(
          await small(
            'transpose-v',
            transposeSource,
            [io.qkv, vt],
            [
              ['u32', n],
              ['u32', D],
              ['u32', T],
              ['u32', stride / 4],
              ['u32', row],
              ['u32', qkvImage + (2 * H + h0) * D],
            ],
            (n * D * stride) / 4,
            4 * n * D * (T + stride),
          ),
          await small(
            'split-heads',
            splitHeadsSource,
            [io.qkv, qk],
            [
              ['u32', n],
              ['u32', T],
              ['u32', D / 4],
              ['u32', row / 4],
              ['u32', (qkvImage + h0 * D) / 4],
              ['u32', (qkvImage + (H + h0) * D) / 4],
            ],
            (2 * n * T * D) / 4,
            2 * 2 * 4 * n * T * D,
          ),
          // S[h] = Q[h] K[h]ᵀ over the head-major copies.
          await piecewise('vit-attention:scores', (h, count) =>
            prepareBatchedMatmul(
              gpu,
              { a: qk, b: qk, c: scores },
              { batch: count, M: T, N: T, K: D },
              {
                a: { offset: h * T * D, stride: D, batch: T * D },
                b: { offset: (n + h) * T * D, stride: D, batch: T * D },
                c: { offset: h * T * stride, stride, batch: T * stride },
              },
              { label: 'vit-attention:scores', workgroupSize: wg },
            ),
          ),
          await piecewise('vit-attention:softmax', (h, count) =>
            small(
              'softmax',
              softmaxSource,
              [scores, keyOk],
              [
                ['u32', count * T],
                ['u32', stride / 4],
                ['f32', scale],
                ['u32', h * T],
              ],
              count * T,
              2 * 4 * count * T * stride,
            ),
          ),
          // out[:, h] = P[h] V[h]: P's rows against Vᵀ's rows, written into the heads' columns of out.
          await piecewise('vit-attention:pv', (h, count) =>
            prepareBatchedMatmul(
              gpu,
              { a: scores, b: vt, c: io.out },
              { batch: count, M: T, N: D, K: stride },
              {
                a: { offset: h * T * stride, stride, batch: T * stride },
                b: { offset: h * D * stride, stride, batch: D * stride },
                c: { offset: outImage + (h0 + h) * D, stride: H * D, batch: D },
              },
              { label: 'vit-attention:pv', workgroupSize: wg },
            ),
          ),
        );
      }
    }
  } catch (e) {
    for (const d of parts) d.release();
    releaseOwn();
    throw e;
  }
  return new DispatchSequence('vit-attention:matmuls', parts, releaseOwn);
}
