// ModelRunner on onnxruntime (the CPU backend): the checkpoint's embed_tokens and decoder_model_merged
// graphs (ort-decoder.ts). A step's sequences are grouped the way that costs least on a CPU: every sequence
// decoding one token runs in one batch, and each prefill chunk runs alone (padding a decode row to a
// prefill chunk's length would multiply its work). Sampling is sample.ts's reference, the same semantics as
// the GPU sampler, on the logits the decoder returns.
//
// The KvManager keeps the scheduler's block accounting (admission, the cache limit, preemption) as on the
// GPU; the K/V themselves are each sequence's own tensors here, so a sequence can only continue from where
// it stopped. Prefix caching (a sequence starting on blocks another one computed) needs the GPU's paged
// K/V: `sharesPrefixBlocks` is false and the engine turns it off.

import { BackendUnsupportedError, InternalError, KvCacheFullError } from '../../errors';
import { ScratchSequences } from '../runner/scratch-sequences';
import { argmaxReference, NON_FINITE_TOKEN } from '../../kernels/argmax-reference';
import { sampleReference } from '../../kernels/sample-reference';
import type { DispatchTimer, TimingMethod } from '../../kernels/dispatch-timer';
import type { KvManager } from '../../kv/kv-manager';
import type { TextConfig } from '../config';
import {
  NO_STEP,
  type ModelRunner,
  type RunnerLimits,
  type RunnerSeq,
  type RunOptions,
  type RunResult,
  type StepStats,
  type WarmUpProgress,
  type WarmUpReport,
} from '../runner/model-runner';
import type { DecoderRow, OrtDecoder, SeqKv } from './ort-decoder';

export interface OrtRunnerOptions {
  maxTokensPerStep: number;
  maxSeqs: number;
}

export class OrtModelRunner implements ModelRunner {
  readonly limits: RunnerLimits;
  /** Whether a sequence may start on K/V blocks another sequence computed (prefix caching): not here. */
  readonly sharesPrefixBlocks = false;
  private readonly seqKv = new Map<number, SeqKv>();
  private readonly scratch: ScratchSequences;
  private step: StepStats = NO_STEP;

  constructor(
    readonly decoder: OrtDecoder,
    readonly kv: KvManager,
    options: OrtRunnerOptions,
  ) {
    this.scratch = new ScratchSequences(kv, (id) => this.seqKv.delete(id));
    const text = decoder.text;
    const kvCacheTokens = kv.pool.maxBlocks * kv.blockSize;
    this.limits = {
      maxTokensPerStep: options.maxTokensPerStep,
      maxSeqs: options.maxSeqs,
      contextWindow: Math.min(text.maxPositions, Math.floor(kvCacheTokens / kv.blockSize) * kv.blockSize),
      modelPositions: text.maxPositions,
      kvCacheTokens,
    };
  }

  get text(): TextConfig {
    return this.decoder.text;
  }

  get lastStep(): StepStats {
    return this.step;
  }

  /** Bytes of K/V the sequences hold now. */
  get kvBytes(): number {
    let n = 0;
    for (const s of this.seqKv.values()) for (const t of s.tensors) n += (t.data as Float32Array).byteLength;
    return n;
  }

  async run(seqs: readonly RunnerSeq[], options: RunOptions = {}): Promise<RunResult> {
    if (options.timer) throw new BackendUnsupportedError('cpu', 'a profile (GPU dispatch timings)', "profile with device: 'webgpu'");
    // Sequences the scheduler let go (finished, failed, preempted) give their K/V back.
    for (const id of this.seqKv.keys()) if (!this.kv.has(id)) this.seqKv.delete(id);
    const T = seqs.reduce((a, s) => a + s.tokenIds.length, 0);
    const ids = new Uint32Array(T);
    let at = 0;
    for (const s of seqs) {
      ids.set(s.tokenIds, at);
      at += s.tokenIds.length;
    }
    const hidden = this.decoder.hidden;
    const embeds = await this.decoder.embed(ids);
    const rows: DecoderRow[] = [];
    at = 0;
    for (const s of seqs) {
      const n = s.tokenIds.length;
      const mine = embeds.slice(at * hidden, (at + n) * hidden);
      for (const m of s.media ?? []) mine.set(m.data, m.offset * hidden);
      at += n;
      if (s.start === 0) this.seqKv.delete(s.seqId);
      const past = this.seqKv.get(s.seqId);
      if ((past?.length ?? 0) !== s.start) {
        throw new InternalError(
          `the CPU backend holds ${past?.length ?? 0} tokens of K/V for sequence ${s.seqId}, which continues at ${s.start} (prefix caching is off on it)`,
        );
      }
      rows.push({ embeds: mine, n, past });
    }
    const logits: Float32Array[] = new Array(seqs.length);
    const decodeIdx = seqs.map((s, i) => (s.tokenIds.length === 1 ? i : -1)).filter((i) => i >= 0);
    let runs = 0;
    let padded = 0;
    if (decodeIdx.length > 0) {
      const outs = await this.decoder.runBatch(decodeIdx.map((i) => rows[i]!));
      runs++;
      padded += decodeIdx.length;
      decodeIdx.forEach((i, k) => {
        logits[i] = outs[k]!.logits;
        this.seqKv.set(seqs[i]!.seqId, outs[k]!.kv);
      });
    }
    for (let i = 0; i < seqs.length; i++) {
      if (seqs[i]!.tokenIds.length === 1) continue;
      const out = await this.decoder.runOne(rows[i]!);
      runs++;
      padded += rows[i]!.n;
      logits[i] = out.logits;
      this.seqKv.set(seqs[i]!.seqId, out.kv);
    }
    const sampling = seqs.map((s, i) => (s.sample ? i : -1)).filter((i) => i >= 0);
    const vocab = this.decoder.vocab;
    const head = new Float32Array(sampling.length * vocab);
    for (const [r, i] of sampling.entries()) head.set(logits[i]!, r * vocab);
    const greedy = argmaxReference(head, { rows: sampling.length, cols: vocab });
    const picked = sampleReference(
      head,
      { rows: sampling.length, vocab },
      sampling.map((i) => seqs[i]!.sample!),
      greedy,
    );
    this.step = {
      numTokens: T,
      numPaddedTokens: padded,
      numHeadRows: sampling.length,
      numDispatches: runs + 1,
      numCommandBuffers: 0,
      numReadbacks: 0,
      readbackBytes: 0,
    };
    return { tokens: Array.from(picked, (id) => (id === NON_FINITE_TOKEN ? null : id)), ...(options.readLogits ? { logits: head } : {}) };
  }

  async warmUp(onProgress?: (p: WarmUpProgress) => void): Promise<WarmUpReport> {
    // onnxruntime plans a graph on its first run; one prefill and one decode step on a scratch sequence
    // take that out of the first request's time.
    const t0 = performance.now();
    const steps = ['prefill', 'decode'] as const;
    let done = 0;
    const ran = await this.withScratchSequence(9, async (seqId) => {
      onProgress?.({ step: 'prefill', done, total: steps.length });
      await this.run([{ seqId, tokenIds: new Uint32Array(8), start: 0, sample: greedyParams }]);
      onProgress?.({ step: 'decode', done: ++done, total: steps.length });
      await this.run([{ seqId, tokenIds: new Uint32Array(1), start: 8, sample: greedyParams }]);
      done++;
      return steps.length;
    }).catch((e) => {
      if (e instanceof KvCacheFullError) return 0;
      throw e;
    });
    onProgress?.({ step: 'done', done, total: steps.length });
    return { numSteps: ran, numPipelinesCompiled: 0, ms: performance.now() - t0 };
  }

  withScratchSequence<T>(numTokens: number, use: (seqId: number) => Promise<T>): Promise<T> {
    return this.scratch.with(numTokens, use);
  }

  createTimer(_method?: TimingMethod): DispatchTimer {
    throw new BackendUnsupportedError('cpu', 'a profile (GPU dispatch timings)', "profile with device: 'webgpu'");
  }

  destroy(): void {
    this.seqKv.clear();
    void this.decoder.session.release?.();
    void this.decoder.embedSession.release?.();
  }
}

const greedyParams = { temperature: 0, topK: 0, topP: 1, seed: 0, step: 0 };
