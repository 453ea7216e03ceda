import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MANIFEST_KEY, type StoredEntry } from '../../src/cache/entry';
import { fsStore } from '../../src/cache/fs-store';
import { idbStore } from '../../src/cache/idb-store';
import { memoryStore } from '../../src/cache/memory-store';
import { PersistentEncoderCache } from '../../src/cache/persistent-cache';
import type { KeyValueStore } from '../../src/cache/store';
import { PersistentCacheUnavailableError } from '../../src/errors';

const ID = 'i'.repeat(64);
const SHAPE = [4, 25]; // 100 floats = 400 bytes per entry
const BYTES = 400;
const key = (c: string) => c.repeat(64);
const embedding = (seed: number) => Float32Array.from({ length: 100 }, (_, i) => seed + i / 8);

/** A store that counts its calls by method, so tests can see what touched it. */
function counting(inner: KeyValueStore) {
  const calls = { get: 0, set: 0, del: 0, keys: 0, clear: 0 };
  const store: KeyValueStore = {
    get: (k) => (calls.get++, inner.get(k)),
    set: (k, v) => (calls.set++, inner.set(k, v)),
    del: (k) => (calls.del++, inner.del(k)),
    keys: () => (calls.keys++, inner.keys()),
    clear: () => (calls.clear++, inner.clear()),
  };
  return { store, calls };
}

interface Backend {
  store: KeyValueStore;
  /** Flip one bit of one float of key's stored data, the way a bad disk would. */
  flipDataByte(key: string): Promise<void>;
}

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

const backends: [string, () => Promise<Backend>][] = [
  [
    'memory store',
    async () => {
      const store = memoryStore();
      return {
        store,
        async flipDataByte(k) {
          const entry = (await store.get(k)) as StoredEntry;
          new Uint8Array(entry.data.buffer, entry.data.byteOffset, entry.data.byteLength)[37] ^= 0x10;
          await store.set(k, entry);
        },
      };
    },
  ],
  [
    'fs store',
    async () => {
      const dir = await mkdtemp(join(tmpdir(), 'tessera-cache-'));
      dirs.push(dir);
      return {
        store: fsStore(dir),
        async flipDataByte(k) {
          const path = join(dir, `${k}.tkv`);
          const file = await readFile(path);
          file[file.byteLength - 7] ^= 0x10; // inside the data, which ends the file
          await writeFile(path, file);
        },
      };
    },
  ],
];

describe.each(backends)('PersistentEncoderCache over the %s', (_, makeBackend) => {
  it('round-trips an entry, also through a new instance on the same store', async () => {
    const { store } = await makeBackend();
    const cache = new PersistentEncoderCache({ store, identity: ID, budgetBytes: 10_000 });
    expect(await cache.put(key('a'), embedding(1), SHAPE)).toBe(true);
    const hit = await cache.get(key('a'));
    expect(hit?.shape).toEqual(SHAPE);
    expect(Array.from(hit!.data)).toEqual(Array.from(embedding(1)));
    expect(hit?.meta).toMatchObject({ key: key('a'), identity: ID, dtype: 'f32', length: 100, sizeBytes: BYTES });
    const reloaded = new PersistentEncoderCache({ store, identity: ID, budgetBytes: 10_000 });
    expect(Array.from((await reloaded.get(key('a')))!.data)).toEqual(Array.from(embedding(1)));
    expect(await reloaded.get(key('b'))).toBeUndefined();
    expect(cache.stats()).toMatchObject({ hits: 1, misses: 0, writes: 1, bytes: BYTES, numEntries: 1 });
    expect(reloaded.stats()).toMatchObject({ hits: 1, misses: 1, writes: 0, bytes: BYTES });
  });

  it('evicts the least recently used entries to fit the budget', async () => {
    const { store } = await makeBackend();
    let t = 1000;
    const cache = new PersistentEncoderCache({ store, identity: ID, budgetBytes: 3 * BYTES, now: () => t });
    for (const c of ['a', 'b', 'c']) {
      t += 10;
      await cache.put(key(c), embedding(1), SHAPE);
    }
    t += 10;
    await cache.get(key('a'));
    t += 10;
    await cache.put(key('d'), embedding(2), SHAPE);
    const { entries, totalBytes } = await cache.inspect();
    expect(entries.map((m) => m.key[0])).toEqual(['c', 'a', 'd']);
    expect(entries.map((m) => m.lastUsedAt)).toEqual([1030, 1040, 1050]);
    expect(totalBytes).toBe(3 * BYTES);
    expect(cache.stats()).toMatchObject({ evictions: 1, bytes: 3 * BYTES, numEntries: 3 });
    expect((await store.keys()).filter((k) => k !== MANIFEST_KEY).sort()).toEqual([key('a'), key('c'), key('d')]);
    expect(await cache.get(key('b'))).toBeUndefined();
  });

  it('detects a flipped data byte: deletes the entry, counts it corrupt, reports a miss', async () => {
    const backend = await makeBackend();
    const cache = new PersistentEncoderCache({ store: backend.store, identity: ID, budgetBytes: 10_000 });
    await cache.put(key('a'), embedding(1), SHAPE);
    await backend.flipDataByte(key('a'));
    expect(await cache.get(key('a'))).toBeUndefined();
    expect(cache.stats()).toMatchObject({ corrupt: 1, foreign: 0, misses: 1, hits: 0, bytes: 0, numEntries: 0 });
    expect(await backend.store.keys()).not.toContain(key('a'));
  });

  it('detects an entry of another identity: deletes it, counts it foreign, reports a miss', async () => {
    const { store } = await makeBackend();
    const other = new PersistentEncoderCache({ store, identity: 'o'.repeat(64), budgetBytes: 10_000 });
    await other.put(key('a'), embedding(1), SHAPE);
    const cache = new PersistentEncoderCache({ store, identity: ID, budgetBytes: 10_000 });
    expect(await cache.get(key('a'))).toBeUndefined();
    expect(cache.stats()).toMatchObject({ foreign: 1, corrupt: 0, misses: 1, numEntries: 0 });
    expect(await store.get(key('a'))).toBeUndefined();
  });

  it('counts an entry whose length contradicts its shape as corrupt', async () => {
    const { store } = await makeBackend();
    const cache = new PersistentEncoderCache({ store, identity: ID, budgetBytes: 10_000 });
    await cache.put(key('a'), embedding(1), SHAPE);
    const entry = (await store.get(key('a'))) as StoredEntry;
    await store.set(key('a'), { ...entry, meta: { ...entry.meta, shape: [5, 25] } });
    expect(await cache.get(key('a'))).toBeUndefined();
    expect(cache.stats()).toMatchObject({ corrupt: 1, misses: 1 });
  });

  it('inspects and clears', async () => {
    const { store } = await makeBackend();
    let t = 5;
    const cache = new PersistentEncoderCache({ store, identity: ID, budgetBytes: 10_000, now: () => t });
    await cache.put(key('a'), embedding(1), SHAPE);
    t = 7;
    await cache.put(key('b'), embedding(2), [100]);
    const seen = await cache.inspect();
    expect(seen.totalBytes).toBe(2 * BYTES);
    expect(seen.entries.map((m) => [m.key[0], m.shape, m.createdAt])).toEqual([
      ['a', SHAPE, 5],
      ['b', [100], 7],
    ]);
    await cache.clear();
    expect(await cache.inspect()).toEqual({ entries: [], totalBytes: 0 });
    expect(await store.keys()).toEqual([]);
    expect(await cache.get(key('a'))).toBeUndefined();
  });

  it('keeps lastUsedAt in memory on hits and persists it on flush', async () => {
    const { store, calls } = counting((await makeBackend()).store);
    let t = 100;
    const cache = new PersistentEncoderCache({ store, identity: ID, budgetBytes: 10_000, now: () => t, manifestFlushMs: 1000 });
    await cache.put(key('a'), embedding(1), SHAPE);
    await cache.put(key('b'), embedding(2), SHAPE);
    const setsAfterPuts = calls.set; // 2 entries + 2 manifests
    expect(setsAfterPuts).toBe(4);
    t = 200;
    await cache.get(key('a'));
    await cache.get(key('a'));
    expect(calls.set).toBe(setsAfterPuts);
    await cache.flush();
    expect(calls.set).toBe(setsAfterPuts + 1);
    const reloaded = new PersistentEncoderCache({ store, identity: ID, budgetBytes: 10_000 });
    const getsBefore = calls.get;
    expect((await reloaded.inspect()).entries.map((m) => [m.key[0], m.lastUsedAt])).toEqual([
      ['b', 100],
      ['a', 200],
    ]);
    expect(calls.get - getsBefore).toBe(1); // only the manifest, never the entries' data
  });

  it('rewrites the manifest on a hit once manifestFlushMs has passed', async () => {
    const { store, calls } = counting((await makeBackend()).store);
    let t = 0;
    const cache = new PersistentEncoderCache({ store, identity: ID, budgetBytes: 10_000, now: () => t, manifestFlushMs: 1000 });
    await cache.put(key('a'), embedding(1), SHAPE);
    const sets = calls.set;
    t = 999;
    await cache.get(key('a'));
    expect(calls.set).toBe(sets);
    t = 1000;
    await cache.get(key('a'));
    expect(calls.set).toBe(sets + 1);
  });

  it('picks up entries the manifest does not list', async () => {
    const { store } = await makeBackend();
    const writer = new PersistentEncoderCache({ store, identity: ID, budgetBytes: 10_000 });
    await writer.put(key('a'), embedding(1), SHAPE);
    await writer.put(key('b'), embedding(2), SHAPE);
    await store.del(MANIFEST_KEY);
    const reader = new PersistentEncoderCache({ store, identity: ID, budgetBytes: 10_000 });
    const seen = await reader.inspect();
    expect(seen.entries.map((m) => m.key[0]).sort()).toEqual(['a', 'b']);
    expect(seen.totalBytes).toBe(2 * BYTES);
    expect(await store.keys()).toContain(MANIFEST_KEY);
  });
});

describe('PersistentEncoderCache with a failing store', () => {
  it('degrades with exactly one warning; later calls neither throw nor touch the store', async () => {
    const inner = memoryStore();
    const quota: KeyValueStore = { ...inner, set: async () => Promise.reject(new DOMException('quota exceeded', 'QuotaExceededError')) };
    const { store, calls } = counting(quota);
    const warnings: PersistentCacheUnavailableError[] = [];
    const cache = new PersistentEncoderCache({ store, identity: ID, budgetBytes: 10_000, onWarning: (w) => warnings.push(w) });
    expect(await cache.put(key('a'), embedding(1), SHAPE)).toBe(false);
    expect(warnings.length).toBe(1);
    expect(warnings[0]).toBeInstanceOf(PersistentCacheUnavailableError);
    expect(warnings[0].message).toMatch(
      /failed during write an entry \(QuotaExceededError: quota exceeded\) while holding 0 entries \(0 bytes\)/,
    );
    const touched = { ...calls };
    expect(await cache.put(key('b'), embedding(2), SHAPE)).toBe(false);
    expect(await cache.get(key('a'))).toBeUndefined();
    expect(await cache.inspect()).toEqual({ entries: [], totalBytes: 0 });
    await cache.clear();
    await cache.flush();
    expect(calls).toEqual(touched);
    expect(warnings.length).toBe(1);
    expect(cache.stats()).toMatchObject({ degraded: true, writeFailures: 1, writes: 0, misses: 1 });
  });

  it('degrades when there is no IndexedDB at all (idbStore in Node)', async () => {
    const warnings: PersistentCacheUnavailableError[] = [];
    const cache = new PersistentEncoderCache({ store: idbStore(), identity: ID, budgetBytes: 10_000, onWarning: (w) => warnings.push(w) });
    expect(await cache.get(key('a'))).toBeUndefined();
    expect(await cache.put(key('a'), embedding(1), SHAPE)).toBe(false);
    expect(warnings.map((w) => w.operation)).toEqual(['load the index']);
    expect(cache.stats()).toMatchObject({ degraded: true, misses: 1, writeFailures: 0 });
  });

  it('rejects data that does not match its shape (a caller bug, not a store failure)', async () => {
    const cache = new PersistentEncoderCache({ store: memoryStore(), identity: ID, budgetBytes: 10_000 });
    await expect(cache.put(key('a'), embedding(1), [3, 25])).rejects.toThrowError(/shape \[3, 25\] holds 75 floats but data has 100/);
  });
});
