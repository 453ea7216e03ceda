// The engine's one loop (nano-vllm `LLMEngine.step`, vLLM `EngineCore.step`):
//
//   while requests:  step = scheduler.schedule()          which rows, which encodes start (integers)
//                    start step.encode as one batch        (workers; settle later, wake the loop)
//                    runner.run(the step's sequences)      one command buffer, one readback
//                    scheduler.update(step, sampled ids)   outputs, stops, finished requests
//                    stream deltas, finish requests
//
// The loop sleeps when no row can run (every request waits for an encode) and wakes on a new request,
// a settled encode, or a cancellation. Failures stay with their request: a broken encode, a NaN row or a
// bad media item fails that request alone; only an error of the whole step (the GPU flagged an
// out-of-range index, or the device was lost) fails every request in that step.

import { DeviceLostError, NonFiniteLogitsError } from '../errors';
import { isComposite, type LifecycleCounters, type MediaEncoder } from '../encoder/media-encoder';
import type { ModelRunner, RunnerSeq } from '../model/runner/model-runner';
import type { MediaStart, Scheduler, SchedulerStep } from '../scheduler/scheduler';
import type { EngineRequest } from './engine-request';
import type { EncoderPacing } from './encoder-pacing';
import { chunkMediaRows } from './media-rows';
import { mropeChunk } from '../processor/mrope-positions';
import { tokenLogprobs, type TokenLogprobIds } from './logprobs';
import type { MediaInfo } from './types';

export interface ServeLoopDeps {
  scheduler: Scheduler;
  runner: ModelRunner;
  media: MediaEncoder;
  lifecycle: LifecycleCounters;
  /** An encode failed for `req`: retry, fall back or fail it (the engine's policy). */
  onEncodeFailure(req: EngineRequest, error: unknown): void;
  /** The device was lost during a step (every request in flight has been failed). */
  onDeviceLost(error: DeviceLostError): void;
}

export interface StepRecord {
  rows: number;
  seqs: number;
  ms: number;
}

/** How many recent steps the batch-size figures look at. */
const STEP_HISTORY = 512;

/** Where the loop is: what a stall report (src/engine/stall.ts) says it waits on. */
export type LoopPhase =
  | 'stopped'
  | 'scheduling'
  | 'running a model step'
  | 'granting the encoder time between steps'
  | 'asleep until an encode settles or a request arrives';

/** One request as the loop holds it, for a stall report. */
interface LoopRequestState {
  id: number;
  status: string;
  promptTokens: number;
  computedTokens: number;
  outputTokens: number;
  /** Its media items' states (pending, encoding, ready), in prompt order. */
  media: string[];
}

export interface LoopState {
  phase: LoopPhase;
  /** Milliseconds in this phase. */
  phaseMs: number;
  steps: number;
  requests: LoopRequestState[];
}

export class ServeLoop {
  private readonly requests = new Map<number, EngineRequest>();
  private running = false;
  private dirty = false;
  private wakeUp: (() => void) | undefined;
  private phase: LoopPhase = 'stopped';
  private phaseSince = performance.now();
  readonly history: StepRecord[] = [];
  /** Decode priority: when the encoder may run (undefined: always). */
  pacing: EncoderPacing | undefined;

  constructor(private readonly deps: ServeLoopDeps) {}

  get numRequests(): number {
    return this.requests.size;
  }

  /** Queue a planned request (its plan and media set). Throws, queueing nothing, if it can never fit. */
  submit(r: EngineRequest): void {
    const plan = r.plan!;
    const sched = this.deps.scheduler.add({
      id: r.id,
      promptIds: plan.tokenIds,
      maxTokens: r.maxTokens,
      stopIds: r.stopIds,
      media: r.media.map((m) => {
        const runs = m.placeholder.runs;
        const last = runs[runs.length - 1];
        // A pruned video encodes all its frames (parts) before EVS keeps numEmbeddings of their rows.
        const encodeCost = isComposite(m.prepared) ? m.prepared.parts.reduce((a, p) => a + p.numTokens, 0) : m.placeholder.length;
        return {
          key: m.prepared.key,
          start: runs[0].offset,
          end: last.offset + last.length,
          numEmbeddings: m.placeholder.length,
          encodeCost,
          ready: m.data !== undefined,
        };
      }),
    });
    r.sched = sched;
    this.requests.set(r.id, r);
    this.kick();
  }

  /** End a request now (cancelled or failed outside a step): blocks and cache references go at once. */
  drop(r: EngineRequest, error: unknown): void {
    if (r.sched && !r.sched.isFinished) this.deps.scheduler.finish(r.sched, 'abort');
    this.release(r);
    r.fail(error);
    this.kick();
  }

  /** Take a request out of the scheduler without settling it (it is re-planned and submitted again). */
  withdraw(r: EngineRequest): void {
    if (r.sched && !r.sched.isFinished) this.deps.scheduler.finish(r.sched, 'abort');
    this.requests.delete(r.id);
    r.sched = undefined;
  }

  /** Fail every request (device lost, engine destroyed). */
  failAll(error: unknown): void {
    for (const r of [...this.requests.values()]) this.drop(r, error);
  }

  /** What the loop is doing and holds now (a stall report's view). */
  state(): LoopState {
    return {
      phase: this.phase,
      phaseMs: Math.round(performance.now() - this.phaseSince),
      steps: this.deps.scheduler.stats().numSteps,
      requests: [...this.requests.values()].map((r) => {
        const q = r.sched;
        return {
          id: r.id,
          status: q ? q.status : 'not scheduled',
          promptTokens: q?.promptLength ?? 0,
          computedTokens: q?.numComputed ?? 0,
          outputTokens: q?.outputIds.length ?? 0,
          media: q ? q.media.map((m) => m.state) : [],
        };
      }),
    };
  }

  private enter(phase: LoopPhase): void {
    this.phase = phase;
    this.phaseSince = performance.now();
  }

  private kick(): void {
    this.dirty = true;
    const w = this.wakeUp;
    this.wakeUp = undefined;
    w?.();
    if (!this.running) void this.loop();
  }

  private async loop(): Promise<void> {
    this.running = true;
    try {
      while (this.deps.scheduler.hasWork()) {
        this.dirty = false;
        this.enter('scheduling');
        const step = this.deps.scheduler.schedule();
        // Decode priority protects requests that are producing tokens; a request whose prompt still waits
        // for its own image is not slowed by pacing that image's encode. Paced before the step's encodes
        // start: an encode started free submits its whole forward pass at once and cannot be paced after.
        const decoding = step.seqs.some((q) => q.start >= q.req.promptLength);
        this.pacing?.beforeStep(decoding);
        this.startEncodes(step.encode);
        if (step.seqs.length === 0) {
          this.pacing?.idle();
          this.enter('asleep until an encode settles or a request arrives');
          if (!this.dirty) await new Promise<void>((r) => (this.wakeUp = r));
          continue;
        }
        const t0 = performance.now();
        this.enter('running a model step');
        await this.runStep(step);
        const s = this.deps.scheduler.stats();
        this.enter('granting the encoder time between steps');
        await this.pacing?.afterStep(performance.now() - t0, decoding && s.numRunning > 0, s.encodingEmbeddings > 0);
      }
    } finally {
      this.running = false;
      this.enter('stopped');
      this.pacing?.idle();
    }
  }

  /** Start a step's encodes together: they reach the encoder as one batch. */
  private startEncodes(starts: readonly MediaStart[]): void {
    if (starts.length === 0) return;
    const items = starts.map((s) => {
      const r = this.requests.get(s.req.id)!;
      const m = r.mediaAt(s.item.start);
      if (r.timings.encodeStart === 0) r.timings.encodeStart = performance.now();
      return {
        r,
        m,
        s,
        job: { media: m.prepared, requestId: r.id, signal: r.request.signal, timeoutMs: r.request.tessera?.encodeTimeoutMs },
      };
    });
    const results = this.deps.media.encodeBatch(items.map((i) => i.job));
    items.forEach(({ r, m, s }, i) => {
      results[i].then(
        (e) => {
          this.deps.scheduler.encodeSettled(s.req, s.item, true);
          if (r.sched === s.req && !r.isSettled) {
            m.data = e.data;
            m.source = e.source;
            r.timings.encodeEnd = performance.now();
          }
          this.kick();
        },
        (error: unknown) => {
          this.deps.scheduler.encodeSettled(s.req, s.item, false);
          if (r.sched === s.req && !r.isSettled) this.deps.onEncodeFailure(r, error);
          this.kick();
        },
      );
    });
  }

  private async runStep(step: SchedulerStep): Promise<void> {
    const { runner, scheduler, lifecycle } = this.deps;
    const hidden = runner.text.hiddenSize;
    const t0 = performance.now();
    const seqs: RunnerSeq[] = [];
    const samplers: EngineRequest[] = [];
    for (const s of step.seqs) {
      const r = this.requests.get(s.req.id)!;
      const prompt = s.req.promptLength;
      const end = s.start + s.numTokens;
      if (r.timings.prefillStart === 0) r.timings.prefillStart = t0;
      if (s.start < prompt) r.timings.numPrefillChunks++;
      const media = s.start < prompt ? chunkMediaRows(r.media, s.start, Math.min(end, prompt), hidden) : undefined;
      for (const item of s.req.media) {
        // A media item is staged by the first step its placeholder overlaps, spliced by the step it ends in;
        // a step its placeholder does not overlap (every decode step) has nothing to mark.
        if (item.end <= s.start || item.start >= end) continue;
        const m = r.mediaAt(item.start);
        if (!r.staged.has(m)) {
          r.staged.add(m);
          lifecycle.staged++;
        }
        if (item.end <= end && !r.spliced.has(m)) {
          r.spliced.add(m);
          lifecycle.spliced++;
        }
      }
      seqs.push({
        seqId: s.req.id,
        tokenIds: s.req.tokens(s.start, s.numTokens),
        start: s.start,
        ...(r.plan?.mrope ? { ropePositions: mropeChunk(r.plan.mrope, s.start, s.numTokens) } : {}),
        sample: s.sample ? { ...(r.sampling ?? { temperature: 0, topK: 0, topP: 1, seed: 0 }), step: s.req.outputIds.length } : undefined,
        adjust: s.sample ? r.logitAdjust(runner.text.vocabSize) : undefined,
        media,
      });
      if (s.sample) samplers.push(r);
    }
    let tokens: Array<number | null>;
    let logits: Float32Array | undefined;
    try {
      // The processed logits come back only on steps where a request asked for log probabilities.
      ({ tokens, logits } = await runner.run(seqs, { readLogits: samplers.some((r) => r.logprobs !== undefined) }));
    } catch (e) {
      // The runner names a lost device for what it is (DeviceLostError), whatever the driver reported.
      for (const s of step.seqs) {
        const r = this.requests.get(s.req.id);
        if (r && !r.isSettled) this.drop(r, e);
      }
      if (e instanceof DeviceLostError) {
        this.failAll(e);
        this.deps.onDeviceLost(e);
      }
      return;
    }
    const sampled = new Map<number, number>();
    const logprobs = new Map<number, TokenLogprobIds>();
    const vocab = runner.text.vocabSize;
    samplers.forEach((r, i) => {
      if (r.isSettled) return; // cancelled while the step ran
      const token = tokens[i];
      if (token === null) {
        this.drop(r, new NonFiniteLogitsError(r.sched!.outputIds.length));
        return;
      }
      sampled.set(r.id, token);
      if (r.logprobs !== undefined && logits) {
        const row = logits.subarray(i * vocab, (i + 1) * vocab);
        logprobs.set(r.id, tokenLogprobs(row, token, r.sampling?.temperature ?? 0, r.logprobs));
      }
    });
    const update = scheduler.update(step, sampled);
    for (const { req, token } of update.tokens) {
      const r = this.requests.get(req.id)!;
      try {
        r.onToken(token, req.stopIds.has(token), logprobs.get(r.id));
      } catch (e) {
        // Its grammar refused the token (a bug, never the caller's input): that request fails alone.
        this.drop(r, e);
        continue;
      }
      // A stop string ends the request as a stop token would (its KV blocks freed now).
      if (r.stoppedByString && !req.isFinished) {
        scheduler.finish(req, 'stop');
        update.finished.push(req);
      }
    }
    for (const s of step.seqs) {
      const r = this.requests.get(s.req.id);
      // A request withdrawn and planned again while the step ran (a text-only or reduced retry) has a new
      // scheduler twin and new media: the step's marks belonged to the old ones.
      if (!r || r.isSettled || r.sched !== s.req) continue;
      for (const item of s.req.media) {
        const m = r.mediaAt(item.start);
        if (!r.prefilled.has(m) && s.req.numComputed >= item.end) {
          r.prefilled.add(m);
          lifecycle.prefilled++;
        }
      }
    }
    for (const req of update.finished) {
      const r = this.requests.get(req.id);
      if (!r || r.isSettled) continue;
      this.release(r);
      r.finish(req.finishCause!, mediaInfo(r));
    }
    this.history.push({ rows: step.numTokens, seqs: step.seqs.length, ms: performance.now() - t0 });
    if (this.history.length > STEP_HISTORY) this.history.shift();
  }

  /** Give back the request's cache references (idempotent: an intake still running may take more). */
  private release(r: EngineRequest): void {
    this.requests.delete(r.id);
    this.deps.media.release(r.id);
    if (r.released) return;
    r.released = true;
    this.deps.lifecycle.released += r.media.filter((m) => m.data !== undefined).length;
  }
}

function mediaInfo(r: EngineRequest): MediaInfo[] {
  // An item whose every placeholder the prefix cache held was never asked of the encoder (nor its cache).
  const cached = r.sched?.numCachedTokens ?? 0;
  return r.media.map((m) => ({
    key: m.prepared.key,
    source: m.source ?? (m.placeholder.offset + m.placeholder.length <= cached ? 'prefix-cache' : 'encoded'),
    numTiles: m.prepared.layout?.numTiles ?? 0,
    ...(m.prepared.grid ? { grid: { ...m.prepared.grid } } : {}),
    longestEdge: m.longestEdge,
    ...(m.video ? { video: m.video } : {}),
    ...(m.audio ? { audio: m.audio } : {}),
  }));
}
