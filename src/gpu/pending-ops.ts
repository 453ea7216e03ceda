// The GPU operations a device has been asked for and has not answered yet (pipeline compiles, buffer maps,
// queue completions, error scopes), with when each was asked for, and how many have finished. A stall
// report (src/engine/stall.ts) names what the engine waits on from these; `settled` is the progress
// counter a watchdog compares.

export interface PendingGpuOp {
  /** What was asked, e.g. "createComputePipelineAsync matmul[main|...]" or "mapAsync readback". */
  what: string;
  /** Milliseconds since it was asked. */
  ageMs: number;
}

export class PendingGpuOps {
  private nextId = 0;
  private readonly open = new Map<number, { what: string; since: number }>();
  /** Operations that have finished (resolved or rejected) since the device was made. */
  settled = 0;

  /** Records `promise` as pending until it settles; returns it unchanged. */
  track<T>(what: string, promise: Promise<T>): Promise<T> {
    const id = this.nextId++;
    this.open.set(id, { what, since: performance.now() });
    const done = () => {
      this.open.delete(id);
      this.settled++;
    };
    promise.then(done, done);
    return promise;
  }

  get size(): number {
    return this.open.size;
  }

  /** The operations still open, oldest first. */
  list(): PendingGpuOp[] {
    const now = performance.now();
    return [...this.open.values()].map((o) => ({ what: o.what, ageMs: Math.round(now - o.since) }));
  }
}
