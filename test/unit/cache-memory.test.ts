import { describe, expect, it } from 'vitest';
import { MemoryEncoderCache } from '../../src/cache/memory-cache';
import { EncoderCacheFullError } from '../../src/errors';

/** A promise the test settles by hand, so several callers are provably in flight at once. */
function deferred<T>() {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const SIZE = 256; // bytes per entry in these tests

describe('MemoryEncoderCache', () => {
  it('reports produced, then inflight for a concurrent caller, then memory', async () => {
    const cache = new MemoryEncoderCache<string>({ capacityBytes: 1024 });
    const gate = deferred<string>();
    const first = cache.getOrProduce('k', 'r1', SIZE, () => gate.promise);
    const second = cache.getOrProduce('k', 'r2', SIZE, async () => 'never');
    gate.resolve('v');
    expect(await first).toEqual({ value: 'v', source: 'produced' });
    expect(await second).toEqual({ value: 'v', source: 'inflight' });
    expect(await cache.getOrProduce('k', 'r3', SIZE, async () => 'never')).toEqual({ value: 'v', source: 'memory' });
    expect(cache.refCount('k')).toBe(3);
    expect(cache.stats()).toMatchObject({ hits: 1, inflightJoins: 1, productions: 1, failures: 0, numInFlight: 0 });
  });

  it('produces 3 times for 8 concurrent requests over 3 keys, and every refcount is 0 after release', async () => {
    const cache = new MemoryEncoderCache<Float32Array>({ capacityBytes: 10 * SIZE });
    const keys = ['k0', 'k1', 'k2'];
    const gates = new Map(keys.map((k) => [k, deferred<Float32Array>()]));
    const produced: string[] = [];
    const calls = Array.from({ length: 8 }, (_, i) => {
      const key = keys[i % 3];
      return cache.getOrProduce(key, `r${i}`, SIZE, () => {
        produced.push(key);
        return gates.get(key)!.promise;
      });
    });
    expect(cache.stats().numInFlight).toBe(3);
    for (const k of keys) gates.get(k)!.resolve(new Float32Array(SIZE / 4));
    const results = await Promise.all(calls);
    expect(produced).toEqual(['k0', 'k1', 'k2']);
    expect(results.map((r) => r.source)).toEqual([
      'produced',
      'produced',
      'produced',
      'inflight',
      'inflight',
      'inflight',
      'inflight',
      'inflight',
    ]);
    expect(keys.map((k) => cache.refCount(k))).toEqual([3, 3, 2]);
    for (let i = 0; i < 8; i++) cache.release(`r${i}`);
    expect(keys.map((k) => cache.refCount(k))).toEqual([0, 0, 0]);
    expect(cache.stats()).toMatchObject({ numEntries: 3, numReferenced: 0, numFreeable: 3, freeableBytes: 3 * SIZE, usedBytes: 3 * SIZE });
    cache.checkInvariants();
  });

  it('drops a failed production (no entry, no refs) and runs it again on retry', async () => {
    const cache = new MemoryEncoderCache<string>({ capacityBytes: 1024 });
    const gate = deferred<string>();
    let numCalls = 0;
    const first = cache.getOrProduce('k', 'r1', SIZE, () => (numCalls++, gate.promise));
    const waiter = cache.getOrProduce('k', 'r2', SIZE, async () => 'never');
    gate.reject(new Error('encoder exploded'));
    await expect(first).rejects.toThrowError('encoder exploded');
    await expect(waiter).rejects.toThrowError('encoder exploded');
    expect(cache.has('k')).toBe(false);
    expect(cache.stats()).toMatchObject({ numEntries: 0, usedBytes: 0, failures: 1, numInFlight: 0 });
    cache.checkInvariants();
    const retry = await cache.getOrProduce('k', 'r1', SIZE, async () => (numCalls++, 'ok'));
    expect(retry).toEqual({ value: 'ok', source: 'produced' });
    expect(numCalls).toBe(2);
    expect(cache.refCount('k')).toBe(1);
  });

  it('deletes evicted values from storage and tells onDelete', async () => {
    const deleted: string[] = [];
    const cache = new MemoryEncoderCache<string>({ capacityBytes: 2 * SIZE, onDelete: (key, value) => deleted.push(`${key}=${value}`) });
    await cache.getOrProduce('a', 'r1', SIZE, async () => 'A');
    await cache.getOrProduce('b', 'r2', SIZE, async () => 'B');
    cache.release('r1');
    cache.release('r2');
    await cache.getOrProduce('c', 'r3', SIZE, async () => 'C');
    expect(deleted).toEqual(['a=A']);
    expect(cache.peek('a')).toBeUndefined();
    expect(cache.peek('b')).toBe('B');
    expect(cache.stats()).toMatchObject({ numEntries: 2, evictions: 1 });
  });

  it('refuses before producing when referenced entries leave no room', async () => {
    const cache = new MemoryEncoderCache<string>({ capacityBytes: SIZE });
    await cache.getOrProduce('a', 'r1', SIZE, async () => 'A');
    let produced = false;
    await expect(cache.getOrProduce('b', 'r2', 1, async () => ((produced = true), 'B'))).rejects.toThrowError(EncoderCacheFullError);
    expect(produced).toBe(false);
    expect(cache.stats()).toMatchObject({ numEntries: 1, productions: 1 });
  });

  it('reserves a known size before producing; a size function admits after producing', async () => {
    const cache = new MemoryEncoderCache<Float32Array>({ capacityBytes: 4096 });
    const known = deferred<Float32Array>();
    const later = deferred<Float32Array>();
    const a = cache.getOrProduce('a', 'r1', SIZE, () => known.promise);
    const b = cache.getOrProduce(
      'b',
      'r1',
      (v) => v.byteLength,
      () => later.promise,
    );
    expect(cache.stats()).toMatchObject({ usedBytes: SIZE, numEntries: 1, numInFlight: 2 });
    known.resolve(new Float32Array(SIZE / 4));
    later.resolve(new Float32Array(100));
    await Promise.all([a, b]);
    expect(cache.stats()).toMatchObject({ usedBytes: SIZE + 400, numEntries: 2, numReferenced: 2 });
    expect(cache.refCount('b')).toBe(1);
    cache.checkInvariants();
  });

  it('keeps a value whose requests were all released while it was produced, as freeable', async () => {
    const cache = new MemoryEncoderCache<string>({ capacityBytes: 1024 });
    const gate = deferred<string>();
    const call = cache.getOrProduce('k', 'r1', SIZE, () => gate.promise);
    expect(cache.release('r1')).toEqual([]); // the production still pins it
    gate.resolve('v');
    expect((await call).value).toBe('v');
    expect(cache.refCount('k')).toBe(0);
    expect(cache.stats()).toMatchObject({ numEntries: 1, numFreeable: 1, numReferenced: 0 });
    expect(cache.peek('k')).toBe('v');
    cache.checkInvariants();
  });

  it('clears only unreferenced values', async () => {
    const cache = new MemoryEncoderCache<string>({ capacityBytes: 1024 });
    await cache.getOrProduce('a', 'r1', SIZE, async () => 'A');
    await cache.getOrProduce('b', 'r2', SIZE, async () => 'B');
    cache.release('r1');
    expect(cache.clear()).toEqual(['a']);
    expect(cache.has('a')).toBe(false);
    expect(cache.has('b')).toBe(true);
    expect(cache.stats()).toMatchObject({ numEntries: 1, usedBytes: SIZE });
  });

  it('fails every caller when a value sized after production does not fit, leaving nothing', async () => {
    const cache = new MemoryEncoderCache<Float32Array>({ capacityBytes: 100 });
    const gate = deferred<Float32Array>();
    const first = cache.getOrProduce(
      'k',
      'r1',
      (v) => v.byteLength,
      () => gate.promise,
    );
    const waiter = cache.getOrProduce(
      'k',
      'r2',
      (v) => v.byteLength,
      async () => new Float32Array(0),
    );
    gate.resolve(new Float32Array(26)); // 104 bytes
    await expect(first).rejects.toThrowError(/needs 104 bytes for one entry but only 100 of its 100 bytes/);
    await expect(waiter).rejects.toThrowError(EncoderCacheFullError);
    expect(cache.stats()).toMatchObject({ numEntries: 0, usedBytes: 0, failures: 1, numInFlight: 0 });
    cache.checkInvariants();
  });
});
