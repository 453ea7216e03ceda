// GPU time of each dispatch of a step, for profiles (engine.profile(), `tessera profile`). Two methods:
//
//   timestamp-query   the device has the feature: every dispatch gets a compute pass of its own with
//                     timestampWrites at its start and end; the step stays one submission and the query
//                     set is resolved and read back once. Implementations may quantize timestamps (Dawn in
//                     Node rounds them down to 2^16 ns = 65.5 us unless its toggle timestamp_quantization
//                     is off; headless Chromium 156 started as the benchmarks start it, with
//                     --enable-unsafe-webgpu, gave whole nanoseconds); the timer reports the step it sees.
//   submit-and-wait   otherwise: every dispatch is submitted alone and waited for (onSubmittedWorkDone) and
//                     timed on the CPU, so each time includes a submit and a wake-up (small kernels read high).
//
// Results are the same as a step's one pass: WebGPU orders the dispatches of a pass and the passes of a
// command buffer alike (each dispatch sees the writes of those before it). Only profiles come here; a
// normal step never builds a timer.

import { InternalError } from '../errors';
import type { GpuContext } from '../gpu/context';
import { BufferUsage } from '../gpu/flags';
import { leafDispatches, type Dispatch, type DispatchCost } from './dispatch';

export type TimingMethod = 'timestamp-query' | 'submit-and-wait';

export interface DispatchTiming {
  label: string;
  ms: number;
  cost: DispatchCost | undefined;
}

/** Dispatches timed per submission: two queries each, and a query set holds at most 4096 (WebGPU). */
const DISPATCHES_PER_QUERY_SET = 2048;

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a;
}

export class DispatchTimer {
  readonly method: TimingMethod;
  /** Every dispatch timed so far, in the order they ran. */
  readonly timings: DispatchTiming[] = [];
  private quantum = 0n;

  constructor(
    private readonly gpu: GpuContext,
    /** Default: timestamp-query when the device has it. */
    method?: TimingMethod,
  ) {
    const hasTimestamps = gpu.hasFeature('timestamp-query');
    if (method === 'timestamp-query' && !hasTimestamps) {
      throw new InternalError("DispatchTimer: 'timestamp-query' was asked for but the device was created without that feature");
    }
    this.method = method ?? (hasTimestamps ? 'timestamp-query' : 'submit-and-wait');
  }

  /** timestamp-query: the largest step every raw timestamp read so far is a multiple of, in ns (undefined before any). */
  get timestampQuantumNs(): number | undefined {
    return this.quantum > 0n ? Number(this.quantum) : undefined;
  }

  /**
   * Run `dispatches` (sequences opened into their parts) in order, timing each, and resolve when they are
   * done. `costOf` overrides a dispatch's own cost (for work only the step knows, e.g. attention's keys).
   */
  async run(dispatches: readonly Dispatch[], label: string, costOf?: (d: Dispatch) => DispatchCost | undefined): Promise<void> {
    this.gpu.assertAlive();
    const leaves = leafDispatches(dispatches);
    const record = (d: Dispatch, ms: number) => this.timings.push({ label: d.label, ms, cost: costOf?.(d) ?? d.cost });
    if (this.method === 'submit-and-wait') {
      await this.gpu.sync(); // earlier work (and queued writes) must not land in the first dispatch's time
      for (const d of leaves) {
        const t0 = performance.now();
        const encoder = this.gpu.device.createCommandEncoder({ label });
        const pass = encoder.beginComputePass({ label: d.label });
        d.encode(pass);
        pass.end();
        this.gpu.device.queue.submit([encoder.finish()]);
        await this.gpu.pending.track(`onSubmittedWorkDone (timing ${d.label})`, this.gpu.device.queue.onSubmittedWorkDone());
        record(d, performance.now() - t0);
      }
      return;
    }
    for (let start = 0; start < leaves.length; start += DISPATCHES_PER_QUERY_SET) {
      const group = leaves.slice(start, start + DISPATCHES_PER_QUERY_SET);
      const ticks = await this.timestamps(group, label);
      group.forEach((d, i) => {
        const begin = ticks[2 * i];
        const end = ticks[2 * i + 1];
        for (const t of [begin, end]) if (t > 0n) this.quantum = gcd(t, this.quantum);
        record(d, end > begin ? Number(end - begin) / 1e6 : 0);
      });
    }
  }

  /** One submission: a pass per dispatch with its begin/end timestamps, resolved and read back. */
  private async timestamps(group: readonly Dispatch[], label: string): Promise<BigUint64Array> {
    const { gpu } = this;
    const count = 2 * group.length;
    const querySet = gpu.device.createQuerySet({ label: `${label}.timestamps`, type: 'timestamp', count });
    const resolved = gpu.memory.createBuffer({
      label: `${label}.timestamps`,
      size: count * 8,
      usage: BufferUsage.QUERY_RESOLVE | BufferUsage.COPY_SRC,
    });
    try {
      const bytes = await gpu.encodeAndRead(
        (encoder) => {
          group.forEach((d, i) => {
            const pass = encoder.beginComputePass({
              label: d.label,
              timestampWrites: { querySet, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 },
            });
            d.encode(pass);
            pass.end();
          });
          encoder.resolveQuerySet(querySet, 0, count, resolved, 0);
        },
        resolved,
        0,
        count * 8,
        label,
      );
      return new BigUint64Array(bytes.slice().buffer, 0, count);
    } finally {
      querySet.destroy();
      gpu.memory.destroyBuffer(resolved);
    }
  }
}
