// The encoder's queue of encode jobs and the one drain that runs them (encoder-core.ts): jobs pushed while a
// drain runs join its next round; a push with no drain running starts one.
//
// The drain's last look at the queue and the clearing of its flag happen with no await between them.
// Before (the engine hang docs/testing.md describes), the flag cleared a few microtasks after the drain last
// found the queue empty, while the drain's promise chain unwound; a job pushed in those microtasks saw a
// drain running, started none, and waited for ever with no GPU work, timer or I/O pending. In-process, the
// resolution of the batch just run, or a model step finishing in the same GPU event, reaches encodeBatch
// again that fast.

export class JobQueue<J> {
  private readonly jobs: J[] = [];
  private draining = false;

  /**
   * `run` takes jobs off the front of `jobs` and runs them until it is empty (it must not throw with jobs
   * left); `settle` is awaited before each round, so jobs pushed in the same tick join it.
   */
  constructor(
    private readonly run: (jobs: J[]) => Promise<void>,
    private readonly settle: () => Promise<unknown> = () => new Promise((r) => setTimeout(r, 0)),
  ) {}

  get length(): number {
    return this.jobs.length;
  }

  get isDraining(): boolean {
    return this.draining;
  }

  push(...jobs: J[]): void {
    this.jobs.push(...jobs);
    if (!this.draining) void this.drain();
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.jobs.length > 0) {
        await this.settle();
        await this.run(this.jobs);
      }
    } finally {
      this.draining = false;
    }
  }
}
