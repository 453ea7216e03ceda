// Check cases for the decoder-side kernels: KV-cache writes, paged attention, splice and sampling.

import type { GpuContext } from '../gpu/context';
import { kvWriteReference, prepareKvWrite, type KvWriteShape } from '../kernels/kv-write';
import type { HeadCode } from '../kernels/attention-head';
import { pagedAttentionReference, PagedAttentionSplit, preparePagedAttention, type PagedAttentionPlan } from '../kernels/paged-attention';
import { argmaxReference } from '../kernels/argmax';
import { packRowParams, prepareSample, ROW_PARAMS_BYTES, sampleReference, type SampleShape, type SamplingParams } from '../kernels/sample';
import { prepareSplice, spliceReference, type SpliceShape } from '../kernels/splice';
import { wgLabel, type CommonOptions, type KernelCase } from './cases';
import { EXACT } from './compare';
import { concat, runDispatch, withScratch } from './harness';
import { mulberry32, randomUniform } from './random';

/** Distinct random slots; optionally one out of range (skipped and flagged). */
export function kvWriteCase(
  shape: Pick<KvWriteShape, 'numTokens' | 'numKvHeads' | 'headDim' | 'numSlots'> & { numQHeads: number },
  o: CommonOptions & { badSlot?: boolean } = {},
): KernelCase {
  const { numTokens, numKvHeads, headDim, numSlots, numQHeads } = shape;
  const rowStride = (numQHeads + 2 * numKvHeads) * headDim;
  const full: KvWriteShape = {
    numTokens,
    numKvHeads,
    headDim,
    numSlots,
    rowStride,
    kOffset: numQHeads * headDim,
    vOffset: (numQHeads + numKvHeads) * headDim,
  };
  const seed = o.seed ?? 20;
  return {
    kernel: 'kv-write',
    label: `kv-write tokens=${numTokens} kvHeads=${numKvHeads} headDim=${headDim} slots=${numSlots}${o.badSlot ? ' +bad slot' : ''}${wgLabel(o)}`,
    tolerance: EXACT,
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const qkv = randomUniform(numTokens * rowStride, seed);
        const next = mulberry32(seed + 1);
        const order = [...Array(numSlots).keys()].sort(() => next() - 0.5);
        const slots = Uint32Array.from(order.slice(0, numTokens));
        if (o.badSlot) slots[numTokens - 1] = numSlots + 5;
        const kInit = randomUniform(numSlots * numKvHeads * headDim, seed + 2);
        const vInit = randomUniform(numSlots * numKvHeads * headDim, seed + 3);
        const io = {
          qkv: s.upload(qkv, [numTokens, rowStride], 'qkv'),
          slots: s.upload(slots, [numTokens], 'slots'),
          kCache: s.upload(kInit, [numSlots, numKvHeads, headDim], 'kCache'),
          vCache: s.upload(vInit, [numSlots, numKvHeads, headDim], 'vCache'),
          errors: s.zeros([2], 'u32', 'errors'),
        };
        const d = await prepareKvWrite(gpu, io, full, { workgroupSize: o.workgroupSize });
        const r = await runDispatch(gpu, d, async () => [
          await gpu.readF32(io.kCache),
          await gpu.readF32(io.vCache),
          await gpu.readU32(io.errors),
        ]);
        const want = kvWriteReference(qkv, slots, kInit, vInit, full);
        return { ...r, want: concat(want.k, want.v, o.badSlot ? [1, numSlots + 5] : [0, 0]) };
      }),
  };
}

/**
 * Several sequences with scattered (non-contiguous, shuffled) blocks, each contributing a chunk of
 * query tokens at the end of its context: `chunks[i] = [contextLength, newTokens]`.
 */
export function pagedAttentionCase(
  shape: { numHeads: number; numKvHeads: number; chunks: Array<[number, number]>; blockSize?: number; headDim?: number },
  o: CommonOptions & { headCode?: HeadCode; plan?: PagedAttentionPlan } = {},
): KernelCase {
  const { numHeads, numKvHeads, chunks } = shape;
  const blockSize = shape.blockSize ?? 16;
  const headDim = shape.headDim ?? 64;
  const seed = o.seed ?? 21;
  const rowStride = (numHeads + 2 * numKvHeads) * headDim;
  const numSeqs = chunks.length;
  const maxBlocksPerSeq = Math.max(...chunks.map(([ctx]) => Math.ceil(ctx / blockSize)));
  const numBlocks = chunks.reduce((a, [ctx]) => a + Math.ceil(ctx / blockSize), 0) + 3;
  const numSlots = numBlocks * blockSize;
  const numTokens = chunks.reduce((a, [, n]) => a + n, 0);
  const plan = o.plan ?? 'split';
  return {
    kernel: 'paged-attention',
    // The split plan (the case's default on every device) and the workgroup plan run two shaders each: the
    // runs of keys, then their combine.
    shaders:
      plan === 'stream'
        ? ['paged-attention']
        : plan === 'workgroup'
          ? ['paged-attention-split-workgroup', 'paged-attention-combine']
          : ['paged-attention-split', 'paged-attention-combine'],
    label: `paged-attention heads=${numHeads}/${numKvHeads} chunks=${chunks.map(([c, n]) => `${n}@${c}`).join(',')} block=${blockSize} headDim=${headDim}${o.plan ? ` ${o.plan}` : ''}${o.headCode ? ` ${o.headCode}` : ''}${wgLabel(o)}`,
    // Online softmax reorders the exp() sums; each exp() is accurate to a few ULP.
    tolerance: { atol: 2e-5, rtol: 2e-4 },
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const next = mulberry32(seed);
        const free = [...Array(numBlocks).keys()].sort(() => next() - 0.5);
        const blockTables = new Uint32Array(numSeqs * maxBlocksPerSeq);
        const tokenSeq = new Uint32Array(numTokens);
        const tokenPos = new Uint32Array(numTokens);
        let t = 0;
        chunks.forEach(([ctx, n], seq) => {
          for (let b = 0; b < Math.ceil(ctx / blockSize); b++) blockTables[seq * maxBlocksPerSeq + b] = free.pop()!;
          for (let i = 0; i < n; i++, t++) {
            tokenSeq[t] = seq;
            tokenPos[t] = ctx - n + i;
          }
        });
        const qkv = randomUniform(numTokens * rowStride, seed + 1, -2, 2);
        const kCache = randomUniform(numSlots * numKvHeads * headDim, seed + 2);
        const vCache = randomUniform(numSlots * numKvHeads * headDim, seed + 3);
        const full = { numTokens, numHeads, numKvHeads, headDim, rowStride, numSeqs, maxBlocksPerSeq, blockSize, numSlots };
        const io = {
          qkv: s.upload(qkv, [numTokens, rowStride], 'qkv'),
          tokenSeq: s.upload(tokenSeq, [numTokens], 'tokenSeq'),
          tokenPos: s.upload(tokenPos, [numTokens], 'tokenPos'),
          blockTables: s.upload(blockTables, [numSeqs, maxBlocksPerSeq], 'blockTables'),
          kCache: s.upload(kCache, [numSlots, numKvHeads, headDim], 'kCache'),
          vCache: s.upload(vCache, [numSlots, numKvHeads, headDim], 'vCache'),
          out: s.zeros([numTokens, numHeads * headDim], 'f32', 'out'),
        };
        const d = await preparePagedAttention(gpu, io, full, { workgroupSize: o.workgroupSize, headCode: o.headCode, plan });
        // As the language model does: dispatch only the runs of keys the longest row needs.
        if (d instanceof PagedAttentionSplit) d.setContext(Math.max(...chunks.map(([ctx]) => ctx)));
        const r = await runDispatch(gpu, d, async () => [await gpu.readF32(io.out)]);
        return { ...r, want: pagedAttentionReference(qkv, tokenSeq, tokenPos, blockTables, kCache, vCache, full) };
      }),
  };
}

export function spliceCase(shape: SpliceShape, o: CommonOptions & { badRow?: boolean; add?: boolean } = {}): KernelCase {
  const { numRows, dim, numDstRows } = shape;
  const numSrcRows = shape.numSrcRows ?? numRows;
  const seed = o.seed ?? 22;
  return {
    kernel: 'splice',
    label: `splice rows=${numRows}${shape.srcRowOffset ? ` from row ${shape.srcRowOffset} of ${numSrcRows}` : ''} into ${numDstRows} dim=${dim}${o.add ? ' (add)' : ''}${o.badRow ? ' +bad row' : ''}${wgLabel(o)}`,
    tolerance: EXACT,
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const src = randomUniform(numSrcRows * dim, seed);
        const dst = randomUniform(numDstRows * dim, seed + 1);
        const next = mulberry32(seed + 2);
        const rows = Uint32Array.from([...Array(numDstRows).keys()].sort(() => next() - 0.5).slice(0, numRows));
        if (o.badRow) rows[0] = numDstRows + 1;
        const io = {
          src: s.upload(src, [numSrcRows, dim], 'src'),
          rows: s.upload(rows, [numRows], 'rows'),
          dst: s.upload(dst, [numDstRows, dim], 'dst'),
          errors: s.zeros([2], 'u32', 'errors'),
        };
        const d = await prepareSplice(gpu, io, shape, { workgroupSize: o.workgroupSize, add: o.add });
        const r = await runDispatch(gpu, d, async () => [await gpu.readF32(io.dst), await gpu.readU32(io.errors)]);
        return { ...r, want: concat(spliceReference(src, rows, dst, shape, { add: o.add }), o.badRow ? [1, numDstRows + 1] : [0, 0]) };
      }),
  };
}

/** How sampleCase fills the logits: uniform in [-4, 4), 9 levels (ties at every threshold), or one value. */
type SampleLogitsKind = 'uniform' | 'levels' | 'equal';

export interface SampleCaseOptions extends CommonOptions {
  logits?: SampleLogitsKind;
  /** Candidate slots in workgroup memory (sample.wgsl CAP); small values force the multi-pass paths. */
  candidates?: number;
  /** Rows given an infinite logit: argmax marks them non-finite, and the sampler must keep the mark. */
  nonFiniteRows?: readonly number[];
}

function sampleLogits(kind: SampleLogitsKind, n: number, seed: number): Float32Array {
  if (kind === 'uniform') return randomUniform(n, seed, -4, 4);
  if (kind === 'equal') return new Float32Array(n).fill(0.75);
  const next = mulberry32(seed);
  return Float32Array.from({ length: n }, () => (Math.floor(next() * 9) - 4) * 0.5);
}

/**
 * The sampled ids must equal the reference's for the same seed (logits spread so no draw sits on an edge).
 * `params` is one set for every row, or one per row (a batched step mixes requests; temperature 0 rows
 * keep the greedy id that argmax wrote before).
 */
export function sampleCase(shape: SampleShape, params: SamplingParams | readonly SamplingParams[], o: SampleCaseOptions = {}): KernelCase {
  const seed = o.seed ?? 23;
  const rows = Array.isArray(params)
    ? (params as readonly SamplingParams[])
    : Array.from({ length: shape.rows }, () => params as SamplingParams);
  const first = rows[0];
  const mixed = Array.isArray(params) ? ' per-row' : '';
  const kind = o.logits ?? 'uniform';
  const extra = `${kind !== 'uniform' ? ` ${kind} logits` : ''}${o.candidates ? ` CAP=${o.candidates}` : ''}${o.nonFiniteRows ? ` non-finite rows ${o.nonFiniteRows.join(',')}` : ''}`;
  return {
    kernel: 'sample',
    label: `sample rows=${shape.rows} vocab=${shape.vocab} T=${first.temperature} topK=${first.topK} topP=${first.topP} seed=${first.seed}${mixed}${extra}${wgLabel(o)}`,
    tolerance: EXACT,
    execute: (gpu: GpuContext) =>
      withScratch(gpu, async (s) => {
        const logits = sampleLogits(kind, shape.rows * shape.vocab, seed);
        for (const r of o.nonFiniteRows ?? []) logits[r * shape.vocab + (shape.vocab >> 1)] = Infinity;
        const greedy = argmaxReference(logits, { rows: shape.rows, cols: shape.vocab });
        const io = {
          logits: s.upload(logits, [shape.rows, shape.vocab], 'logits'),
          rowParams: s.upload(new Uint32Array(packRowParams(rows)), [shape.rows, ROW_PARAMS_BYTES / 4], 'row-params'),
          out: s.upload(greedy, [shape.rows], 'out'),
        };
        const d = await prepareSample(gpu, io, shape, { workgroupSize: o.workgroupSize, candidates: o.candidates });
        const r = await runDispatch(gpu, d, async () => [await gpu.readU32(io.out)]);
        return { ...r, want: sampleReference(logits, shape, rows, greedy) };
      }),
  };
}
