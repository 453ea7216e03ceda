// The scheduler: which tokens of which requests one model step computes, and which media items start
// encoding. Integers only; no GPU, no embeddings (vLLM v1 `Scheduler`, nano-vllm `Scheduler`).
//
// One schedule() call plans one step under two budgets:
//   token budget    maxTokensPerStep rows: first every decoding sequence's next token, then the chunks of
//                   running sequences still prefilling, then newly admitted waiting requests (FCFS, at most
//                   maxRunning sequences), each chunk as long as the budget left allows;
//   encoder budget  embeddings being encoded at once: pending media items start encoding, in request order,
//                   while the embeddings in flight stay within it (items started in the same step reach
//                   the encoder together and are encoded as one batch). An item is encoded whole or not
//                   at all.
// Doorstep clamp (docs/design.md invariant 5): a chunk never covers placeholder tokens of a media item whose
// embeddings are not ready; it stops at the token before them and the request continues next step:
//
//   prompt:  t t t t [img 0: ready ......] t t [img 1: encoding ....] t t
//   chunk:   |---------- this step ----------|   <- stops at img 1's doorstep
//
// KV blocks are taken per step as sequences grow. When the pool runs dry, the most recently admitted
// running sequence is preempted (blocks freed, recomputed later: its full blocks usually come back from
// the prefix cache) and the others continue; no waiting request is admitted in a step that preempted.

import { ContextLengthError, InternalError, KvCacheTooSmallError } from '../errors';
import type { BlockHasher } from '../kv/block-hash';
import type { KvManager } from '../kv/kv-manager';
import { SchedRequest, type FinishCause, type SchedMediaItem, type SchedRequestInit } from './request';

export interface SchedulerConfig {
  /** Rows one step may compute (decode tokens + prefill chunks). */
  maxTokensPerStep: number;
  /** Embeddings that may be encoding at once. */
  encoderBudget: number;
  /** Sequences running (holding KV blocks) at once. */
  maxRunning: number;
  /** Most tokens (prompt + outputs) one sequence may reach. */
  contextWindow: number;
  /** What sets contextWindow (named in ContextLengthError). */
  contextLimits?: { modelPositions: number; kvCacheTokens: number };
}

interface ScheduledSeq {
  req: SchedRequest;
  /** First token this step computes (= req.numComputed when scheduled). */
  start: number;
  numTokens: number;
  /** The chunk ends at the request's last known token: its logits give the next token. */
  sample: boolean;
}

export interface MediaStart {
  req: SchedRequest;
  item: SchedMediaItem;
}

export interface SchedulerStep {
  /** Decoding sequences first, then prefill chunks, in the order their rows are laid out. */
  seqs: ScheduledSeq[];
  /** Media items to start encoding now (send them together: one encoder batch). */
  encode: MediaStart[];
  /** Requests preempted while planning this step (now waiting again, at the front). */
  preempted: SchedRequest[];
  numTokens: number;
  /** Chunks cut at a media item's doorstep this step. */
  numDoorstepStalls: number;
}

export interface StepUpdate {
  /** Tokens sampled this step, per request, in step order. */
  tokens: Array<{ req: SchedRequest; token: number }>;
  /** Requests that finished this step (stop token, max_tokens or the context window). */
  finished: SchedRequest[];
}

export interface SchedulerStats {
  numWaiting: number;
  numRunning: number;
  numSteps: number;
  numPreemptions: number;
  /** Prompt tokens looked up in the prefix cache at admission, and how many were found there. */
  prefixQueryTokens: number;
  prefixHitTokens: number;
  numDoorstepStalls: number;
  /** Embeddings currently being encoded. */
  encodingEmbeddings: number;
}

export class Scheduler {
  private readonly waiting: SchedRequest[] = [];
  private readonly running: SchedRequest[] = [];
  private readonly byId = new Map<number, SchedRequest>();
  private encodingEmbeddings = 0;
  private readonly counters = { numSteps: 0, numPreemptions: 0, prefixQueryTokens: 0, prefixHitTokens: 0, numDoorstepStalls: 0 };

  constructor(
    readonly config: SchedulerConfig,
    private readonly kv: KvManager,
    private readonly hasher: BlockHasher,
    /** Reuse cached KV blocks of earlier requests (false: every request computes its whole prompt). */
    readonly prefixCaching = true,
  ) {
    for (const k of ['maxTokensPerStep', 'encoderBudget', 'maxRunning', 'contextWindow'] as const) {
      const v = config[k];
      if (!Number.isInteger(v) || v < 1) throw new InternalError(`Scheduler: ${k} must be a positive integer, got ${v}`);
    }
  }

  /** Queue a request (WAITING). Throws, queueing nothing, when it could never fit the KV cache. */
  add(init: SchedRequestInit): SchedRequest {
    if (this.byId.has(init.id)) throw new InternalError(`Scheduler: request ${init.id} is already queued`);
    const req = new SchedRequest(init);
    const need = req.promptLength + req.maxTokens;
    if (need > this.config.contextWindow)
      throw new ContextLengthError(req.promptLength, req.maxTokens, this.config.contextWindow, this.config.contextLimits);
    // Reserve nothing, but refuse what the whole pool could never hold: with the others preempted, a
    // request that fits the pool always finishes.
    const capacity = this.kv.pool.maxBlocks * this.kv.blockSize;
    if (this.kv.blocksFor(need) > this.kv.pool.maxBlocks) {
      throw new KvCacheTooSmallError(req.promptLength, req.maxTokens, capacity);
    }
    req.extendBlockHashes(this.hasher, this.kv.blockSize);
    this.waiting.push(req);
    this.byId.set(req.id, req);
    return req;
  }

  get(id: number): SchedRequest | undefined {
    return this.byId.get(id);
  }

  hasWork(): boolean {
    return this.waiting.length + this.running.length > 0;
  }

  /** Plan one step. */
  schedule(): SchedulerStep {
    const step: SchedulerStep = { seqs: [], encode: [], preempted: [], numTokens: 0, numDoorstepStalls: 0 };
    const budget = { tokens: this.config.maxTokensPerStep };
    const decoding = this.running.filter((r) => r.numComputed >= r.promptLength && r.numTokens - r.numComputed === 1);
    const prefilling = this.running.filter((r) => !decoding.includes(r));
    for (const req of [...decoding, ...prefilling]) {
      if (budget.tokens === 0) break;
      if (req.status !== 'running') continue; // preempted earlier in this step
      const n = this.clamp(req, req.numComputed, Math.min(req.numTokens - req.numComputed, budget.tokens), step);
      if (n === 0) continue;
      if (!this.allocateOrPreempt(req, req.numComputed + n, step, budget)) continue;
      this.push(step, req, req.numComputed, n, budget);
    }
    if (step.preempted.length === 0) this.admit(step, budget);
    this.startEncodes(step);
    step.numTokens = step.seqs.reduce((a, s) => a + s.numTokens, 0);
    this.counters.numSteps++;
    this.counters.numDoorstepStalls += step.numDoorstepStalls;
    return step;
  }

  /** Admit waiting requests, first come first served, while the budget, the running cap and KV allow. */
  private admit(step: SchedulerStep, budget: { tokens: number }): void {
    for (let w = 0; w < this.waiting.length && budget.tokens > 0 && this.running.length < this.config.maxRunning; ) {
      const req = this.waiting[w];
      const prefix = this.cachedPrefix(req);
      const computed = prefix.length * this.kv.blockSize;
      const n = this.clamp(req, computed, Math.min(req.numTokens - computed, budget.tokens), step);
      if (n === 0) {
        w++; // waits at a doorstep with nothing before it: keep its place, let the next one in
        continue;
      }
      if (!this.kv.allocate(req.id, computed + n, prefix)) break;
      this.waiting.splice(w, 1);
      this.running.push(req);
      req.status = 'running';
      req.numComputed = computed;
      req.numCachedTokens = computed;
      this.counters.prefixQueryTokens += req.numTokens;
      this.counters.prefixHitTokens += computed;
      this.push(step, req, computed, n, budget);
    }
  }

  private push(step: SchedulerStep, req: SchedRequest, start: number, n: number, budget: { tokens: number }): void {
    step.seqs.push({ req, start, numTokens: n, sample: start + n === req.numTokens });
    budget.tokens -= n;
  }

  /** Tokens of [start, start + n) before the first media item that is not ready and overlaps them. */
  private clamp(req: SchedRequest, start: number, n: number, step: SchedulerStep): number {
    for (const m of req.media) {
      if (m.state === 'ready' || m.end <= start) continue;
      if (m.start >= start + n) break;
      step.numDoorstepStalls++;
      return Math.max(0, m.start - start);
    }
    return n;
  }

  private cachedPrefix(req: SchedRequest): number[] {
    return this.prefixCaching ? this.kv.cachedPrefix(req.blockHashes, req.numTokens) : [];
  }

  /** Allocate KV for `req` up to `numTotal` tokens, preempting the most recent sequences until it fits. */
  private allocateOrPreempt(req: SchedRequest, numTotal: number, step: SchedulerStep, budget: { tokens: number }): boolean {
    while (!this.kv.allocate(req.id, numTotal)) {
      const victim = this.running[this.running.length - 1];
      if (!victim) throw new InternalError(`Scheduler: request ${req.id} cannot allocate and nothing runs`);
      this.preempt(victim, step, budget);
      if (victim === req) return false;
    }
    return true;
  }

  private preempt(req: SchedRequest, step: SchedulerStep, budget: { tokens: number }): void {
    const i = step.seqs.findIndex((s) => s.req === req);
    if (i >= 0) budget.tokens += step.seqs.splice(i, 1)[0].numTokens;
    this.kv.free(req.id);
    this.running.splice(this.running.indexOf(req), 1);
    this.waiting.unshift(req);
    req.status = 'preempted';
    req.numComputed = 0;
    req.numPreemptions++;
    this.counters.numPreemptions++;
    step.preempted.push(req);
  }

  /** Start pending media items, running requests first then waiting ones, while the encoder budget allows. */
  private startEncodes(step: SchedulerStep): void {
    for (const req of [...this.running, ...this.waiting]) {
      const computed = req.status === 'running' ? req.numComputed : this.cachedPrefix(req).length * this.kv.blockSize;
      for (const item of req.media) {
        if (item.state !== 'pending' || item.end <= computed) continue; // ready, on its way, or already in the KV cache
        const fits = this.encodingEmbeddings + item.encodeCost <= this.config.encoderBudget;
        // An item larger than the whole budget still runs, alone.
        if (!fits && this.encodingEmbeddings > 0) return;
        item.state = 'encoding';
        this.encodingEmbeddings += item.encodeCost;
        step.encode.push({ req, item });
      }
    }
  }

  /** An encode started by schedule() settled (ok or not, whether or not its request is still alive). */
  encodeSettled(req: SchedRequest, item: SchedMediaItem, ok: boolean): void {
    this.encodingEmbeddings -= item.encodeCost;
    if (this.encodingEmbeddings < 0) throw new InternalError('Scheduler: more encodes settled than started');
    if (!req.isFinished) item.state = ok ? 'ready' : 'pending';
  }

  /** Mark a media item ready without an encode (its embeddings arrived from a cache). */
  mediaReady(_req: SchedRequest, item: SchedMediaItem): void {
    if (item.state === 'encoding') throw new InternalError('Scheduler: mediaReady on an item being encoded; use encodeSettled');
    item.state = 'ready';
  }

  /** Apply one step's results: the sampled token of every sequence that sampled (by request id). */
  update(step: SchedulerStep, sampled: ReadonlyMap<number, number>): StepUpdate {
    const out: StepUpdate = { tokens: [], finished: [] };
    for (const s of step.seqs) {
      const req = s.req;
      if (req.status !== 'running') continue; // finished (aborted) while the step ran
      if (req.numComputed !== s.start)
        throw new InternalError(`Scheduler: request ${req.id} moved from ${s.start} to ${req.numComputed} during its step`);
      req.numComputed += s.numTokens;
      // Register the blocks this step filled before anything can free them: a finished request's full
      // blocks stay cached for the next request with the same prefix.
      this.kv.commitFullBlocks(req.id, req.blockHashes, req.numComputed);
      if (!s.sample) continue;
      const token = sampled.get(req.id);
      if (token === undefined) throw new InternalError(`Scheduler: no sampled token for request ${req.id}`);
      req.outputIds.push(token);
      req.extendBlockHashes(this.hasher, this.kv.blockSize);
      out.tokens.push({ req, token });
      const cause = this.stopCause(req, token);
      if (cause) {
        this.finish(req, cause);
        out.finished.push(req);
      }
    }
    return out;
  }

  private stopCause(req: SchedRequest, token: number): FinishCause | undefined {
    if (req.stopIds.has(token)) return 'stop';
    if (req.outputIds.length >= req.maxTokens || req.numTokens >= this.config.contextWindow) return 'length';
    return undefined;
  }

  /** End a request in any state (abort, error, or a stop decided outside): its KV blocks are freed at once. */
  finish(req: SchedRequest, cause: FinishCause): void {
    if (req.isFinished) return;
    const q = req.status === 'running' ? this.running : this.waiting;
    const i = q.indexOf(req);
    if (i < 0) throw new InternalError(`Scheduler: request ${req.id} (${req.status}) is in no queue`);
    q.splice(i, 1);
    this.kv.free(req.id);
    this.byId.delete(req.id);
    req.status = 'finished';
    req.finishCause = cause;
  }

  stats(): SchedulerStats {
    return {
      numWaiting: this.waiting.length,
      numRunning: this.running.length,
      encodingEmbeddings: this.encodingEmbeddings,
      ...this.counters,
    };
  }
}
