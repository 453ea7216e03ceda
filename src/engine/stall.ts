// The engine's stall watchdog (the engine option stallTimeoutMs; off by default). While the engine has work
// (it is being created, or requests are in flight) it checks every few seconds whether anything got anywhere:
// a GPU operation finished (GpuContext.pending), a step ran, an encode or a prepare settled, a request moved.
// After stallTimeoutMs without any of that, everything waiting fails with EngineStalledError, whose message
// carries what the engine was waiting on, and the engine refuses further requests (it cannot be trusted to
// finish them). A promise that nothing will ever settle then ends as an error that says where it stuck,
// instead of a request or createEngine() that never returns.
//
// Its timer is an ordinary (ref'd) interval, and it runs only while there is work: a process whose event
// loop is otherwise empty (the state a hang leaves) stays up until the watchdog fires, and an idle engine
// keeps nothing alive.

import { EngineStalledError, InvalidMessageError } from '../errors';
import type { PendingGpuOp } from '../gpu/pending-ops';

/** Checks per timeout; the watchdog fires at most a quarter of the timeout late. */
const CHECKS_PER_TIMEOUT = 4;
const MAX_CHECK_MS = 5_000;

export interface StallSources {
  /** What the engine is doing, e.g. "serving requests" or "creating the engine (loading the language model)". */
  activity(): string;
  /** Whether there is work to watch (the watchdog stops when there is none). */
  busy(): boolean;
  /** Changes whenever anything progresses (compared as text). */
  progress(): string;
  /** What everything waits on now (JSON-able). */
  state(): unknown;
  /** Fail what the guards do not reach (requests in the serve loop). */
  onStall?(error: EngineStalledError): void;
}

export class StallWatch {
  private timer: ReturnType<typeof setInterval> | undefined;
  private last = '';
  private since = 0;
  private failure: EngineStalledError | undefined;
  private readonly waiters = new Set<(e: EngineStalledError) => void>();

  constructor(
    readonly timeoutMs: number,
    private readonly sources: StallSources,
  ) {}

  /** The error once the watchdog has fired (then the engine is done for). */
  get stalled(): EngineStalledError | undefined {
    return this.failure;
  }

  /** Work arrived: watch until there is none (idempotent). Throws the stall error once one happened. */
  poke(): void {
    if (this.failure) throw this.failure;
    if (this.timer) return;
    this.last = this.sources.progress();
    this.since = performance.now();
    const every = Math.max(10, Math.min(MAX_CHECK_MS, this.timeoutMs / CHECKS_PER_TIMEOUT));
    this.timer = setInterval(() => this.check(), every);
  }

  /** `p`, or the stall error if the watchdog fires first. */
  guard<T>(p: Promise<T>): Promise<T> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise<T>((resolve, reject) => {
      const onStall = (e: EngineStalledError) => reject(e);
      this.waiters.add(onStall);
      p.then(
        (v) => {
          this.waiters.delete(onStall);
          resolve(v);
        },
        (e: unknown) => {
          this.waiters.delete(onStall);
          reject(e);
        },
      );
    });
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  private check(): void {
    if (!this.sources.busy()) {
      this.stop();
      return;
    }
    const now = this.sources.progress();
    if (now !== this.last) {
      this.last = now;
      this.since = performance.now();
      return;
    }
    const stalledMs = performance.now() - this.since;
    if (stalledMs < this.timeoutMs) return;
    this.stop();
    this.fire(stalledMs);
  }

  /** Fail everything waiting now (exported for the engine's own use and tests; the timer calls it). */
  fire(stalledMs: number): EngineStalledError {
    let state: string;
    try {
      state = JSON.stringify(this.sources.state());
    } catch (e) {
      state = `(the state could not be read: ${(e as Error).message})`;
    }
    this.failure = new EngineStalledError(this.sources.activity(), stalledMs, state);
    for (const w of this.waiters) w(this.failure);
    this.waiters.clear();
    this.sources.onStall?.(this.failure);
    return this.failure;
  }
}

/** The GPU operations not answered yet, oldest first, as a stall report lists them. */
export function pendingGpuState(pending: { list(): PendingGpuOp[]; settled: number } | undefined): unknown {
  if (!pending) return 'no WebGPU device (the CPU backend, or none made yet)';
  return { pending: pending.list(), settled: pending.settled };
}

/** What a serving engine's watchdog reads. */
export interface ServingParts {
  /** Requests started (chat.completions.create) and not settled, in intake or in the loop. */
  activeRequests(): number;
  gpuPending(): { list(): PendingGpuOp[]; settled: number } | undefined;
  loop(): {
    state(): {
      phase: string;
      steps: number;
      requests: Array<{ id: number; computedTokens: number; outputTokens: number; media: string[] }>;
    };
  };
  media(): { state(): Record<string, unknown>; stats(): object };
  failAll(error: EngineStalledError): void;
}

/** The serving engine's stall sources: progress is any step, token, encode, prepare or GPU operation. */
export function servingSources(parts: ServingParts): StallSources {
  return {
    activity: () => 'serving requests',
    busy: () => parts.activeRequests() > 0,
    progress: () => {
      const loop = parts.loop().state();
      const requests = loop.requests.map((r) => `${r.id}:${r.computedTokens}:${r.outputTokens}:${r.media.join(',')}`).join(';');
      return `${parts.gpuPending()?.settled ?? '-'}|${loop.steps}|${requests}|${parts.activeRequests()}|${JSON.stringify(parts.media().stats())}`;
    },
    state: () => {
      const loop = parts.loop().state();
      return {
        requestsInFlight: parts.activeRequests(),
        requestsBeforeTheLoop: parts.activeRequests() - loop.requests.length,
        loop,
        encoder: parts.media().state(),
        gpu: pendingGpuState(parts.gpuPending()),
      };
    },
    onStall: (e) => parts.failAll(e),
  };
}

/**
 * Engine creation under the watchdog: `build` reports its phase and progress events; if neither they nor
 * the device's GPU operations move for timeoutMs, creation fails with EngineStalledError naming the phase and
 * the GPU operations pending (an engine that is built after all is destroyed). `gpuPending` is read at each
 * check: the device may be created part way (createEngine's device choice runs under the watch too).
 * `activity` names what is created ('creating the engine', or a media encoder's start).
 */
export async function createWatched<T extends { destroy(): void }, P>(
  timeoutMs: number,
  gpuPending: () => { list(): PendingGpuOp[]; settled: number } | undefined,
  onProgress: ((p: P) => void) | undefined,
  build: (onProgress: (p: P) => void, phase: (what: string) => void) => Promise<T>,
  activity = 'creating the engine',
): Promise<T> {
  if (!(timeoutMs > 0 && Number.isFinite(timeoutMs))) {
    throw new InvalidMessageError(`stallTimeoutMs must be a positive number of milliseconds, got ${timeoutMs}`);
  }
  let phase = 'starting';
  let events = 0;
  /** The last progress event and when it came (a download that stops names its file and bytes). */
  let last: { event: P; atMs: number } | undefined;
  const t0 = performance.now();
  const watch = new StallWatch(timeoutMs, {
    activity: () => `${activity} (${phase})`,
    busy: () => true,
    progress: () => `${phase}|${events}|${gpuPending()?.settled ?? '-'}`,
    state: () => ({
      phase,
      gpu: pendingGpuState(gpuPending()),
      ...(last ? { lastProgress: last.event, lastProgressAtMs: Math.round(last.atMs) } : {}),
    }),
  });
  watch.poke();
  const built = build(
    (p) => {
      events++;
      last = { event: p, atMs: performance.now() - t0 };
      onProgress?.(p);
    },
    (what) => (phase = what),
  );
  try {
    return await watch.guard(built);
  } catch (e) {
    if (e === watch.stalled)
      void built.then(
        (engine) => engine.destroy(),
        () => {},
      );
    throw e;
  } finally {
    watch.stop();
  }
}
