// Causal attention over a paged KV cache, for prefill chunks and decode steps (HF LlamaAttention, GQA).
//   qkv: [numTokens, rowStride] f32 (q heads first)   tokenSeq, tokenPos: [numTokens] u32
//   blockTables: [numSeqs, maxBlocksPerSeq] u32   kCache, vCache: [numSlots, numKvHeads, headDim] f32
//   out: [numTokens, numHeads * headDim] f32
// Any head_dim that is a multiple of 4 up to MAX_HEAD_DIM (SmolVLM 64, Idefics3-8B 128); the head code is
// generated for it (attention-head.ts) and prepended with lib/online-softmax.wgsl.
//
// Three plans; every step of a model uses the same one, so a row's result does not depend on the step it
// runs in (a decode row alone or beside a prefill chunk gives the same token):
//   split      the 'register' kernel variant's default. paged-attention-split.wgsl, then
//              paged-attention-combine.wgsl: a row's keys cut into at most MAX_SPLITS runs
//              (lib/paged-splits.wgsl), one invocation per (run, row, kv head, group of query heads), the
//              query heads of a kv head sharing each K/V load, then the runs merged. A decode step's few
//              rows fill the device and its cost no longer grows with the context on one core: on
//              SwiftShader a SmolVLM-256M decode step at position 1000 took 1.38x the step at 50 with the
//              stream plan (paged attention 30 -> 140 ms of it).
//   workgroup  the 'workgroup' variant's default (GPUs). paged-attention-split-workgroup.wgsl, then the
//              same combine: split's runs and partials, one workgroup per run instead of one invocation
//              (its lanes score KEYS keys at once, then fold them into each output vec4). On an H200 a
//              SmolVLM-256M decode step's attention at position 81 took 3.36 ms of a 6.55 ms step as split
//              and 0.90 ms of 4.09 ms as workgroup (docs/gpu.md).
//   stream     paged-attention.wgsl: one invocation per (row, query head) streams all the row's keys.

import source from '../../shaders/paged-attention.wgsl?raw';
import splitSource from '../../shaders/paged-attention-split.wgsl?raw';
import splitWorkgroupSource from '../../shaders/paged-attention-split-workgroup.wgsl?raw';
import combineSource from '../../shaders/paged-attention-combine.wgsl?raw';
import attendKeysSource from '../../shaders/lib/attend-keys-workgroup.wgsl?raw';
import onlineSoftmax from '../../shaders/lib/online-softmax.wgsl?raw';
import inputsSource from '../../shaders/lib/paged-attention-inputs.wgsl?raw';
import pagedKvSource from '../../shaders/lib/paged-kv.wgsl?raw';
import splitsSource from '../../shaders/lib/paged-splits.wgsl?raw';
import { UnsupportedShapeError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { attentionGroupSource, attentionHeadSource, checkHeadDim, defaultHeadCode, type HeadCode } from './attention-head';
import { DEFAULT_WORKGROUP_SIZE, expectPositiveInt, expectTensor, expectWorkgroupSize, linearGrid, wgslConstant } from './checks';
import { createDispatch, DispatchSequence, packParams, type Dispatch, type DispatchCost, type Grid, type KernelDispatch } from './dispatch';

export type PagedAttentionPlan = 'split' | 'workgroup' | 'stream';
export const PAGED_ATTENTION_PLANS: readonly PagedAttentionPlan[] = ['split', 'workgroup', 'stream'];

/** Most runs a row's keys are cut into by the split plan (lib/paged-splits.wgsl). */
const MAX_SPLITS = wgslConstant(splitsSource, 'MAX_SPLITS');
const MIN_SPLIT_KEYS = wgslConstant(splitsSource, 'MIN_SPLIT_KEYS');
/** Query heads one split invocation holds at most (each a Head of registers for q and for its accumulator). */
const MAX_GROUP_HEADS = 8;
/** Keys the workgroup plan scores at once: its workgroup size (default). */
const WORKGROUP_PLAN_KEYS = DEFAULT_WORKGROUP_SIZE;

/** Keys per run of a row with `ctx` keys (lib/paged-splits.wgsl split_keys). */
function splitKeys(ctx: number): number {
  return Math.max(MIN_SPLIT_KEYS, Math.ceil(ctx / (4 * MAX_SPLITS)) * 4);
}

/** Runs the split plan cuts a row of `ctx` keys into (lib/paged-splits.wgsl). */
function splitRuns(ctx: number): number {
  return Math.ceil(ctx / splitKeys(ctx));
}

/**
 * The split plan's two dispatches. The runs kernel's grid covers MAX_SPLITS runs of every row; a step whose
 * longest row has fewer runs dispatches only those (invocations past a row's runs would only return, and
 * on a CPU adapter each empty workgroup still costs a launch): setContext before encoding a step.
 */
export class PagedAttentionSplit extends DispatchSequence {
  constructor(
    private readonly runs: KernelDispatch,
    combine: KernelDispatch,
    onRelease: () => void,
    private readonly gridFor: (numRuns: number) => Grid,
    plan: 'split' | 'workgroup' = 'split',
  ) {
    super(`paged-attention:${plan}`, [runs, combine], onRelease);
  }

  /** Dispatch the runs of rows whose contexts are at most `maxCtx` keys (the step's longest row). */
  setContext(maxCtx: number): void {
    this.runs.setGrid(this.gridFor(Math.min(MAX_SPLITS, splitRuns(Math.max(1, maxCtx)))));
  }
}

/** Query heads per split invocation: the largest divisor of the heads per kv head up to MAX_GROUP_HEADS. */
export function groupHeads(numHeads: number, numKvHeads: number): number {
  const g = numHeads / numKvHeads;
  for (let d = Math.min(g, MAX_GROUP_HEADS); d > 1; d--) if (g % d === 0) return d;
  return 1;
}

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

export interface PagedAttentionOptions {
  /** Default: 'workgroup' on the device's 'workgroup' kernel variant (GPUs), else 'split' (see the header). */
  plan?: PagedAttentionPlan;
  /**
   * Invocations per workgroup of the main kernel (default 64 for stream and workgroup, where it is the keys
   * scored at once; 8 for split: a decode row's runs spread over several workgroups, so over every core).
   */
  workgroupSize?: number;
  scale?: number;
  headCode?: HeadCode;
  /**
   * split plan: the partials' scratch (pagedAttentionPartialShape), shared by the layers of a step since
   * they run one after another; the caller releases it. Default: the dispatch owns its own.
   */
  partial?: Tensor;
}

/** The split plan's partials for `numTokens` rows: [numTokens * numHeads * MAX_SPLITS * (1 + headDim / 4), 4] f32. */
export function pagedAttentionPartialShape(numTokens: number, numHeads: number, headDim: number): [number, number] {
  return [numTokens * numHeads * MAX_SPLITS * (1 + headDim / 4), 4];
}

export async function preparePagedAttention(
  gpu: GpuContext,
  io: { qkv: Tensor; tokenSeq: Tensor; tokenPos: Tensor; blockTables: Tensor; kCache: Tensor; vCache: Tensor; out: Tensor },
  shape: PagedAttentionShape,
  options: PagedAttentionOptions = {},
): Promise<Dispatch> {
  const kernel = 'paged-attention';
  const { numTokens, numHeads, numKvHeads, headDim, rowStride, numSeqs, maxBlocksPerSeq, blockSize, numSlots } = shape;
  for (const [name, value] of Object.entries(shape)) expectPositiveInt(kernel, name, value);
  checkHeadDim(kernel, headDim);
  const headCode = options.headCode ?? defaultHeadCode(headDim);
  if (numHeads % numKvHeads !== 0) {
    throw new UnsupportedShapeError(`paged-attention: ${numHeads} query heads are not a multiple of ${numKvHeads} kv heads`);
  }
  if (rowStride % 4 !== 0) throw new UnsupportedShapeError(`paged-attention: qkv row stride ${rowStride} must be a multiple of 4`);
  const plan = options.plan ?? (gpu.kernelVariant === 'workgroup' ? 'workgroup' : 'split');
  const wg = options.workgroupSize ?? (plan === 'split' ? 8 : plan === 'workgroup' ? WORKGROUP_PLAN_KEYS : DEFAULT_WORKGROUP_SIZE);
  expectWorkgroupSize(gpu, kernel, wg);
  expectTensor(gpu, kernel, 'qkv', io.qkv, [numTokens, rowStride]);
  expectTensor(gpu, kernel, 'tokenSeq', io.tokenSeq, [numTokens], 'u32');
  expectTensor(gpu, kernel, 'tokenPos', io.tokenPos, [numTokens], 'u32');
  expectTensor(gpu, kernel, 'blockTables', io.blockTables, [numSeqs, maxBlocksPerSeq], 'u32');
  expectTensor(gpu, kernel, 'kCache', io.kCache, [numSlots, numKvHeads, headDim]);
  expectTensor(gpu, kernel, 'vCache', io.vCache, [numSlots, numKvHeads, headDim]);
  expectTensor(gpu, kernel, 'out', io.out, [numTokens, numHeads * headDim]);
  // head_store writes `out` (stream plan); the split kernel writes partials through the group code instead.
  const head = attentionHeadSource(kernel, headDim, headCode, {
    q: 'qkv',
    k: 'kCache',
    v: 'vCache',
    out: plan === 'stream' ? 'out' : 'partial',
  });
  const scale = options.scale ?? 1 / Math.sqrt(headDim);
  // Both plans' Params: the shape, then one u32 of the plan's own (stream: padding; split: groupsPerKvHead).
  const params = (last: number) =>
    packParams([
      ['u32', numTokens],
      ['u32', numHeads],
      ['u32', numKvHeads],
      ['u32', rowStride],
      ['u32', maxBlocksPerSeq],
      ['u32', blockSize],
      ['f32', scale],
      ['u32', last],
    ]);
  if (plan === 'stream') {
    return createDispatch(gpu, {
      label: `${kernel}[D=${headDim},${headCode}]`,
      code: [head, onlineSoftmax, pagedKvSource, inputsSource, source].join('\n'),
      constants: { WG: wg },
      resources: [io.qkv, io.tokenSeq, io.tokenPos, io.blockTables, io.kCache, io.vCache, io.out],
      params: params(0),
      grid: linearGrid(gpu, kernel, Math.ceil((numTokens * numHeads) / wg)),
    });
  }
  const group = groupHeads(numHeads, numKvHeads);
  const groupsPerKvHead = numHeads / numKvHeads / group;
  // [numTokens, numHeads, MAX_SPLITS, 1 + D/4] vec4 (a view of the caller's when given: its first rows).
  const partialShape = pagedAttentionPartialShape(numTokens, numHeads, headDim);
  const own = options.partial ? undefined : gpu.createTensor(partialShape, 'f32', `${kernel}.partial`);
  if (options.partial && options.partial.shape[0] * options.partial.shape[1] < partialShape[0] * partialShape[1]) {
    throw new UnsupportedShapeError(
      `paged-attention: the partials scratch given holds ${options.partial.shape[0]} vec4s, this step needs ${partialShape[0]}`,
    );
  }
  const partial: Tensor = own ?? { ...options.partial!, shape: partialShape };
  const releaseOwn = () => {
    if (own) gpu.release(own);
  };
  const made: KernelDispatch[] = [];
  const rowsPerRun = numTokens * numKvHeads * groupsPerKvHead;
  // split: one invocation per (run, row); workgroup: one workgroup per (run, row).
  const gridFor = (numRuns: number) =>
    linearGrid(gpu, kernel, plan === 'workgroup' ? numRuns * rowsPerRun : Math.ceil((numRuns * rowsPerRun) / wg));
  const runsKernel: { label: string; code: string; constants: Record<string, number> } =
    plan === 'workgroup'
      ? {
          label: `${kernel}:workgroup[D=${headDim},G=${group}]`,
          code: [
            `const HEAD_VEC4: u32 = ${headDim / 4}u;`,
            `const GROUP: u32 = ${group}u;`,
            `const KEYS: u32 = ${wg}u;`,
            `const OUTS: u32 = ${Math.ceil((group * headDim) / 4 / wg)}u;`,
            onlineSoftmax,
            pagedKvSource,
            attendKeysSource,
            splitsSource,
            inputsSource,
            splitWorkgroupSource,
          ].join('\n'),
          constants: {},
        }
      : {
          label: `${kernel}[D=${headDim},${headCode},G=${group}]`,
          code: [
            head,
            attentionGroupSource(headDim, headCode, group, { k: 'kCache', v: 'vCache', partial: 'partial' }),
            onlineSoftmax,
            pagedKvSource,
            splitsSource,
            inputsSource,
            splitSource,
          ].join('\n'),
          constants: { WG: wg },
        };
  try {
    made.push(
      await createDispatch(gpu, {
        ...runsKernel,
        resources: [io.qkv, io.tokenSeq, io.tokenPos, io.blockTables, io.kCache, io.vCache, partial],
        params: params(groupsPerKvHead),
        grid: gridFor(MAX_SPLITS),
      }),
    );
    const combineWg = DEFAULT_WORKGROUP_SIZE;
    made.push(
      await createDispatch(gpu, {
        label: `${kernel}:combine`,
        code: [splitsSource, combineSource].join('\n'),
        constants: { WG: combineWg },
        resources: [io.tokenPos, partial, io.out],
        params: packParams([
          ['u32', numTokens],
          ['u32', numHeads],
          ['u32', headDim / 4],
          ['u32', 0],
        ]),
        grid: linearGrid(gpu, kernel, Math.ceil((numTokens * numHeads) / combineWg)),
        // out written once; the partials it reads depend on each step's contexts (a lower bound, as costs are).
        cost: { flops: 0, bytes: 4 * numTokens * numHeads * headDim },
      }),
    );
  } catch (e) {
    for (const d of made) d.release();
    releaseOwn();
    throw e;
  }
  return new PagedAttentionSplit(made[0], made[1], releaseOwn, gridFor, plan);
}
