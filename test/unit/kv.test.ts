import { describe, expect, it } from 'vitest';
import { InternalError, KvCacheFullError } from '../../src/errors';
import { BlockPool } from '../../src/kv/block-pool';
import { KvManager } from '../../src/kv/kv-manager';

describe('BlockPool', () => {
  it('hands out distinct blocks and takes them back', () => {
    const pool = new BlockPool(4, 16);
    const a = pool.allocate(3);
    expect(new Set(a).size).toBe(3);
    expect(pool.numFree).toBe(1);
    expect(pool.canAllocate(2)).toBe(false);
    pool.free(a);
    expect(pool.numFree).toBe(4);
  });

  it('refuses more blocks than are free with the numbers', () => {
    const pool = new BlockPool(2, 16);
    pool.allocate(1);
    expect(() => pool.allocate(2)).toThrowError(KvCacheFullError);
    expect(() => pool.allocate(2)).toThrowError(/needs 2 more blocks of 16 tokens but only 1 are free/);
  });

  it('rejects a double free', () => {
    const pool = new BlockPool(2, 16);
    const [b] = pool.allocate(1);
    pool.free([b]);
    expect(() => pool.free([b])).toThrowError(InternalError);
  });
});

describe('BlockPool: refcounts and cached blocks', () => {
  it('shares a cached block between sequences and keeps it until the last reference goes', () => {
    const pool = new BlockPool(4, 4);
    const [b] = pool.allocate(1);
    pool.cacheBlock(b, 'h');
    pool.touch([b]);
    expect(pool.refCountOf(b)).toBe(2);
    pool.free([b]);
    expect(pool.numFree).toBe(3);
    pool.free([b]);
    expect(pool.numFree).toBe(4);
    expect(pool.lookup('h')).toBe(b); // still cached while free
    pool.touch([b]); // taken back from the free queue
    expect(pool.numFree).toBe(3);
    pool.checkInvariants();
  });

  it('reuses never-cached blocks before cached ones, and cached ones least recently freed first', () => {
    const pool = new BlockPool(3, 4);
    const [a, b, c] = pool.allocate(3);
    pool.cacheBlock(a, 'A');
    pool.cacheBlock(b, 'B');
    pool.free([a]);
    pool.free([b]);
    pool.free([c]); // never cached: goes to the head
    expect(pool.allocate(1)).toEqual([c]);
    expect(pool.allocate(1)).toEqual([a]);
    expect(pool.lookup('A')).toBeUndefined();
    expect(pool.lookup('B')).toBe(b);
    expect(pool.stats().evictions).toBe(1);
    pool.checkInvariants();
  });

  it('refuses to touch a free block that holds no prefix', () => {
    const pool = new BlockPool(2, 4);
    expect(() => pool.touch([0])).toThrowError(InternalError);
  });
});

describe('BlockPool: growing on demand', () => {
  it('starts small, doubles when an allocation needs more than is free, and stops at maxBlocks', () => {
    const pool = new BlockPool(2, 16, 9);
    expect(pool.stats()).toMatchObject({ numBlocks: 2, maxBlocks: 9, numFree: 2 });
    const a = pool.allocate(2);
    expect(pool.numBlocks).toBe(2); // enough was free: no growth
    expect(pool.canAllocate(7)).toBe(true);
    expect(pool.canAllocate(8)).toBe(false);
    const b = pool.allocate(1);
    expect(pool.numBlocks).toBe(4); // doubled
    expect(b).toEqual([2]); // new blocks come first, lowest id first
    const c = pool.allocate(5);
    expect(pool.numBlocks).toBe(8); // doubled again (1 free + 4 new)
    const d = pool.allocate(1);
    expect(pool.numBlocks).toBe(9); // doubling would pass maxBlocks: capped
    expect(new Set([...a, ...b, ...c, ...d]).size).toBe(9);
    expect(pool.numFree).toBe(0);
    expect(() => pool.allocate(1)).toThrowError(/needs 1 more blocks of 16 tokens but only 0 are free/);
    const e = new BlockPool(2, 16, 100);
    e.allocate(7); // more than doubling gives: grows to what is needed
    expect(e.numBlocks).toBe(7);
    pool.checkInvariants();
  });

  it('keeps block ids, refcounts and cached prefixes across growth', () => {
    const pool = new BlockPool(1, 4, 8);
    const [a] = pool.allocate(1);
    pool.cacheBlock(a, 'A');
    pool.free([a]);
    pool.allocate(2); // grows to 2: the never-cached new block goes first, then the cached one is evicted
    expect(pool.numBlocks).toBe(2);
    expect(pool.lookup('A')).toBeUndefined();
    const pool2 = new BlockPool(1, 4, 8);
    const [x] = pool2.allocate(1);
    pool2.cacheBlock(x, 'X');
    pool2.allocate(1); // x is still referenced: the pool grows and x keeps its prefix
    expect(pool2.lookup('X')).toBe(x);
    expect(pool2.refCountOf(x)).toBe(1);
    pool2.checkInvariants();
  });

  it('a fixed pool (no maxBlocks) never grows', () => {
    const pool = new BlockPool(2, 16);
    pool.allocate(2);
    expect(pool.canAllocate(1)).toBe(false);
    expect(pool.stats().maxBlocks).toBe(2);
  });
});

describe('KvManager', () => {
  it('maps token positions to slots through the block table', () => {
    const kv = new KvManager(new BlockPool(8, 4));
    expect(kv.allocate(7, 10)).toBe(true);
    const table = kv.blockTable(7);
    expect(table.length).toBe(3);
    expect(Array.from(kv.slots(7, 0, 10))).toEqual([...Array(10).keys()].map((p) => table[Math.floor(p / 4)] * 4 + (p % 4)));
    expect(Array.from(kv.slots(7, 8, 2))).toEqual([table[2] * 4, table[2] * 4 + 1]);
  });

  it('allocates a new block only when the last one is full', () => {
    const kv = new KvManager(new BlockPool(8, 4));
    kv.allocate(1, 3);
    expect(kv.blocksNeeded(1, 4)).toBe(0);
    expect(kv.blocksNeeded(1, 5)).toBe(1);
    kv.allocate(1, 4);
    expect(kv.stats().numFree).toBe(7);
    kv.allocate(1, 5);
    expect(kv.stats().numFree).toBe(6);
    expect(kv.slots(1, 4, 1)[0]).toBe(kv.blockTable(1)[1] * 4);
  });

  it('keeps sequences apart and frees them whole', () => {
    const kv = new KvManager(new BlockPool(6, 4));
    kv.allocate(1, 8);
    kv.allocate(2, 5);
    expect(kv.blockTable(1).some((b) => kv.blockTable(2).includes(b))).toBe(false);
    expect(kv.free(1)).toBe(2);
    expect(kv.free(2)).toBe(2);
    expect(kv.stats()).toMatchObject({ numBlocks: 6, numFree: 6, blockSize: 4, numSequences: 0 });
  });

  it('leaves the pool untouched when an allocation does not fit', () => {
    const kv = new KvManager(new BlockPool(2, 4));
    kv.allocate(1, 4);
    expect(kv.canAllocate(2, 5)).toBe(false);
    expect(kv.allocate(2, 5)).toBe(false);
    expect(kv.stats().numFree).toBe(1);
    expect(kv.stats().numSequences).toBe(1);
  });

  it('starts a sequence from a cached prefix, never the last token, and counts reclaimed free blocks', () => {
    const kv = new KvManager(new BlockPool(4, 4));
    kv.allocate(1, 8);
    kv.commitFullBlocks(1, ['h0', 'h1'], 8);
    const [b0, b1] = kv.blockTable(1);
    kv.free(1);
    expect(kv.cachedPrefix(['h0', 'h1'], 8)).toEqual([b0]); // 8 tokens: the 8th must be computed
    const prefix = kv.cachedPrefix(['h0', 'h1'], 9);
    expect(prefix).toEqual([b0, b1]);
    expect(kv.blocksNeeded(2, 9, prefix)).toBe(3); // two reclaimed from the free queue + one new
    expect(kv.allocate(2, 9, prefix)).toBe(true);
    expect(kv.blockTable(2).slice(0, 2)).toEqual([b0, b1]);
    expect(kv.stats().numFree).toBe(1);
  });
});
