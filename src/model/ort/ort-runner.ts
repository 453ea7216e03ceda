// ModelRunner on onnxruntime (the CPU backend): the checkpoint's embed_tokens and decoder_model_merged
// graphs (ort-decoder.ts). A step's sequences are grouped the way that costs least on a CPU: every sequence
// decoding one token runs in one batch, and each prefill chunk runs alone (padding a decode row to a
// prefill chunk's length would multiply its work). Sampling is sample.ts's reference, the same semantics as
// the GPU sampler, on the logits the decoder returns after logit-adjust-reference.ts's processors.
//
// The KvManager keeps the scheduler's block accounting (admission, the cache limit, preemption, prefix
// caching) as on the GPU; the K/V themselves are the decoder's own tensors (kv-rows.ts). The decode batch
// keeps its layout from step to step, so it is copied only when its rows change. A sequence that starts on
// cached prefix blocks gets their K/V from the sequence that computed them, or, once that one has left,
// from the copies its hashed blocks left behind (cached-blocks.ts):
//
//   step:    prefill A (alone)   decode [A]    prefill B on A's 4 cached blocks   decode [A B]   decode [A B]
//   K/V:     A: own rows         A: as is      B: A's rows 0-63 + its own         gathered       as is

import { BackendUnsupportedError, InternalError, KvCacheFullError } from '../../errors';
import { CachedBlocks } from './cached-blocks';
import { KvLayout, type KvRef, type KvRows, rowLength } from './kv-rows';
import { ScratchSequences } from '../runner/scratch-sequences';
import { argmaxReference, NON_FINITE_TOKEN } from '../../kernels/argmax-reference';
import { adjustLogitsReference } from '../../kernels/logit-adjust-reference';
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
import type { OrtDecoder, RowExtras } from './ort-decoder';
import { yieldToTasks } from './yield-to-tasks';

export interface OrtRunnerOptions {
  maxTokensPerStep: number;
  maxSeqs: number;
}

/** Where a sequence's K/V is, and its block table (kept to save its hashed blocks when it leaves). */
interface SeqKv {
  ref: KvRef;
  blocks: readonly number[];
}

export class OrtModelRunner implements ModelRunner {
  readonly limits: RunnerLimits;
  private readonly seqKv = new Map<number, SeqKv>();
  private readonly layout: KvLayout;
  private readonly cached: CachedBlocks;
  private readonly scratch: ScratchSequences;
  private step: StepStats = NO_STEP;

  constructor(
    readonly decoder: OrtDecoder,
    readonly kv: KvManager,
    options: OrtRunnerOptions,
  ) {
    this.scratch = new ScratchSequences(kv, (id) => this.seqKv.delete(id));
    this.layout = new KvLayout(decoder.ort, decoder.text);
    this.cached = new CachedBlocks(kv.pool);
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

  /** Bytes of K/V held now: the sequences' rows and the copies of cached blocks. */
  get kvBytes(): number {
    const rows = new Set<KvRows>();
    for (const s of this.seqKv.values()) rows.add(s.ref.rows);
    let n = this.cached.bytes;
    for (const r of rows) n += this.layout.bytes(r);
    return n;
  }

  async run(seqs: readonly RunnerSeq[], options: RunOptions = {}): Promise<RunResult> {
    if (options.timer) throw new BackendUnsupportedError('cpu', 'a profile (GPU dispatch timings)', "profile with device: 'webgpu'");
    this.release();
    // Before any await: a request cancelled meanwhile has its blocks freed (keep() then drops its K/V).
    const pasts = seqs.map((s) => this.pastOf(s));
    const T = seqs.reduce((a, s) => a + s.tokenIds.length, 0);
    const ids = new Uint32Array(T);
    let at = 0;
    for (const s of seqs) {
      ids.set(s.tokenIds, at);
      at += s.tokenIds.length;
    }
    const hidden = this.decoder.hidden;
    const embeds = await this.decoder.embed(ids);
    const rows: Float32Array[] = [];
    at = 0;
    for (const s of seqs) {
      const n = s.tokenIds.length;
      const mine = embeds.slice(at * hidden, (at + n) * hidden);
      for (const m of s.media ?? []) mine.set(m.data, m.offset * hidden);
      at += n;
      rows.push(mine);
    }
    const extras = seqs.map(extrasOf);
    const logits: Float32Array[] = new Array(seqs.length);
    const vocab = this.decoder.vocab;
    let runs = 0;
    let padded = 0;
    const decoding = seqs.map((s, i) => (s.tokenIds.length === 1 ? i : -1)).filter((i) => i >= 0);
    if (decoding.length > 0) {
      const { past, order } = this.decodeBatch(decoding.map((i) => pasts[i]!));
      const x = new Float32Array(order.length * hidden);
      for (const [r, k] of order.entries()) x.set(rows[decoding[k]!]!, r * hidden);
      const out = await this.decoder.forward(
        x,
        1,
        past,
        order.map((k) => extras[decoding[k]!]),
      );
      runs++;
      padded += order.length * (past.padded + 1);
      order.forEach((k, r) => {
        const i = decoding[k]!;
        logits[i] = out.logits.subarray(r * vocab, (r + 1) * vocab);
        this.keep(seqs[i]!.seqId, { rows: out.present, row: r });
      });
    }
    for (let i = 0; i < seqs.length; i++) {
      const n = seqs[i]!.tokenIds.length;
      if (n === 1) continue;
      const past = pasts[i] ? this.layout.gather([pasts[i]!]) : this.layout.empty(1);
      const out = await this.decoder.forward(rows[i]!, n, past, [extras[i]]);
      runs++;
      padded += n;
      logits[i] = out.logits;
      this.keep(seqs[i]!.seqId, { rows: out.present, row: 0 });
    }
    const sampling = seqs.map((s, i) => (s.sample ? i : -1)).filter((i) => i >= 0);
    const head = new Float32Array(sampling.length * vocab);
    for (const [r, i] of sampling.entries()) head.set(logits[i]!, r * vocab);
    adjustLogitsReference(
      head,
      vocab,
      sampling.map((i) => seqs[i]!.adjust),
    );
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
      encodeMs: 0,
    };
    await yieldToTasks();
    return { tokens: Array.from(picked, (id) => (id === NON_FINITE_TOKEN ? null : id)), ...(options.readLogits ? { logits: head } : {}) };
  }

  /**
   * The decode rows' past as one batch. When they are exactly the rows of the batch they decoded in last
   * step, that batch as it is (`order[r]`: which of `refs` is its row r); otherwise a new one, gathered.
   */
  private decodeBatch(refs: ReadonlyArray<KvRef | undefined>): { past: KvRows; order: number[] } {
    const first = refs[0]?.rows;
    if (first && first.pads.length === refs.length && refs.every((r) => r?.rows === first)) {
      const order = new Array<number>(refs.length).fill(-1);
      refs.forEach((r, k) => {
        order[r!.row] = k;
      });
      if (order.every((k) => k >= 0)) return { past: first, order };
    }
    const order = refs.map((_, k) => k);
    if (refs.every((r) => r === undefined)) return { past: this.layout.empty(refs.length), order };
    const empty = this.layout.empty(1);
    return { past: this.layout.gather(refs.map((r) => r ?? { rows: empty, row: 0 })), order };
  }

  /** Where `s`'s K/V so far is (undefined: it starts at 0), taking cached prefix blocks for a new sequence. */
  private pastOf(s: RunnerSeq): KvRef | undefined {
    const kept = this.seqKv.get(s.seqId);
    if (s.start === 0) {
      this.seqKv.delete(s.seqId);
      return undefined;
    }
    if (kept) {
      if (rowLength(kept.ref) !== s.start) {
        throw new InternalError(
          `the CPU backend holds ${rowLength(kept.ref)} tokens of K/V for sequence ${s.seqId}, which continues at ${s.start}`,
        );
      }
      return kept.ref;
    }
    return { rows: this.fromCachedBlocks(s.seqId, s.start), row: 0 };
  }

  /** A new sequence's first `start` tokens from the cached blocks the scheduler gave it. */
  private fromCachedBlocks(seqId: number, start: number): KvRows {
    const bs = this.kv.blockSize;
    const blocks = this.kv.blockTable(seqId);
    if (start % bs !== 0 || start / bs > blocks.length) {
      throw new InternalError(`sequence ${seqId} starts at ${start}, not on one of its ${blocks.length} blocks of ${bs} tokens`);
    }
    const pieces = [];
    for (let i = 0; i < start / bs; i++) {
      const b = blocks[i]!;
      const data = this.cached.get(b) ?? this.fromLiveSequence(b, i);
      if (!data)
        throw new InternalError(
          `sequence ${seqId} starts on cached block ${b} (its block ${i}), whose K/V the CPU backend no longer holds`,
        );
      pieces.push({ data, count: bs });
    }
    return this.layout.concat(pieces);
  }

  /** Block `b`'s K/V from a sequence that holds it as its block `index` and has computed it. */
  private fromLiveSequence(b: number, index: number): Float32Array[] | undefined {
    const bs = this.kv.blockSize;
    for (const s of this.seqKv.values()) {
      if (s.blocks[index] === b && rowLength(s.ref) >= (index + 1) * bs) return this.layout.slice(s.ref, index * bs, bs);
    }
    return undefined;
  }

  private keep(seqId: number, ref: KvRef): void {
    // A sequence the scheduler let go while the step ran keeps nothing.
    if (!this.kv.has(seqId)) {
      this.seqKv.delete(seqId);
      return;
    }
    this.seqKv.set(seqId, { ref, blocks: this.kv.blockTable(seqId) });
  }

  /**
   * Sequences the scheduler let go (finished, failed, preempted; or let go and taken back as a new
   * sequence) give their K/V back, after copying out the full blocks the pool keeps for prefix caching.
   */
  private release(): void {
    const bs = this.kv.blockSize;
    for (const [id, s] of this.seqKv) {
      if (this.kv.has(id) && this.kv.blockTable(id) === s.blocks) continue;
      const full = Math.floor(rowLength(s.ref) / bs);
      for (let i = 0; i < full && i < s.blocks.length; i++) {
        const b = s.blocks[i]!;
        const hash = b < this.kv.pool.numBlocks ? this.kv.pool.hashOf(b) : undefined;
        if (hash !== undefined && !this.cached.has(b)) this.cached.save(b, hash, this.layout.slice(s.ref, i * bs, bs));
      }
      this.seqKv.delete(id);
    }
    this.cached.prune();
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
    this.cached.clear();
    void this.decoder.session.release?.();
    void this.decoder.embedSession.release?.();
  }
}

/** A sequence's M-RoPE positions and DeepStack rows for the decoder (none for a Llama decoder's text). */
function extrasOf(s: RunnerSeq): RowExtras | undefined {
  const deepstack = (s.media ?? []).filter((m) => m.deepstack?.length).map((m) => ({ offset: m.offset, levels: m.deepstack! }));
  if (!s.ropePositions && deepstack.length === 0) return undefined;
  return { ...(s.ropePositions ? { ropePositions: s.ropePositions } : {}), ...(deepstack.length > 0 ? { deepstack } : {}) };
}

const greedyParams = { temperature: 0, topK: 0, topP: 1, seed: 0, step: 0 };
