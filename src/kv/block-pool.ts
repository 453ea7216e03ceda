// Accounting for the paged KV cache's fixed-size blocks (vLLM `BlockPool`, nano-vllm `BlockManager`): which
// block ids are referenced, how many times, which full blocks hold a known prefix (their hash), and which
// unreferenced blocks to reuse first. It holds no GPU memory (the cache buffers live in
// src/model/kv-cache.ts); it hands out ids and reports what it evicted.
//
//   refCount[b] > 0   the block belongs to that many running sequences (shared prefix blocks have > 1)
//   refCount[b] = 0   the block is on the free queue; if it has a hash, its KV is still valid and a new
//                     sequence with the same prefix may take it back (touch) instead of recomputing it
//
//   free queue (eviction order, head first):
//     head ─► [never-hashed blocks] ─► [hashed blocks, least recently freed first] ─► tail
//   allocate() takes from the head: a block without cached content is reused before any cached one, and
//   among cached ones the least recently used goes first (lazy LRU: eviction happens only when a block is
//   needed). free() puts hashed blocks at the tail and unhashed ones at the head.
//
// Invariant: numFree == number of blocks with refCount 0 == length of the free queue.
//
// The pool may start smaller than it may become: numBlocks grows (doubling, up to maxBlocks) when an
// allocation needs more blocks than are free, so one short request does not pay for the KV of many. Block
// ids never change; new blocks join the head of the free queue. Whoever holds the GPU buffers reads
// numBlocks before each step and grows them to match (src/model/kv-cache.ts).

import { InternalError, KvCacheFullError } from '../errors';

export interface BlockPoolStats {
  /** Blocks now (the pool grows on demand up to maxBlocks). */
  numBlocks: number;
  maxBlocks: number;
  numFree: number;
  /** Blocks whose prefix hash is registered (referenced or on the free queue). */
  numCached: number;
  /** Cached blocks reused for a different prefix because space was needed. */
  evictions: number;
}

const NONE = -1;

export class BlockPool {
  private refCount = new Int32Array(0);
  private readonly hashes: (string | undefined)[] = [];
  private readonly byHash = new Map<string, number>();
  // The free queue as a doubly linked list over block ids (O(1) removal when a cached block is touched).
  private prev = new Int32Array(0);
  private next = new Int32Array(0);
  private head = NONE;
  private tail = NONE;
  private free_ = 0;
  private evictions = 0;
  private numBlocks_ = 0;
  /** Most blocks the pool may grow to. */
  readonly maxBlocks: number;

  constructor(
    numBlocks: number,
    /** Tokens per block. */
    readonly blockSize: number,
    /** Grow on demand up to this many blocks (default: numBlocks, a fixed pool). */
    maxBlocks = numBlocks,
  ) {
    if (!Number.isInteger(numBlocks) || numBlocks < 1) throw new InternalError(`BlockPool: numBlocks must be >= 1, got ${numBlocks}`);
    if (!Number.isInteger(blockSize) || blockSize < 1) throw new InternalError(`BlockPool: blockSize must be >= 1, got ${blockSize}`);
    if (!Number.isInteger(maxBlocks) || maxBlocks < numBlocks)
      throw new InternalError(`BlockPool: maxBlocks must be an integer >= numBlocks (${numBlocks}), got ${maxBlocks}`);
    this.maxBlocks = maxBlocks;
    this.grow(numBlocks);
  }

  /** Blocks the pool has now. */
  get numBlocks(): number {
    return this.numBlocks_;
  }

  get numFree(): number {
    return this.free_;
  }

  /** True when `numBlocks` blocks can be allocated now, growing the pool if it must. */
  canAllocate(numBlocks: number): boolean {
    return numBlocks <= this.free_ + (this.maxBlocks - this.numBlocks_);
  }

  /**
   * Take `numBlocks` blocks from the head of the free queue (each with refCount 1), first growing the pool
   * (to twice its size, or what the request needs, at most maxBlocks) when too few are free. Throws
   * KvCacheFullError.
   */
  allocate(numBlocks: number): number[] {
    if (!this.canAllocate(numBlocks))
      throw new KvCacheFullError(numBlocks, this.free_ + (this.maxBlocks - this.numBlocks_), this.blockSize);
    if (numBlocks > this.free_) {
      this.grow(Math.min(this.maxBlocks, Math.max(2 * this.numBlocks_, this.numBlocks_ + numBlocks - this.free_)));
    }
    const out: number[] = [];
    for (let i = 0; i < numBlocks; i++) {
      const b = this.head;
      this.unlink(b);
      const h = this.hashes[b];
      if (h !== undefined) {
        // Its content is about to be overwritten: it no longer holds that prefix.
        this.byHash.delete(h);
        this.hashes[b] = undefined;
        this.evictions++;
      }
      this.refCount[b] = 1;
      out.push(b);
    }
    return out;
  }

  /** Take another reference to cached blocks (a prefix hit); blocks on the free queue leave it. */
  touch(blocks: readonly number[]): void {
    for (const b of blocks) {
      this.check(b);
      if (this.refCount[b] === 0) {
        if (this.hashes[b] === undefined) throw new InternalError(`BlockPool: block ${b} touched but it is free and holds no prefix`);
        this.unlink(b);
      }
      this.refCount[b]++;
    }
  }

  /**
   * Drop one reference to each block, in the order given: give a sequence's blocks last-first, so that
   * its tail (least likely to be shared) is evicted before its prefix.
   */
  free(blocks: readonly number[]): void {
    for (const b of blocks) {
      this.check(b);
      if (this.refCount[b] <= 0) throw new InternalError(`BlockPool: block ${b} freed but not in use`);
      if (--this.refCount[b] > 0) continue;
      if (this.hashes[b] === undefined) this.pushHead(b);
      else this.pushTail(b);
    }
  }

  /** Record that referenced block `b` now holds the full block with this prefix hash. */
  cacheBlock(b: number, hash: string): void {
    this.check(b);
    if (this.refCount[b] <= 0) throw new InternalError(`BlockPool: cacheBlock(${b}) on a free block`);
    if (this.hashes[b] !== undefined) return;
    // Another block may already hold the same prefix (two sequences computed it at once); keep that one
    // as the cached copy, this one stays private to its sequence.
    if (this.byHash.has(hash)) return;
    this.hashes[b] = hash;
    this.byHash.set(hash, b);
  }

  /** The block holding this prefix hash, if any (referenced or free). Takes no reference. */
  lookup(hash: string): number | undefined {
    return this.byHash.get(hash);
  }

  /** The prefix hash block `b` holds (undefined: none; it was never full, or it was reused since). */
  hashOf(b: number): string | undefined {
    this.check(b);
    return this.hashes[b];
  }

  refCountOf(b: number): number {
    this.check(b);
    return this.refCount[b];
  }

  stats(): BlockPoolStats {
    return {
      numBlocks: this.numBlocks_,
      maxBlocks: this.maxBlocks,
      numFree: this.free_,
      numCached: this.byHash.size,
      evictions: this.evictions,
    };
  }

  /** Add blocks numBlocks .. toBlocks - 1 at the head of the free queue (they hold nothing yet). */
  private grow(toBlocks: number): void {
    const from = this.numBlocks_;
    if (toBlocks <= from) return;
    const widen = (a: Int32Array, fill: number) => {
      const out = new Int32Array(toBlocks).fill(fill);
      out.set(a);
      return out;
    };
    this.refCount = widen(this.refCount, 0);
    this.prev = widen(this.prev, NONE);
    this.next = widen(this.next, NONE);
    for (let b = from; b < toBlocks; b++) this.hashes.push(undefined);
    this.numBlocks_ = toBlocks;
    for (let b = toBlocks - 1; b >= from; b--) this.pushHead(b);
  }

  /** Walk the free queue and compare with the refcounts (tests). */
  checkInvariants(): void {
    let n = 0;
    for (let b = this.head; b !== NONE; b = this.next[b]) {
      if (this.refCount[b] !== 0) throw new InternalError(`BlockPool: block ${b} on the free queue has refCount ${this.refCount[b]}`);
      if (++n > this.numBlocks) throw new InternalError('BlockPool: the free queue has a cycle');
    }
    const zero = this.refCount.reduce((a, r) => a + (r === 0 ? 1 : 0), 0);
    if (n !== this.free_ || zero !== n)
      throw new InternalError(`BlockPool: ${n} queued, ${this.free_} counted free, ${zero} with refCount 0`);
    for (const [h, b] of this.byHash) if (this.hashes[b] !== h) throw new InternalError(`BlockPool: hash map and block ${b} disagree`);
  }

  private check(b: number): void {
    if (!Number.isInteger(b) || b < 0 || b >= this.numBlocks)
      throw new InternalError(`BlockPool: no block ${b} (pool of ${this.numBlocks})`);
  }

  private pushTail(b: number): void {
    this.prev[b] = this.tail;
    this.next[b] = NONE;
    if (this.tail !== NONE) this.next[this.tail] = b;
    else this.head = b;
    this.tail = b;
    this.free_++;
  }

  private pushHead(b: number): void {
    this.next[b] = this.head;
    this.prev[b] = NONE;
    if (this.head !== NONE) this.prev[this.head] = b;
    else this.tail = b;
    this.head = b;
    this.free_++;
  }

  private unlink(b: number): void {
    const p = this.prev[b];
    const n = this.next[b];
    if (p !== NONE) this.next[p] = n;
    else this.head = n;
    if (n !== NONE) this.prev[n] = p;
    else this.tail = p;
    this.prev[b] = NONE;
    this.next[b] = NONE;
    this.free_--;
  }
}
