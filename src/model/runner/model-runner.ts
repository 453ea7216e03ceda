// The layer between the scheduler (which rows run this step) and a model backend (how they run): one call
// per step. Callers name sequences by their id in the KV accounting and give their new tokens; the runner
// finds their KV slots and block tables, lays the rows out for its backend (padding to its row buckets),
// splices media rows, runs the step and hands back one token per sampling sequence.
//
//   scheduler / generate / profile      run([{ seqId 7, tokens @ 40..40, sample },
//                                            { seqId 9, tokens @ 0..5, media rows 3-4 }])
//   ModelRunner                         slots + block tables from kv, rows flattened and padded, one step
//   backend (GpuModelRunner: WebGPU)    tokens [t7] (null where the logits were not finite)
//
// A second backend (a CPU one, another tower's decoder) implements this interface beside GpuModelRunner;
// the engine, the warm-up, profiles, generate() and the accuracy tools see only this file.

import type { DispatchTiming, DispatchTimer, TimingMethod } from '../../kernels/dispatch-timer';
import type { LogitAdjust } from '../../kernels/logit-adjust-reference';
import type { SamplingParams } from '../../kernels/sample';
import type { KvManager } from '../../kv/kv-manager';
import type { TextConfig } from '../config';

export type { DispatchTiming, LogitAdjust, SamplingParams, TimingMethod };

/** Media embeddings for some rows of a sequence's tokens: row `offset + i` takes row i of `data` ([rows, hidden] f32). */
export interface MediaRows {
  /** Row of the sequence's new tokens (0-based) the segment starts at. */
  offset: number;
  data: Float32Array;
  /** DeepStack levels (TextConfig.deepstackLayers), each the same rows' [rows, hidden] additions. */
  deepstack?: readonly Float32Array[];
}

export interface RunnerSeq {
  /** The sequence's id in the runner's KV accounting; its blocks must hold start + tokenIds.length tokens. */
  seqId: number;
  /** The new tokens this step computes for the sequence. */
  tokenIds: Uint32Array;
  /** Position of tokenIds[0] in the sequence. */
  start: number;
  /**
   * [3, tokenIds.length] M-RoPE positions (rows t, h, w) of the new tokens, for a decoder with M-RoPE
   * (TextConfig.mrope). Absent: each token's index in all three rows (text before any media).
   */
  ropePositions?: Uint32Array;
  /** Present when the logits of the sequence's last row give its next token. */
  sample?: SamplingParams;
  /**
   * Logit processors for that row (penalties, a token mask), applied before argmax and sampling; the
   * logits readLogits returns are the processed ones.
   */
  adjust?: LogitAdjust;
  media?: readonly MediaRows[];
}

export interface RunOptions {
  /** Also return the logits of every sampling sequence's last row. */
  readLogits?: boolean;
  /** Time each dispatch on its own (profiles; from createTimer()). The results are the same. */
  timer?: DispatchTimer;
}

export interface RunResult {
  /** Next token of each sampling sequence, in the order they were given; null where its logits held a NaN or an infinity. */
  tokens: Array<number | null>;
  /** [sampling sequences, vocab] when readLogits was asked for (after each row's `adjust`). */
  logits?: Float32Array;
}

/** What the last step put on the device (the figures engine.stats() and the benchmarks report). */
export interface StepStats {
  numTokens: number;
  /** Rows after padding to the bucket. */
  numPaddedTokens: number;
  numHeadRows: number;
  numDispatches: number;
  numCommandBuffers: number;
  /** Host readbacks (ids + flags together; logits only when asked for). */
  numReadbacks: number;
  readbackBytes: number;
  /** JavaScript time to encode the step's dispatches into its command buffer, ms (0 where nothing is encoded). */
  encodeMs: number;
}

/** lastStep before the first step. */
export const NO_STEP: Readonly<StepStats> = {
  numTokens: 0,
  numPaddedTokens: 0,
  numHeadRows: 0,
  numDispatches: 0,
  numCommandBuffers: 0,
  numReadbacks: 0,
  readbackBytes: 0,
  encodeMs: 0,
};

export interface RunnerLimits {
  /** Most rows (new tokens over all sequences) in one step. */
  maxTokensPerStep: number;
  /** Most sequences in one step. */
  maxSeqs: number;
  /** Most tokens one sequence may reach: modelPositions or kvCacheTokens, whichever is less (whole blocks). */
  contextWindow: number;
  /** The model's own limit (max_position_embeddings). */
  modelPositions: number;
  /** Most tokens the KV cache may hold (over all sequences). */
  kvCacheTokens: number;
}

/** The warm-up steps, in the order they run (each compiles the kernels of one step shape). */
export type WarmUpStepName = 'prefill' | 'decode' | 'batch' | 'sampling';

export interface WarmUpProgress {
  /** The step starting, or 'done' at the end. */
  step: WarmUpStepName | 'done';
  done: number;
  total: number;
}

export interface WarmUpReport {
  /** Steps run (0 when the KV cache had no room for the scratch sequence). */
  numSteps: number;
  /** Pipelines the warm-up added to the device's pipeline cache. */
  numPipelinesCompiled: number;
  ms: number;
}

export interface ModelRunner {
  readonly text: TextConfig;
  /** The KV accounting the runner reads slots and block tables from (the scheduler allocates in it). */
  readonly kv: KvManager;
  readonly limits: RunnerLimits;
  readonly lastStep: StepStats;
  /** Run one step over `seqs` (in row order). Rejects with DeviceLostError when the device went away meanwhile. */
  run(seqs: readonly RunnerSeq[], options?: RunOptions): Promise<RunResult>;
  /** Compile what every request's steps need (prefill, decode, batched decode, sampling) on a scratch sequence. */
  warmUp(onProgress?: (p: WarmUpProgress) => void): Promise<WarmUpReport>;
  /**
   * Run `use` with a sequence id no request owns, its blocks holding `numTokens` tokens (it may allocate
   * more); the blocks are freed after, whatever happens. Throws KvCacheFullError when they do not fit.
   */
  withScratchSequence<T>(numTokens: number, use: (seqId: number) => Promise<T>): Promise<T>;
  /** A profile timer for this backend's steps (and its vision tower on the same device). */
  createTimer(method?: TimingMethod): DispatchTimer;
  destroy(): void;
}
