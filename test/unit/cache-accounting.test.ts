import { describe, expect, it } from 'vitest';
import { EncoderCacheAccounting } from '../../src/cache/accounting';
import { EncoderCacheFullError, InternalError } from '../../src/errors';

describe('EncoderCacheAccounting', () => {
  it('evicts freeable entries in the order they were released, only as many as needed', () => {
    const acc = new EncoderCacheAccounting(100);
    acc.admit('a', 30, 'r1');
    acc.admit('b', 30, 'r2');
    acc.admit('c', 30, 'r3');
    acc.releaseRequest('r2');
    acc.releaseRequest('r1');
    expect(acc.freeableKeys()).toEqual(['b', 'a']);
    expect(acc.admit('d', 40, 'r4').evicted).toEqual(['b']); // 10 free + b's 30
    expect(acc.admit('e', 30, 'r5').evicted).toEqual(['a']);
    expect(acc.has('c')).toBe(true);
    expect(acc.stats().evictions).toBe(2);
  });

  it('admits without evicting while free bytes suffice', () => {
    const acc = new EncoderCacheAccounting(100);
    acc.admit('a', 30, 'r1');
    acc.releaseRequest('r1');
    expect(acc.admit('b', 70, 'r2').evicted).toEqual([]);
    expect(acc.stats().numFreeable).toBe(1);
  });

  it('never evicts referenced entries and names the numbers when it cannot fit', () => {
    const acc = new EncoderCacheAccounting(100);
    acc.admit('a', 60, 'r1');
    acc.admit('b', 20, 'r2');
    acc.releaseRequest('r2');
    expect(acc.canAdmit(40)).toBe(true);
    expect(acc.canAdmit(41)).toBe(false);
    expect(() => acc.admit('c', 41, 'r3')).toThrowError(EncoderCacheFullError);
    expect(() => acc.admit('c', 41, 'r3')).toThrowError(
      /needs 41 bytes for one entry but only 40 of its 100 bytes can be made free \(60 are referenced by running requests, 20 of them freeable\)/,
    );
    expect(acc.stats()).toMatchObject({ usedBytes: 80, numEntries: 2, evictions: 0 });
  });

  it('counts references per request: the same request twice counts once', () => {
    const acc = new EncoderCacheAccounting(100);
    acc.admit('a', 10, 'r1');
    acc.ref('a', 'r2');
    acc.ref('a', 'r2');
    expect(acc.refCount('a')).toBe(2);
    expect(acc.unref('a', 'r1')).toBe(false);
    expect(acc.refCount('a')).toBe(1);
    expect(acc.unref('a', 'r2')).toBe(true);
    expect(acc.refCount('a')).toBe(0);
    expect(acc.freeableKeys()).toEqual(['a']);
  });

  it('takes a re-referenced entry off the freeable list so it is not evicted', () => {
    const acc = new EncoderCacheAccounting(100);
    acc.admit('a', 50, 'r1');
    acc.admit('b', 50, 'r2');
    acc.releaseRequest('r1');
    acc.releaseRequest('r2');
    acc.ref('a', 'r3');
    expect(acc.admit('c', 50, 'r4').evicted).toEqual(['b']);
    expect(acc.refCount('a')).toBe(1);
  });

  it('returns from releaseRequest only the keys that became freeable', () => {
    const acc = new EncoderCacheAccounting(100);
    acc.admit('a', 10, 'r1');
    acc.admit('b', 10, 'r1');
    acc.ref('b', 'r2');
    expect(acc.releaseRequest('r1')).toEqual(['a']);
    expect(acc.releaseRequest('r2')).toEqual(['b']);
    expect(acc.releaseRequest('r2')).toEqual([]);
    expect(acc.releaseRequest('never-seen')).toEqual([]);
  });

  it('reports exact stats', () => {
    const acc = new EncoderCacheAccounting(1000);
    acc.admit('a', 100, 1);
    acc.admit('b', 200, 2);
    acc.admit('c', 300, 3);
    acc.ref('a', 2);
    acc.releaseRequest(3);
    acc.releaseRequest(1);
    expect(acc.stats()).toEqual({
      capacityBytes: 1000,
      usedBytes: 600,
      referencedBytes: 300,
      freeableBytes: 300,
      numEntries: 3,
      numReferenced: 2,
      numFreeable: 1,
      evictions: 0,
    });
    acc.admit('d', 700, 4);
    expect(acc.stats()).toEqual({
      capacityBytes: 1000,
      usedBytes: 1000,
      referencedBytes: 1000,
      freeableBytes: 0,
      numEntries: 3,
      numReferenced: 3,
      numFreeable: 0,
      evictions: 1,
    });
    acc.checkInvariants();
  });

  it('removes an unreferenced entry without counting an eviction', () => {
    const acc = new EncoderCacheAccounting(100);
    acc.admit('a', 10, 'r1');
    acc.releaseRequest('r1');
    expect(acc.remove('a')).toBe(true);
    expect(acc.remove('a')).toBe(false);
    expect(acc.stats()).toMatchObject({ usedBytes: 0, freeableBytes: 0, numEntries: 0, evictions: 0 });
  });

  it('throws InternalError on broken invariants', () => {
    const acc = new EncoderCacheAccounting(100);
    acc.admit('a', 10, 'r1');
    expect(() => acc.admit('a', 10, 'r2')).toThrowError(InternalError);
    expect(() => acc.ref('missing', 'r1')).toThrowError(InternalError);
    expect(() => acc.unref('a', 'r2')).toThrowError(InternalError);
    expect(() => acc.remove('a')).toThrowError(/1 requests still reference it/);
    expect(() => acc.admit('b', 1.5, 'r1')).toThrowError(/sizeBytes must be an integer >= 0, got 1.5/);
    expect(() => new EncoderCacheAccounting(-1)).toThrowError(InternalError);
  });
});
