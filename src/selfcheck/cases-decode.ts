// Check cases for the fused decode kernels (decode-qkv, decode-attention-out, decode-gate-up, decode-head), each against the
// references of the kernels it fuses, applied in turn in float64. Their small operands sit at odd offsets
// inside shared consts and ints buffers, as the language model packs them.

import { decodeAttentionGroups, decodeAttentionOutReference, prepareDecodeAttentionOut } from '../kernels/decode-attention-out';
import { decodeGateUpReference, prepareDecodeGateUp, type DecodeGateUpShape } from '../kernels/decode-gate-up';
import { decodeHeadReference, prepareDecodeHead } from '../kernels/decode-head';
import { decodeQkvReference, prepareDecodeQkv, qkvWidth, type DecodeQkvShape } from '../kernels/decode-qkv';
import { ropeCosSinTable } from '../kernels/rope-tables';
import type { WeightFormat } from '../kernels/weight-format';
import { asStored, wgLabel, type CommonOptions, type KernelCase } from './cases';
import type { Tolerance } from './compare';
import { concat, runDispatch, withScratch } from './harness';
import { mulberry32, randomUniform } from './random';

export interface DecodeCaseOptions extends CommonOptions {
  format?: WeightFormat;
  /** Force the subgroup or the workgroup-memory reduction. */
  subgroups?: boolean;
}

const EPS = 1e-5;

/**
 * matmul's tolerance (atol grows with sqrt(K / 3), the RMS of a product of inputs uniform in [-1, 1]), on
 * normalised rows: RMSNorm makes x's RMS 1 instead of 1/sqrt(3), so sqrt(K) here.
 */
function decodeTolerance(K: number): Tolerance {
  return { atol: 2e-5 * Math.max(1, Math.sqrt(K)), rtol: 1e-4 };
}

function labelOf(kernel: string, shape: string, o: DecodeCaseOptions): string {
  const sub = o.subgroups === undefined ? '' : o.subgroups ? ' subgroups' : ' no-subgroups';
  return `${kernel} ${shape}${o.format && o.format !== 'f32' ? ` ${o.format}` : ''}${sub}${wgLabel(o)}`;
}

/**
 * Rows at positions spread over the table (one past its end: left unrotated), each writing a distinct slot
 * (one out of range: skipped), the bias optional, plain RoPE or M-RoPE.
 */
export function decodeQkvCase(
  shape: Omit<DecodeQkvShape, 'numSlots' | 'maxPositions'> & { bias?: boolean },
  o: DecodeCaseOptions & { badPosition?: boolean; badSlot?: boolean } = {},
): KernelCase {
  const { M, K, numHeads, numKvHeads, headDim } = shape;
  const full: DecodeQkvShape = { ...shape, maxPositions: 40, numSlots: 3 * M + 2 };
  const N = qkvWidth(full);
  const seed = o.seed ?? 31;
  const format = o.format ?? 'f32';
  const mrope = shape.mrope ? ` mrope ${shape.mrope.interleaved ? 'interleaved ' : ''}[${shape.mrope.section.join(',')}]` : '';
  return {
    kernel: 'decode-qkv',
    label: labelOf(
      'decode-qkv',
      `M=${M} K=${K} heads=${numHeads}/${numKvHeads}x${headDim}${shape.bias ? ' +bias' : ''}${mrope}${o.badPosition ? ' +bad position' : ''}${o.badSlot ? ' +bad slot' : ''}`,
      o,
    ),
    tolerance: decodeTolerance(K),
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const next = mulberry32(seed);
        const h = randomUniform(M * K, seed + 1, -3, 3);
        const ln = randomUniform(K, seed + 2);
        const w = randomUniform(N * K, seed + 3);
        const bias = shape.bias ? randomUniform(N, seed + 4) : undefined;
        const axes = shape.mrope ? 3 : 1;
        const positions = Uint32Array.from({ length: axes * M }, () => Math.floor(next() * full.maxPositions));
        if (o.badPosition) positions[axes * M - 1] = full.maxPositions;
        const slots = Uint32Array.from([...Array(full.numSlots).keys()].sort(() => next() - 0.5).slice(0, M));
        if (o.badSlot) slots[0] = full.numSlots + 3;
        const cosSin = ropeCosSinTable(10000, headDim, full.maxPositions);
        // consts: the table, then ln and the bias at offsets a vec4 read must not assume aligned.
        const lnOffset = cosSin.length + 3;
        const biasOffset = lnOffset + K + 1;
        const consts = new Float32Array(biasOffset + N);
        consts.set(cosSin);
        consts.set(ln, lnOffset);
        if (bias) consts.set(bias, biasOffset);
        // ints: positions in rows M + 2 apart, then the slots.
        const positionOffset = 5;
        const positionStride = M + 2;
        const slotOffset = positionOffset + 3 * positionStride;
        const ints = new Uint32Array(slotOffset + M);
        for (let r = 0; r < axes; r++) ints.set(positions.subarray(r * M, (r + 1) * M), positionOffset + r * positionStride);
        ints.set(slots, slotOffset);
        const cacheSize = full.numSlots * numKvHeads * headDim;
        const caches = { k: randomUniform(cacheSize, seed + 5), v: randomUniform(cacheSize, seed + 6) };
        const io = {
          x: s.upload(h, [M, K], 'h'),
          weight: s.weight(format, w, N, K, 'wqkv'),
          consts: s.upload(consts, [consts.length], 'consts'),
          ints: s.upload(ints, [ints.length], 'ints'),
          qkv: s.zeros([M, N], 'f32', 'qkv'),
          kCache: s.upload(caches.k, [full.numSlots, numKvHeads, headDim], 'kCache'),
          vCache: s.upload(caches.v, [full.numSlots, numKvHeads, headDim], 'vCache'),
        };
        const offsets = { ln: lnOffset, bias: bias ? biasOffset : undefined, positions: positionOffset, positionStride, slots: slotOffset };
        const d = await prepareDecodeQkv(gpu, io, full, offsets, { eps: EPS, workgroupSize: o.workgroupSize, subgroups: o.subgroups });
        const r = await runDispatch(gpu, d, async () => [
          await gpu.readF32(io.qkv),
          await gpu.readF32(io.kCache),
          await gpu.readF32(io.vCache),
        ]);
        const want = decodeQkvReference(h, ln, asStored(format, w, N, K), bias, positions, slots, cosSin, caches, full, EPS);
        return { ...r, want: concat(want.qkv, want.k, want.v) };
      }),
  };
}

/** h plus `parts` parts of the attention's output projection, then the MLP input; h' and act both checked. */
export function decodeGateUpCase(shape: DecodeGateUpShape, o: DecodeCaseOptions = {}): KernelCase {
  const { M, K, I, parts } = shape;
  const seed = o.seed ?? 37;
  const format = o.format ?? 'f32';
  return {
    kernel: 'decode-gate-up',
    label: labelOf('decode-gate-up', `M=${M} K=${K} I=${I} parts=${parts}`, o),
    tolerance: decodeTolerance(K),
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const h = randomUniform(M * K, seed, -3, 3);
        const part = randomUniform(M * parts * K, seed + 3);
        const ln = randomUniform(K, seed + 1);
        const w = randomUniform(2 * I * K, seed + 2);
        const lnOffset = 7;
        const consts = new Float32Array(lnOffset + K);
        consts.set(ln, lnOffset);
        const io = {
          x: s.upload(h, [M, K], 'h'),
          part: s.upload(part, [M, parts, K], 'part'),
          hOut: s.zeros([M, K], 'f32', 'hOut'),
          weight: s.weight(format, w, 2 * I, K, 'wgu'),
          consts: s.upload(consts, [consts.length], 'consts'),
          act: s.zeros([M, I], 'f32', 'act'),
        };
        const d = await prepareDecodeGateUp(gpu, io, shape, lnOffset, { eps: EPS, workgroupSize: o.workgroupSize, subgroups: o.subgroups });
        const r = await runDispatch(gpu, d, async () => [await gpu.readF32(io.act), await gpu.readF32(io.hOut)]);
        const want = decodeGateUpReference(h, part, ln, asStored(format, w, 2 * I, K), shape, EPS);
        return { ...r, want: concat(want.act, want.h) };
      }),
  };
}

/**
 * Decode rows of several sequences (one with two rows, as a chunk of a prefill) over scattered KV blocks:
 * each (row, group of query heads)'s attention times its columns of Wo.
 */
export function decodeAttentionOutCase(
  shape: { numHeads: number; numKvHeads: number; headDim: number; H: number; contexts: number[] },
  o: DecodeCaseOptions = {},
): KernelCase {
  const { numHeads, numKvHeads, headDim, H, contexts } = shape;
  const blockSize = 16;
  const seed = o.seed ?? 43;
  const format = o.format ?? 'f32';
  const rowStride = (numHeads + 2 * numKvHeads) * headDim;
  const numSeqs = contexts.length;
  const maxBlocksPerSeq = Math.max(...contexts.map((c) => Math.ceil(c / blockSize)));
  const numBlocks = contexts.reduce((a, c) => a + Math.ceil(c / blockSize), 0) + 2;
  const numSlots = numBlocks * blockSize;
  // Every sequence's last key as a row, and the first sequence's one before it too.
  const rows: Array<[seq: number, pos: number]> = [[0, contexts[0]! - 2], ...contexts.map((c, seq) => [seq, c - 1] as [number, number])];
  const numTokens = rows.length;
  const K = numHeads * headDim;
  return {
    kernel: 'decode-attention-out',
    label: labelOf('decode-attention-out', `heads=${numHeads}/${numKvHeads}x${headDim} H=${H} contexts=${contexts.join(',')}`, o),
    // Online softmax reorders the exp() sums (paged-attention's tolerance), then a product over K.
    tolerance: { atol: 2e-5 * Math.max(1, Math.sqrt(K)), rtol: 2e-4 },
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const next = mulberry32(seed);
        const free = [...Array(numBlocks).keys()].sort(() => next() - 0.5);
        const blockTables = new Uint32Array(numSeqs * maxBlocksPerSeq);
        contexts.forEach((c, seq) => {
          for (let b = 0; b < Math.ceil(c / blockSize); b++) blockTables[seq * maxBlocksPerSeq + b] = free.pop()!;
        });
        const tokenSeq = Uint32Array.from(rows.map(([seq]) => seq));
        const tokenPos = Uint32Array.from(rows.map(([, pos]) => pos));
        // ints: the three at offsets the kernel must not assume.
        const offsets = { tokenSeq: 3, tokenPos: 3 + numTokens + 1, blockTables: 3 + 2 * numTokens + 5 };
        const ints = new Uint32Array(offsets.blockTables + blockTables.length);
        ints.set(tokenSeq, offsets.tokenSeq);
        ints.set(tokenPos, offsets.tokenPos);
        ints.set(blockTables, offsets.blockTables);
        const qkv = randomUniform(numTokens * rowStride, seed + 1, -2, 2);
        const kCache = randomUniform(numSlots * numKvHeads * headDim, seed + 2);
        const vCache = randomUniform(numSlots * numKvHeads * headDim, seed + 3);
        const wo = randomUniform(H * K, seed + 4);
        const full = { numTokens, numHeads, numKvHeads, headDim, rowStride, numSeqs, maxBlocksPerSeq, blockSize, numSlots, H };
        const groups = decodeAttentionGroups(numHeads, numKvHeads);
        const io = {
          qkv: s.upload(qkv, [numTokens, rowStride], 'qkv'),
          ints: s.upload(ints, [ints.length], 'ints'),
          kCache: s.upload(kCache, [numSlots, numKvHeads, headDim], 'kCache'),
          vCache: s.upload(vCache, [numSlots, numKvHeads, headDim], 'vCache'),
          weight: s.weight(format, wo, H, K, 'wo'),
          part: s.zeros([numTokens, groups, H], 'f32', 'part'),
        };
        const d = await prepareDecodeAttentionOut(gpu, io, full, offsets, { workgroupSize: o.workgroupSize });
        const r = await runDispatch(gpu, d, async () => [await gpu.readF32(io.part)]);
        return {
          ...r,
          want: decodeAttentionOutReference(qkv, tokenSeq, tokenPos, blockTables, kCache, vCache, asStored(format, wo, H, K), full),
        };
      }),
  };
}

/** Head rows picked out of numRows rows of h (in any order, one twice), optionally one part of the head's columns. */
export function decodeHeadCase(
  shape: { M: number; N: number; K: number; numRows: number },
  o: DecodeCaseOptions & { columns?: { offset: number; stride: number } } = {},
): KernelCase {
  const { M, N, K, numRows } = shape;
  const seed = o.seed ?? 41;
  const format = o.format ?? 'f32';
  const yc = o.columns ?? { offset: 0, stride: N };
  return {
    kernel: 'decode-head',
    label: labelOf('decode-head', `M=${M} N=${N} K=${K} rows of ${numRows}${o.columns ? ` columns ${yc.offset}+ of ${yc.stride}` : ''}`, o),
    tolerance: decodeTolerance(K),
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const next = mulberry32(seed);
        const h = randomUniform(numRows * K, seed + 1, -3, 3);
        const ln = randomUniform(K, seed + 2);
        const w = randomUniform(N * K, seed + 3);
        const rows = Uint32Array.from({ length: M }, (_, m) => (m === M - 1 && M > 1 ? 0 : Math.floor(next() * numRows)));
        const lnOffset = 9;
        const consts = new Float32Array(lnOffset + K);
        consts.set(ln, lnOffset);
        const rowsOffset = 3;
        const ints = new Uint32Array(rowsOffset + M);
        ints.set(rows, rowsOffset);
        const before = randomUniform(M * yc.stride, seed + 4);
        const io = {
          x: s.upload(h, [numRows, K], 'h'),
          weight: s.weight(format, w, N, K, 'wlm'),
          consts: s.upload(consts, [consts.length], 'consts'),
          ints: s.upload(ints, [ints.length], 'ints'),
          y: s.upload(before, [M, yc.stride], 'logits'),
        };
        const d = await prepareDecodeHead(
          gpu,
          io,
          shape,
          { ln: lnOffset, rows: rowsOffset },
          {
            eps: EPS,
            workgroupSize: o.workgroupSize,
            subgroups: o.subgroups,
            yColumns: o.columns,
          },
        );
        const r = await runDispatch(gpu, d, async () => [await gpu.readF32(io.y)]);
        const logits = decodeHeadReference(h, rows, ln, asStored(format, w, N, K), shape, EPS);
        // Columns outside this part keep what they held.
        const want = Float32Array.from(before);
        for (let m = 0; m < M; m++) want.set(logits.subarray(m * N, (m + 1) * N), m * yc.stride + yc.offset);
        return { ...r, want };
      }),
  };
}
