// One model step for many sequences, laid out as the LanguageModel wants it (GpuModelRunner's layout):
// the sequences' new tokens back to back, each row knowing its sequence, position and KV slot; one head
// row per sequence that samples; media rows gathered into one block for the splice.
//
//   seqs:   A: decode 1 token @ pos 40        B: prefill 6 tokens @ pos 0..5 (rows 3-4 are image rows)
//   rows:   0:A40 | 1:B0 2:B1 3:B2 4:B3 5:B4 6:B5
//   head:   [0 (A), 6 (B: its chunk ends the prompt)]      splice rows: [3, 4]

import { InternalError } from '../../errors';
import type { StepInput } from '../decoder/step-input';
import type { LogitAdjust, MediaRows, SamplingParams } from './model-runner';

export interface BatchSeq {
  /** The new tokens this step computes for the sequence. */
  tokenIds: Uint32Array;
  /** Position of tokenIds[0] in the sequence. */
  start: number;
  /** KV slots of those tokens. */
  slots: Uint32Array;
  /** [3, tokenIds.length] M-RoPE positions (model-runner.ts RunnerSeq.ropePositions). */
  ropePositions?: Uint32Array;
  blockTable: readonly number[];
  /** Present when the logits of the sequence's last row give its next token. */
  sample?: SamplingParams;
  /** The sampling row's logit processors (with `sample` only). */
  adjust?: LogitAdjust;
  media?: readonly MediaRows[];
}

/** Flatten `seqs` (in row order) into one StepInput. Head rows come in the order of the sampling seqs. */
export function flattenBatch(seqs: readonly BatchSeq[], maxBlocksPerSeq: number, hiddenSize: number): StepInput {
  const T = seqs.reduce((a, s) => a + s.tokenIds.length, 0);
  const ids = new Uint32Array(T);
  const tokenSeq = new Uint32Array(T);
  const positions = new Uint32Array(T);
  // M-RoPE rows only when some sequence has its own; the others fill theirs with their indices.
  const mrope = seqs.some((s) => s.ropePositions) ? new Uint32Array(3 * T) : undefined;
  const slots = new Uint32Array(T);
  const blockTables = new Uint32Array(seqs.length * maxBlocksPerSeq);
  const headRows: number[] = [];
  const sampling: SamplingParams[] = [];
  const adjust: Array<LogitAdjust | undefined> = [];
  const spliceRows: number[] = [];
  const spliceData: Float32Array[] = [];
  const deepstackData: Float32Array[][] = [];
  let row = 0;
  seqs.forEach((s, i) => {
    const n = s.tokenIds.length;
    if (n < 1 || s.slots.length !== n) throw new InternalError(`batch: sequence ${i} has ${n} tokens and ${s.slots.length} slots`);
    if (s.blockTable.length > maxBlocksPerSeq)
      throw new InternalError(`batch: sequence ${i} holds ${s.blockTable.length} blocks, more than ${maxBlocksPerSeq}`);
    ids.set(s.tokenIds, row);
    tokenSeq.fill(i, row, row + n);
    for (let j = 0; j < n; j++) positions[row + j] = s.start + j;
    if (mrope) {
      if (s.ropePositions && s.ropePositions.length !== 3 * n)
        throw new InternalError(`batch: sequence ${i} has ${n} tokens and ${s.ropePositions.length / 3} M-RoPE positions per axis`);
      for (let r = 0; r < 3; r++) {
        if (s.ropePositions) mrope.set(s.ropePositions.subarray(r * n, (r + 1) * n), r * T + row);
        else mrope.set(positions.subarray(row, row + n), r * T + row);
      }
    }
    slots.set(s.slots, row);
    blockTables.set(s.blockTable, i * maxBlocksPerSeq);
    for (const m of s.media ?? []) {
      const k = m.data.length / hiddenSize;
      if (!Number.isInteger(k) || m.offset < 0 || m.offset + k > n) {
        throw new InternalError(`batch: sequence ${i} splices ${k} rows at ${m.offset} into a chunk of ${n}`);
      }
      for (let j = 0; j < k; j++) spliceRows.push(row + m.offset + j);
      spliceData.push(m.data);
      (m.deepstack ?? []).forEach((level, l) => {
        if (level.length !== m.data.length)
          throw new InternalError(`batch: sequence ${i}'s DeepStack level ${l} has ${level.length / hiddenSize} rows, not ${k}`);
        (deepstackData[l] ??= []).push(level);
      });
    }
    if (s.sample) {
      headRows.push(row + n - 1);
      sampling.push(s.sample);
      adjust.push(s.adjust);
    }
    row += n;
  });
  let splice: StepInput['splice'];
  if (spliceRows.length > 0) {
    const data = new Float32Array(spliceRows.length * hiddenSize);
    let o = 0;
    for (const d of spliceData) {
      data.set(d, o);
      o += d.length;
    }
    const join = (parts: Float32Array[]) => {
      const out = new Float32Array(spliceRows.length * hiddenSize);
      let at = 0;
      for (const x of parts) {
        out.set(x, at);
        at += x.length;
      }
      return out;
    };
    // Every media segment of the step must carry every level (or none): a level's rows follow the splice's.
    if (deepstackData.some((parts) => parts.length !== spliceData.length))
      throw new InternalError('batch: some media rows of this step have DeepStack levels and some do not');
    splice = { rows: Uint32Array.from(spliceRows), data, ...(deepstackData.length > 0 ? { deepstack: deepstackData.map(join) } : {}) };
  }
  return {
    ids,
    tokenSeq,
    positions,
    ...(mrope ? { ropePositions: mrope } : {}),
    slots,
    blockTables,
    numSeqs: seqs.length,
    headRows: Uint32Array.from(headRows),
    sampling,
    adjust,
    splice,
  };
}
