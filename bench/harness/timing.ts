// Wall-clock timing of one GPU run, repeated adaptively: one warm-up (pipeline compile, first-touch
// allocation), then timed reps until both a minimum count and a minimum total time are reached, capped
// at a maximum count. A run is "submit work, then wait until the queue reports it finished", so every
// figure includes submit and completion latency, which on SwiftShader is small next to the kernels.

export interface RepPolicy {
  /** At least this many timed reps. */
  minReps: number;
  /** Keep adding reps until the timed reps add up to this many milliseconds ... */
  minTotalMs: number;
  /** ... but never more than this many. */
  maxReps: number;
}

/** Our kernels on SwiftShader take 0.01-2 s a run. */
export const FAST_POLICY: RepPolicy = { minReps: 3, minTotalMs: 2000, maxReps: 50 };
/** Slow paths (workgroup plan on a CPU adapter, ORT): 2 reps is enough to see the spread. */
export const SLOW_POLICY: RepPolicy = { minReps: 2, minTotalMs: 2000, maxReps: 10 };

export interface Timing {
  /** Median of the timed reps, ms per run. */
  medianMs: number;
  minMs: number;
  maxMs: number;
  reps: number;
  /** The warm-up run, ms (includes pipeline compilation). */
  warmupMs: number;
}

/** One timed kernel or peer session. */
export interface Measured extends Timing {
  /** What ran: our dispatch label (e.g. 'matmul:register-wide') or the peer's op and EP. */
  label: string;
  /** GFLOP/s at the median (compute kernels). */
  gflops?: number;
  /** GB/s at the median, read + write bytes (bandwidth kernels). */
  gbps?: number;
  /** The peer's compute dispatches in one run: pipeline label [workgroups x,y,z] (peers only). */
  dispatches?: string[];
  /** Largest |output - float64 CPU reference| over the checked outputs (see BenchResult.checked). */
  maxAbsErr?: number;
}

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Time `run` (which must resolve only once its GPU work has finished). */
export async function timeRuns(run: () => Promise<void>, policy: RepPolicy): Promise<Timing> {
  let t0 = performance.now();
  await run();
  const warmupMs = performance.now() - t0;
  const samples: number[] = [];
  let totalMs = 0;
  while (samples.length < policy.maxReps && (samples.length < policy.minReps || totalMs < policy.minTotalMs)) {
    t0 = performance.now();
    await run();
    const ms = performance.now() - t0;
    samples.push(ms);
    totalMs += ms;
  }
  return {
    medianMs: median(samples),
    minMs: Math.min(...samples),
    maxMs: Math.max(...samples),
    reps: samples.length,
    warmupMs,
  };
}

export function gflops(flops: number, ms: number): number {
  return flops / (ms * 1e6);
}

export function gbPerSecond(bytes: number, ms: number): number {
  return bytes / (ms * 1e6);
}

/**
 * A transformers.js streamer that times each generated token: generate() calls put() once with the prompt,
 * then once per token. `times` holds performance.now() at each token; decode tokens/s is
 * (times.length - 1) / (last - first).
 */
export function tokenTimes(): { streamer: { put(): void; end(): void }; times: number[] } {
  const times: number[] = [];
  let puts = 0;
  return {
    times,
    streamer: {
      put() {
        if (puts++ > 0) times.push(performance.now());
      },
      end() {},
    },
  };
}
