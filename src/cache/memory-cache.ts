// The in-memory encoder cache: accounting.ts (bytes, refcounts, lazy LRU) + a Map that holds the values +
// in-flight deduplication, so every key is produced at most once at a time and requests that ask for a key
// being produced wait on the same promise (transformers.js `memoizePromise`, STYLE habit 4).
//
//   getOrProduce(key, req, size, produce)
//     stored value ............................ ref(key, req)                      -> source 'memory'
//     key in flight ........................... join: ref (or note req), await     -> source 'inflight'
//     otherwise ............................... start produce()                    -> source 'produced'
//
//   size known up front (a number, docs/design.md invariant 2 "counts before work"):
//     admit(key, size, PIN) ─ ref(key, req) ─ produce() ─ ok ──► store value, unref(PIN)
//        │ no room: EncoderCacheFullError,                └ fails ► unref every joined req and PIN,
//        │ nothing produced                                         remove(key): no entry, no refs
//   size known only from the value (a function of it):
//     produce() ─ ok ──► admit(key, size(value), PIN) ─ ref every joined req ─ unref(PIN) ─ store value
//        │               (no room: every caller gets EncoderCacheFullError; the value is dropped)
//        └ fails ► nothing was admitted; joined reqs forgotten
//
// PIN is a symbol private to this instance: while a value is being produced its entry is referenced by the
// production itself, so it can never be evicted or made freeable under the producer's feet, even if every
// waiting request is released (cancelled) meanwhile. Then the finished value is kept, freeable, for later.
// A failed production leaves nothing behind, so the next request retries it.

import { InternalError } from '../errors';
import { EncoderCacheAccounting, type EncoderCacheStats, type RequestId } from './accounting';

export type CacheSource = 'memory' | 'inflight' | 'produced';

/** Bytes an entry takes: a number known before producing, or computed from the produced value. */
export type EntrySize<T> = number | ((value: T) => number);

export interface MemoryEncoderCacheOptions<T> {
  capacityBytes: number;
  /** Called when a value leaves the cache (evicted to make room, or clear()), e.g. to free a GPU copy. */
  onDelete?: (key: string, value: T) => void;
}

export interface MemoryEncoderCacheStats extends EncoderCacheStats {
  /** getOrProduce() calls answered from a stored value. */
  hits: number;
  /** getOrProduce() calls that joined a production already in flight. */
  inflightJoins: number;
  /** Productions started. */
  productions: number;
  /** Productions that failed (their entries were dropped). */
  failures: number;
  numInFlight: number;
}

interface InFlight<T> {
  readonly promise: Promise<T>;
  /** Requests waiting for the value. Up-front size: they already hold a reference (kept for cleanup). */
  readonly joined: Set<RequestId>;
  /** True when the entry was admitted before producing (size given as a number). */
  readonly admitted: boolean;
}

export class MemoryEncoderCache<T> {
  private readonly accounting: EncoderCacheAccounting;
  private readonly values = new Map<string, T>();
  private readonly inFlight = new Map<string, InFlight<T>>();
  private readonly pin = Symbol('MemoryEncoderCache.production');
  private readonly onDelete?: (key: string, value: T) => void;
  private hits = 0;
  private inflightJoins = 0;
  private productions = 0;
  private failures = 0;

  constructor(options: MemoryEncoderCacheOptions<T>) {
    this.accounting = new EncoderCacheAccounting(options.capacityBytes);
    this.onDelete = options.onDelete;
  }

  async getOrProduce(
    key: string,
    requestId: RequestId,
    sizeBytes: EntrySize<T>,
    produce: () => Promise<T>,
  ): Promise<{ value: T; source: CacheSource }> {
    const stored = this.values.get(key);
    if (stored !== undefined || this.values.has(key)) {
      this.accounting.ref(key, requestId);
      this.hits++;
      return { value: stored as T, source: 'memory' };
    }
    const running = this.inFlight.get(key);
    if (running) {
      if (running.admitted) this.accounting.ref(key, requestId);
      running.joined.add(requestId);
      this.inflightJoins++;
      return { value: await running.promise, source: 'inflight' };
    }
    if (this.accounting.has(key))
      throw new InternalError(`MemoryEncoderCache: ${key.slice(0, 16)}… is accounted for but neither stored nor in flight`);

    const admitted = typeof sizeBytes === 'number';
    if (admitted) {
      this.deleteEvicted(this.accounting.admit(key, sizeBytes, this.pin).evicted); // throws when it cannot fit
      this.accounting.ref(key, requestId);
    }
    const joined = new Set<RequestId>([requestId]);
    this.productions++;
    const promise = (async () => produce())().then(
      (value) => this.finish(key, joined, admitted ? undefined : (sizeBytes as (v: T) => number), value),
      (error: unknown) => {
        this.fail(key, joined, admitted);
        throw error;
      },
    );
    this.inFlight.set(key, { promise, joined, admitted });
    return { value: await promise, source: 'produced' };
  }

  /** The stored value, without referencing it (undefined while in flight or absent). */
  peek(key: string): T | undefined {
    return this.values.get(key);
  }

  /** Whether a value for key is being produced now. */
  isInFlight(key: string): boolean {
    return this.inFlight.has(key);
  }

  /** Whether a value is stored for key. */
  has(key: string): boolean {
    return this.values.has(key);
  }

  /** Requests referencing key (an in-flight production's own pin is not counted). */
  refCount(key: string): number {
    return this.accounting.refCount(key) - (this.accounting.holds(key, this.pin) ? 1 : 0);
  }

  /**
   * Drop every reference requestId holds (request finished or cancelled). Returns the keys that became
   * freeable; their values stay until space is needed. Waiting callers still get their value.
   */
  release(requestId: RequestId): string[] {
    for (const running of this.inFlight.values()) running.joined.delete(requestId);
    return this.accounting.releaseRequest(requestId);
  }

  /** Drop every unreferenced stored value. Referenced and in-flight entries stay. Returns the dropped keys. */
  clear(): string[] {
    const dropped = this.accounting.freeableKeys().filter((key) => this.values.has(key));
    for (const key of dropped) this.accounting.remove(key);
    this.deleteEvicted(dropped);
    return dropped;
  }

  stats(): MemoryEncoderCacheStats {
    return {
      ...this.accounting.stats(),
      hits: this.hits,
      inflightJoins: this.inflightJoins,
      productions: this.productions,
      failures: this.failures,
      numInFlight: this.inFlight.size,
    };
  }

  /** Recheck the accounting totals and that every entry is stored or in flight (leak tests). */
  checkInvariants(): void {
    this.accounting.checkInvariants();
    for (const key of this.values.keys()) {
      if (!this.accounting.has(key)) throw new InternalError(`MemoryEncoderCache: ${key.slice(0, 16)}… is stored but not accounted for`);
    }
    const numAccounted = this.accounting.stats().numEntries;
    let numAdmittedInFlight = 0;
    for (const running of this.inFlight.values()) if (running.admitted) numAdmittedInFlight++;
    if (numAccounted !== this.values.size + numAdmittedInFlight) {
      throw new InternalError(
        `MemoryEncoderCache: ${numAccounted} entries accounted for but ${this.values.size} stored + ${numAdmittedInFlight} in flight`,
      );
    }
  }

  private finish(key: string, joined: Set<RequestId>, sizeOf: ((v: T) => number) | undefined, value: T): T {
    this.inFlight.delete(key);
    if (sizeOf) {
      let evicted: string[];
      try {
        evicted = this.accounting.admit(key, sizeOf(value), this.pin).evicted;
      } catch (error) {
        this.failures++;
        throw error;
      }
      this.deleteEvicted(evicted);
      for (const requestId of joined) this.accounting.ref(key, requestId);
    }
    this.values.set(key, value);
    this.accounting.unref(key, this.pin);
    return value;
  }

  private fail(key: string, joined: Set<RequestId>, admitted: boolean): void {
    this.inFlight.delete(key);
    this.failures++;
    if (!admitted) return;
    for (const requestId of joined) if (this.accounting.holds(key, requestId)) this.accounting.unref(key, requestId);
    this.accounting.unref(key, this.pin);
    this.accounting.remove(key);
  }

  private deleteEvicted(keys: readonly string[]): void {
    for (const key of keys) {
      const value = this.values.get(key);
      if (!this.values.delete(key)) continue;
      this.onDelete?.(key, value as T);
    }
  }
}
