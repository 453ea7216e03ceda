// What one language-model step takes and gives (LanguageModel.step): the rows of many sequences back to
// back, each with its sequence, position and KV slot; the rows whose logits give a next token; the media
// rows to splice.

import { InternalError } from '../../errors';
import type { LogitAdjust } from '../../kernels/logit-adjust';
import type { SamplingParams } from '../../kernels/sample';

export interface StepInput {
  /** [T] token ids (placeholder rows hold the image token id; splice overwrites their embeddings). */
  ids: Uint32Array;
  /** [T] which sequence (row of blockTables) each token belongs to. */
  tokenSeq: Uint32Array;
  /** [T] absolute position of each token in its sequence (its KV index: attention's causal length). */
  positions: Uint32Array;
  /**
   * [3, T] M-RoPE positions (rows t, h, w) when the decoder has M-RoPE (TextConfig.mrope); absent: every
   * row is `positions` (a text token's three positions are its index).
   */
  ropePositions?: Uint32Array;
  /** [T] KV-cache slot of each token. */
  slots: Uint32Array;
  /** [numSeqs * maxBlocksPerSeq] block tables, row-major, unused entries 0. */
  blockTables: Uint32Array;
  numSeqs: number;
  /** [R] rows whose logits give a next token, one per sampling sequence; empty when nothing samples. */
  headRows: Uint32Array;
  /** [R] sampling parameters per head row (temperature 0 = greedy). */
  sampling: readonly SamplingParams[];
  /** [R] logit processors per head row (penalties, a token mask), applied before argmax and sampling. */
  adjust?: ReadonlyArray<LogitAdjust | undefined>;
  /**
   * Media embeddings for placeholder rows: row rows[i] takes row i of `data` ([rows.length, hidden] f32).
   * `deepstack` (TextConfig.deepstackLayers levels, each [rows.length, hidden]): level l's rows are added
   * to those rows after decoder layer l.
   */
  splice?: { rows: Uint32Array; data: Float32Array; deepstack?: readonly Float32Array[] };
}

export interface StepOutput {
  /** [R] next token per head row; NON_FINITE_TOKEN where the logits held a NaN or an infinity. */
  ids: Uint32Array;
  /** [R, vocab] when readLogits was asked for. */
  logits?: Float32Array;
}

/**
 * The [3, T] M-RoPE rows of a step padded to T rows: the input's own rows, or its KV positions in all
 * three (text tokens); pad rows take position 0.
 */
export function mropeRows(input: StepInput, T: number): Uint32Array {
  const n = input.ids.length;
  const out = new Uint32Array(3 * T);
  const given = input.ropePositions;
  if (given && given.length !== 3 * n) throw new InternalError(`step of ${n} tokens got ${given.length / 3} M-RoPE positions per axis`);
  for (let r = 0; r < 3; r++) out.set(given ? given.subarray(r * n, (r + 1) * n) : input.positions, r * T);
  return out;
}
