// Byte accounting for the in-memory encoder cache (docs/design.md invariants 4 and 7). Pure integers: it holds no
// embeddings, only which keys exist, how many bytes each takes, and which requests reference them. The
// owner (memory-cache.ts) stores the values and deletes whatever admit() reports as evicted.
// Follows vLLM `EncoderCacheManager`: unreferenced entries are not dropped but parked on a lazy LRU
// `freeable` list, and evicted only when an admission needs their bytes.
//
//   capacityBytes
//   ├─ usedBytes ─────────────────────────────────────────┬─ free ─┤
//   ├─ referencedBytes (refs > 0) ─┼─ freeableBytes (0) ──┤        │
//                                   freeable, oldest first:  a → b → c      (ref() takes one off the list;
//                                   admit() evicts from the front            the last unref appends it)
//
//   canAdmit(n)  <=>  n <= capacityBytes - referencedBytes          (free bytes + everything freeable)
//
// A reference is a (key, holder) pair: one holder referencing a key twice counts once, and releasing the
// holder drops all of its references at once. Holders are request ids; a symbol is for internal holders
// (memory-cache.ts pins an entry with one while its value is being produced).

import { EncoderCacheFullError, InternalError } from '../errors';

export type RequestId = string | number | symbol;

export interface EncoderCacheStats {
  capacityBytes: number;
  usedBytes: number;
  referencedBytes: number;
  freeableBytes: number;
  numEntries: number;
  numReferenced: number;
  numFreeable: number;
  /** Entries evicted (to make room) since construction; remove() is not an eviction. */
  evictions: number;
}

interface Entry {
  readonly sizeBytes: number;
  readonly holders: Set<RequestId>;
}

export class EncoderCacheAccounting {
  private readonly entries = new Map<string, Entry>();
  /** key -> sizeBytes of unreferenced entries; Map order is LRU order (least recently released first). */
  private readonly freeable = new Map<string, number>();
  /** holder -> keys it references. */
  private readonly byRequest = new Map<RequestId, Set<string>>();
  private usedBytes = 0;
  private freeableBytes = 0;
  private evictions = 0;

  constructor(readonly capacityBytes: number) {
    checkBytes('capacityBytes', capacityBytes);
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** Number of distinct holders referencing the key (0 when freeable or absent). */
  refCount(key: string): number {
    return this.entries.get(key)?.holders.size ?? 0;
  }

  /** Whether this holder references the key. */
  holds(key: string, requestId: RequestId): boolean {
    return this.entries.get(key)?.holders.has(requestId) ?? false;
  }

  /** Whether an entry of sizeBytes fits once every freeable entry is evicted if need be. */
  canAdmit(sizeBytes: number): boolean {
    checkBytes('sizeBytes', sizeBytes);
    return sizeBytes <= this.capacityBytes - (this.usedBytes - this.freeableBytes);
  }

  /**
   * Add a new entry referenced by requestId, evicting least-recently-released freeable entries until it fits.
   * Returns the evicted keys, in eviction order, for the owner to delete. Throws EncoderCacheFullError (with
   * the numbers) if it cannot fit even with every freeable entry evicted; nothing changes then.
   */
  admit(key: string, sizeBytes: number, requestId: RequestId): { evicted: string[] } {
    if (this.entries.has(key))
      throw new InternalError(`EncoderCacheAccounting: admit(${short(key)}) but the key is already cached; ref() it instead`);
    if (!this.canAdmit(sizeBytes)) {
      throw new EncoderCacheFullError(sizeBytes, this.capacityBytes, this.usedBytes - this.freeableBytes, this.freeableBytes);
    }
    const evicted: string[] = [];
    for (const [victim, victimBytes] of this.freeable) {
      if (this.capacityBytes - this.usedBytes >= sizeBytes) break;
      this.freeable.delete(victim);
      this.entries.delete(victim);
      this.freeableBytes -= victimBytes;
      this.usedBytes -= victimBytes;
      this.evictions++;
      evicted.push(victim);
    }
    if (this.capacityBytes - this.usedBytes < sizeBytes) {
      throw new InternalError(
        `EncoderCacheAccounting: evicted every freeable entry but ${this.capacityBytes - this.usedBytes} bytes are free for ${sizeBytes}`,
      );
    }
    const entry: Entry = { sizeBytes, holders: new Set() };
    this.entries.set(key, entry);
    this.usedBytes += sizeBytes;
    this.addHolder(key, entry, requestId);
    return { evicted };
  }

  /** Reference an existing entry for requestId (idempotent per holder); takes it off the freeable list. */
  ref(key: string, requestId: RequestId): void {
    const entry = this.entries.get(key);
    if (!entry) throw new InternalError(`EncoderCacheAccounting: ref(${short(key)}) but the key is not cached; admit() it first`);
    if (entry.holders.has(requestId)) return;
    if (entry.holders.size === 0) {
      if (!this.freeable.delete(key)) throw new InternalError(`EncoderCacheAccounting: ${short(key)} has no holders but is not freeable`);
      this.freeableBytes -= entry.sizeBytes;
    }
    this.addHolder(key, entry, requestId);
  }

  private addHolder(key: string, entry: Entry, requestId: RequestId): void {
    entry.holders.add(requestId);
    let keys = this.byRequest.get(requestId);
    if (!keys) this.byRequest.set(requestId, (keys = new Set()));
    keys.add(key);
  }

  /** Drop requestId's reference. Returns true if the entry became freeable. */
  unref(key: string, requestId: RequestId): boolean {
    const entry = this.entries.get(key);
    if (!entry?.holders.delete(requestId)) {
      throw new InternalError(`EncoderCacheAccounting: unref(${short(key)}, ${String(requestId)}) but that request does not reference it`);
    }
    const keys = this.byRequest.get(requestId)!;
    keys.delete(key);
    if (keys.size === 0) this.byRequest.delete(requestId);
    if (entry.holders.size > 0) return false;
    this.freeable.set(key, entry.sizeBytes);
    this.freeableBytes += entry.sizeBytes;
    return true;
  }

  /** Drop every reference requestId holds. Returns the keys that became freeable. Unknown ids: []. */
  releaseRequest(requestId: RequestId): string[] {
    const keys = this.byRequest.get(requestId);
    if (!keys) return [];
    const freed: string[] = [];
    for (const key of [...keys]) if (this.unref(key, requestId)) freed.push(key);
    return freed;
  }

  /** Drop an unreferenced entry now (not counted as an eviction). Returns false if the key is absent. */
  remove(key: string): boolean {
    const entry = this.entries.get(key);
    if (!entry) return false;
    if (entry.holders.size > 0) {
      throw new InternalError(`EncoderCacheAccounting: remove(${short(key)}) but ${entry.holders.size} requests still reference it`);
    }
    this.freeable.delete(key);
    this.entries.delete(key);
    this.freeableBytes -= entry.sizeBytes;
    this.usedBytes -= entry.sizeBytes;
    return true;
  }

  /** Freeable keys, least recently released first (the order admit() evicts in). */
  freeableKeys(): string[] {
    return [...this.freeable.keys()];
  }

  stats(): EncoderCacheStats {
    return {
      capacityBytes: this.capacityBytes,
      usedBytes: this.usedBytes,
      referencedBytes: this.usedBytes - this.freeableBytes,
      freeableBytes: this.freeableBytes,
      numEntries: this.entries.size,
      numReferenced: this.entries.size - this.freeable.size,
      numFreeable: this.freeable.size,
      evictions: this.evictions,
    };
  }

  /** Recompute every total from the entries and throw InternalError on any disagreement (leak tests). */
  checkInvariants(): void {
    let used = 0;
    let freeable = 0;
    let numRefs = 0;
    for (const [key, e] of this.entries) {
      used += e.sizeBytes;
      numRefs += e.holders.size;
      if (e.holders.size === 0) {
        freeable += e.sizeBytes;
        if (this.freeable.get(key) !== e.sizeBytes)
          throw new InternalError(`EncoderCacheAccounting: ${short(key)} is unreferenced but not on the freeable list`);
      } else if (this.freeable.has(key)) {
        throw new InternalError(`EncoderCacheAccounting: ${short(key)} has ${e.holders.size} references but is on the freeable list`);
      }
      for (const h of e.holders) {
        if (!this.byRequest.get(h)?.has(key))
          throw new InternalError(`EncoderCacheAccounting: ${short(key)} is held by ${String(h)} but not listed under it`);
      }
    }
    let numListed = 0;
    for (const keys of this.byRequest.values()) numListed += keys.size;
    if (used !== this.usedBytes || freeable !== this.freeableBytes || this.freeable.size > this.entries.size || numListed !== numRefs) {
      throw new InternalError(
        `EncoderCacheAccounting: totals drifted: used ${this.usedBytes} (recomputed ${used}), freeable ${this.freeableBytes} ` +
          `(recomputed ${freeable}), references ${numRefs} vs ${numListed} listed per request`,
      );
    }
    if (this.usedBytes > this.capacityBytes)
      throw new InternalError(`EncoderCacheAccounting: ${this.usedBytes} bytes used of ${this.capacityBytes}`);
  }
}

function checkBytes(name: string, n: number): void {
  if (!Number.isSafeInteger(n) || n < 0) throw new InternalError(`EncoderCacheAccounting: ${name} must be an integer >= 0, got ${n}`);
}

function short(key: string): string {
  return key.length > 16 ? `${key.slice(0, 16)}…` : key;
}
