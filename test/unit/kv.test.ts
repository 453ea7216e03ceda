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

describe('KvManager', () => {
  it('maps token positions to slots through the block table', () => {
    const kv = new KvManager(new BlockPool(8, 4));
    const slots = kv.appendSlots(7, 10);
    const table = kv.blockTable(7);
    expect(table.length).toBe(3);
    expect(Array.from(slots)).toEqual([...Array(10).keys()].map((p) => table[Math.floor(p / 4)] * 4 + (p % 4)));
    expect(kv.numTokens(7)).toBe(10);
  });

  it('allocates a new block only when the last one is full', () => {
    const kv = new KvManager(new BlockPool(8, 4));
    kv.appendSlots(1, 3);
    expect(kv.blocksNeeded(1, 1)).toBe(0);
    expect(kv.blocksNeeded(1, 2)).toBe(1);
    kv.appendSlots(1, 1);
    expect(kv.stats().numFreeBlocks).toBe(7);
    const next = kv.appendSlots(1, 1);
    expect(kv.stats().numFreeBlocks).toBe(6);
    expect(next[0]).toBe(kv.blockTable(1)[1] * 4);
  });

  it('keeps sequences apart and frees them whole', () => {
    const kv = new KvManager(new BlockPool(6, 4));
    kv.appendSlots(1, 8);
    kv.appendSlots(2, 5);
    expect(kv.blockTable(1).some((b) => kv.blockTable(2).includes(b))).toBe(false);
    expect(kv.free(1)).toBe(2);
    expect(kv.free(2)).toBe(2);
    expect(kv.stats()).toEqual({ numBlocks: 6, numFreeBlocks: 6, blockSize: 4, numSequences: 0 });
  });

  it('leaves the pool untouched when an append does not fit', () => {
    const kv = new KvManager(new BlockPool(2, 4));
    kv.appendSlots(1, 4);
    expect(kv.canAppend(2, 5)).toBe(false);
    expect(() => kv.appendSlots(2, 5)).toThrowError(KvCacheFullError);
    expect(kv.stats().numFreeBlocks).toBe(1);
    expect(kv.stats().numSequences).toBe(1);
  });
});
