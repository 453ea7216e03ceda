// What Tessera has stored, and deleting it (src/storage/stored-data.ts, stored-node.ts): downloaded files
// and quantized copies grouped by the checkpoint they came from, the encoder cache from its manifest, the
// quota; deleting one model leaves the others; clearing removes everything. Node: the weight cache folder.

import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { memoryStore } from '../../src/cache/memory-store';
import { PersistentEncoderCache } from '../../src/cache/persistent-cache';
import { UrlSource } from '../../src/io/model-source';
import { CacheApiWeightStore } from '../../src/model/weights/store';
import { clearStorage, deleteStoredModel, inspectStorage } from '../../src/storage/stored-data';
import { clearWeightCache, inspectWeightCache } from '../../src/storage/stored-node';
import { FakeCacheStorage, fakeStorageManager } from '../helpers/fake-storage';

const A = 'http://models.test/a/';
const B = 'http://models.test/b/';

async function* chunks(n: number) {
  yield new Uint8Array(n);
}

/** Two models stored as a load stores them: A downloaded (two files) with one q4 copy, B with one file; 2 encoder entries. */
async function storedTwoModels() {
  const caches = new FakeCacheStorage();
  vi.stubGlobal('caches', caches.api);
  const fetchImpl = (async (url: string) => new Response(new Uint8Array(url.endsWith('1.safetensors') ? 300 : 200))) as typeof fetch;
  for (const [base, names] of [
    [A, ['model-1.safetensors', 'model-2.safetensors']],
    [B, ['model.safetensors']],
  ] as const) {
    const source = new UrlSource(base, { fetchImpl, files: [...names] });
    for (const name of names) for await (const _ of (await source.openBytes(name))!.stream);
  }
  await new CacheApiWeightStore(caches.api, A).write('k1', chunks(50));
  const encoderStore = memoryStore();
  const encoderCache = new PersistentEncoderCache({ store: encoderStore, identity: 'enc', budgetBytes: 1 << 20 });
  await encoderCache.put('a'.repeat(64), new Float32Array(8), [2, 4]);
  await encoderCache.put('b'.repeat(64), new Float32Array(4), [1, 4]);
  const env = { caches: caches.api, storage: fakeStorageManager(10_000, 1_000, { persisted: true }).manager, encoderStore };
  return { caches, env };
}

afterEach(() => {
  vi.unstubAllGlobals();
});

describe('stored data in a browser', () => {
  it('lists each model with its files and quantized copies, the encoder cache, the quota and persistence', async () => {
    const { env } = await storedTwoModels();
    expect(await inspectStorage(env)).toEqual({
      quotaBytes: 10_000,
      usageBytes: 1_000,
      persisted: true,
      models: [
        {
          model: A,
          files: [
            { name: 'model-1.safetensors', sizeBytes: 300 },
            { name: 'model-2.safetensors', sizeBytes: 200 },
          ],
          downloadedBytes: 500,
          numQuantizedCopies: 1,
          quantizedBytes: 50,
        },
        {
          model: B,
          files: [{ name: 'model.safetensors', sizeBytes: 200 }],
          downloadedBytes: 200,
          numQuantizedCopies: 0,
          quantizedBytes: 0,
        },
      ],
      encoderCache: { numEntries: 2, sizeBytes: 48 },
      totalBytes: 798,
    });
  });

  it('deletes one model (files and copies, by its URL however written) and leaves the others', async () => {
    const { caches, env } = await storedTwoModels();
    expect(await deleteStoredModel('http://models.test/a', env)).toEqual({ numEntries: 3, freedBytes: 550 });
    const after = await inspectStorage(env);
    expect(after.models.map((m) => m.model)).toEqual([B]);
    expect(after.encoderCache.numEntries).toBe(2);
    // B's file: its part and its index (io/cache-parts.ts); A's parts went with A.
    expect([...(await caches.open('tessera-weights-v1')).entries.keys()]).toEqual([
      `${B}model.safetensors?tessera-part=0`,
      `${B}model.safetensors`,
    ]);
    expect(await deleteStoredModel(A, env)).toEqual({ numEntries: 0, freedBytes: 0 });
  });

  it('files stored before they named their model are grouped by their folder', async () => {
    const caches = new FakeCacheStorage();
    await caches.store('tessera-weights-v1', `${A}model.safetensors`, 100);
    const env = { caches: caches.api, storage: undefined, encoderStore: memoryStore() };
    expect((await inspectStorage(env)).models).toEqual([
      { model: A, files: [{ name: 'model.safetensors', sizeBytes: 100 }], downloadedBytes: 100, numQuantizedCopies: 0, quantizedBytes: 0 },
    ]);
    expect(await deleteStoredModel(A, env)).toEqual({ numEntries: 1, freedBytes: 100 });
  });

  it('clears everything Tessera stored', async () => {
    const { env } = await storedTwoModels();
    expect(await clearStorage(env)).toEqual({ numEntries: 6, freedBytes: 798 });
    expect(await inspectStorage(env)).toMatchObject({ models: [], encoderCache: { numEntries: 0, sizeBytes: 0 }, totalBytes: 0 });
  });

  it('an empty origin, or no storage APIs at all, reports nothing stored', async () => {
    expect(await inspectStorage({ caches: new FakeCacheStorage().api, storage: undefined, encoderStore: memoryStore() })).toEqual({
      models: [],
      encoderCache: { numEntries: 0, sizeBytes: 0 },
      totalBytes: 0,
    });
  });
});

describe('stored weights in Node', () => {
  it('lists and deletes the weight cache folder’s copies, nothing else', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'tessera-weights-'));
    try {
      await writeFile(join(dir, 'abc.tqw'), new Uint8Array(100));
      await writeFile(join(dir, 'def.tqw'), new Uint8Array(20));
      await writeFile(join(dir, 'notes.txt'), 'keep');
      expect(await inspectWeightCache(dir)).toEqual({ dir, numCopies: 2, sizeBytes: 120 });
      expect(await clearWeightCache(dir)).toEqual({ dir, numCopies: 2, sizeBytes: 120 });
      expect(await readdir(dir)).toEqual(['notes.txt']);
      expect(await inspectWeightCache(join(dir, 'absent'))).toEqual({ dir: join(dir, 'absent'), numCopies: 0, sizeBytes: 0 });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
