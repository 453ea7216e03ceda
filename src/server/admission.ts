// The server's door: at most `maxConcurrency` requests in the engine at once, at most `maxQueue` more
// waiting in arrival order; the next one is refused with ServerQueueFullError (429) and a Retry-After
// estimated from how long requests have been taking.

import { RequestAbortedError, ServerQueueFullError } from '../errors';

interface Waiter {
  admit: () => void;
  signal?: AbortSignal;
  onAbort: () => void;
}

export class Admission {
  private running = 0;
  private readonly queue: Waiter[] = [];
  /** Mean seconds a request held its slot (exponentially weighted), for Retry-After. */
  private meanSeconds = 1;

  constructor(
    readonly maxConcurrency: number,
    readonly maxQueue: number,
  ) {}

  get numRunning(): number {
    return this.running;
  }

  get numWaiting(): number {
    return this.queue.length;
  }

  /** Seconds until a place is likely free: the queue ahead drained at the measured rate (1 to 60). */
  retryAfterSeconds(): number {
    const rounds = (this.queue.length + 1) / Math.max(1, this.maxConcurrency);
    return Math.min(60, Math.max(1, Math.ceil(rounds * this.meanSeconds)));
  }

  /**
   * Wait for a slot; resolves to the function that gives it back (call it once, when the request ends).
   * Rejects with ServerQueueFullError when the queue is full, RequestAbortedError when `signal` aborts first.
   */
  enter(signal?: AbortSignal): Promise<() => void> {
    if (signal?.aborted) return Promise.reject(new RequestAbortedError(signal.reason));
    if (this.running < this.maxConcurrency && this.queue.length === 0) return Promise.resolve(this.slot());
    if (this.queue.length >= this.maxQueue) {
      return Promise.reject(new ServerQueueFullError(this.running, this.queue.length, this.retryAfterSeconds()));
    }
    return new Promise((resolve, reject) => {
      const w: Waiter = {
        signal,
        admit: () => resolve(this.slot()),
        onAbort: () => {
          const i = this.queue.indexOf(w);
          if (i >= 0) this.queue.splice(i, 1);
          reject(new RequestAbortedError(signal?.reason));
        },
      };
      signal?.addEventListener('abort', w.onAbort, { once: true });
      this.queue.push(w);
    });
  }

  private slot(): () => void {
    this.running++;
    const start = performance.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      this.meanSeconds = 0.8 * this.meanSeconds + 0.2 * ((performance.now() - start) / 1000);
      const next = this.queue.shift();
      if (next) {
        next.signal?.removeEventListener('abort', next.onAbort);
        next.admit();
      }
    };
  }
}
