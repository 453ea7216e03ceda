// The storage check before a browser load downloads anything (src/storage/check-storage.ts): the weight
// files the load reads and their sizes, held against navigator.storage.estimate(); StorageQuotaError by
// name with the numbers when the caller requires storing, else one warning and a load that stores nothing;
// persist() asked once when opted in. A fake Cache API and StorageManager stand in for the browser.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { StorageQuotaError, TesseraError } from '../../src/errors';
import { MemorySource, UrlSource } from '../../src/io/model-source';
import type { GgufModelSource } from '../../src/model/weights/gguf/gguf-plan';
import { fromWireError, toWireError } from '../../src/protocol/errors';
import { checkStorage } from '../../src/storage/check-storage';
import { weightFilesOf } from '../../src/storage/download-plan';
import { FakeCacheStorage, fakeStorageManager } from '../helpers/fake-storage';

const BASE = 'http://models.test/m/';
const SHARDS = ['model-00001-of-00002.safetensors', 'model-00002-of-00002.safetensors'];
const INDEX = JSON.stringify({ weight_map: { 'a.weight': SHARDS[0], 'b.weight': SHARDS[1], 'c.weight': SHARDS[0] } });

/** A server with a sharded checkpoint: HEAD gives each shard's length (600 and 500 bytes), GET its bytes. */
function server(lengths: Record<string, number | undefined> = { [SHARDS[0]]: 600, [SHARDS[1]]: 500 }) {
  const gets: string[] = [];
  const heads: string[] = [];
  const impl = (async (input: string | URL | Request, init?: RequestInit) => {
    const url = String(input);
    const name = url.slice(BASE.length);
    if (init?.method === 'HEAD') {
      heads.push(name);
      const n = lengths[name];
      return new Response(null, { status: name in lengths ? 200 : 404, headers: n === undefined ? {} : { 'content-length': String(n) } });
    }
    gets.push(name);
    if (name === 'model.safetensors.index.json') return new Response(INDEX);
    const n = lengths[name];
    return n === undefined
      ? new Response('', { status: 404 })
      : new Response(new Uint8Array(n), { headers: { 'content-length': String(n) } });
  }) as typeof fetch;
  return { impl, gets, heads };
}

function sharded(fetchImpl: typeof fetch) {
  return new UrlSource(BASE, { fetchImpl, files: ['config.json', 'model.safetensors.index.json', ...SHARDS] });
}

const files = (source: UrlSource) => () => weightFilesOf(source, 'webgpu', 'f32');

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

describe('the storage check before a download', () => {
  it('quota errors by name: StorageQuotaError with the bytes needed, the quota and the usage, before any weight byte is fetched', async () => {
    vi.stubGlobal('caches', new FakeCacheStorage().api);
    const s = server();
    const source = sharded(s.impl);
    const { manager } = fakeStorageManager(2000, 1000);
    const error = await checkStorage(source, { requireCache: true }, { storage: manager, weightFiles: files(source) }).catch((e) => e);
    expect(error).toBeInstanceOf(StorageQuotaError);
    expect(error).toBeInstanceOf(TesseraError);
    expect(error.name).toBe('StorageQuotaError');
    expect(error.code).toBe('STORAGE_QUOTA');
    expect([error.neededBytes, error.quotaBytes, error.usageBytes, error.availableBytes, error.headroom]).toEqual([
      1100, 2000, 1000, 1000, 0.1,
    ]);
    expect(error.where).toBe(BASE);
    expect(error.message).toBe(
      `downloading ${BASE} needs 1.10 kB of browser storage (plus 10% headroom), but this site may store only 1.00 kB more ` +
        '(quota 2.00 kB, 1.00 kB in use). Free disk space, delete models stored earlier (deleteStoredModel(url) or clearStorage()), ' +
        'or load it without storing (the engine option storage.requireCache: false; every later load then downloads it again).',
    );
    expect(s.gets).toEqual(['model.safetensors.index.json']); // the index (text), never a shard
    expect(s.heads).toEqual(SHARDS);
  });

  it('keeps its class and numbers across a worker boundary', () => {
    const sent = new StorageQuotaError(BASE, 4_697_620_480, 10_000_000_000, 6_900_000_000, 0.1);
    const got = fromWireError(toWireError(sent)) as StorageQuotaError;
    expect(got).toBeInstanceOf(StorageQuotaError);
    expect([got.neededBytes, got.quotaBytes, got.usageBytes, got.availableBytes]).toEqual([
      4_697_620_480, 10_000_000_000, 6_900_000_000, 3_100_000_000,
    ]);
    expect(got.message).toContain(
      'needs 4.70 GB of browser storage (plus 10% headroom), but this site may store only 3.10 GB more (quota 10.00 GB, 6.90 GB in use)',
    );
  });

  it('without requireCache: one warning, storing false with the reason, and the load stores nothing but still reads what is stored', async () => {
    const caches = new FakeCacheStorage();
    vi.stubGlobal('caches', caches.api);
    const s = server();
    const source = sharded(s.impl);
    const warn = vi.fn();
    const check = await checkStorage(source, {}, { storage: fakeStorageManager(2000, 1000).manager, weightFiles: files(source), warn });
    expect(check).toMatchObject({ storing: false, neededBytes: 1100, quotaBytes: 2000, usageBytes: 1000, unknownSizeFiles: [] });
    expect(check.reason).toContain('needs 1.10 kB of browser storage');
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0][0])).toMatch(/^tessera: downloading .* loading it without storing, so every load downloads it again/);

    const unstored = source.withoutStoring();
    expect(unstored.storesDownloads).toBe(false);
    await caches.store('tessera-weights-v1', `${BASE}${SHARDS[0]}`, 600);
    const first = await unstored.openBytes(SHARDS[0]);
    expect(first?.fromCache).toBe(true); // stored earlier: read, not downloaded
    const second = await unstored.openBytes(SHARDS[1]);
    for await (const _ of second!.stream);
    expect(second?.fromCache).toBe(false);
    expect((await caches.open('tessera-weights-v1')).puts).toBe(0);
    expect(s.gets.filter((g) => g.endsWith('.safetensors'))).toEqual([SHARDS[1]]);
  });

  it('counts only files not stored yet, and lists the files whose size is unknown', async () => {
    const caches = new FakeCacheStorage();
    vi.stubGlobal('caches', caches.api);
    await caches.store('tessera-weights-v1', `${BASE}${SHARDS[0]}`, 600);
    const source = sharded(server({ [SHARDS[0]]: 600, [SHARDS[1]]: undefined }).impl);
    const check = await checkStorage(source, {}, { storage: fakeStorageManager(2000, 1000).manager, weightFiles: files(source) });
    expect(check).toEqual({
      storing: true,
      neededBytes: 0,
      files: [
        { name: SHARDS[0], stored: true },
        { name: SHARDS[1], stored: false },
      ],
      unknownSizeFiles: [SHARDS[1]],
      quotaBytes: 2000,
      usageBytes: 1000,
    });
  });

  it('fits with the headroom: 1100 bytes need 1210 free', async () => {
    vi.stubGlobal('caches', new FakeCacheStorage().api);
    const source = sharded(server().impl);
    const at = (usage: number) =>
      checkStorage(source, {}, { storage: fakeStorageManager(2000, usage).manager, weightFiles: files(source), warn: () => {} });
    expect((await at(790)).storing).toBe(true);
    expect((await at(791)).storing).toBe(false);
  });

  it('takes sizes from the Hub listing (lfs.size) without a HEAD request', async () => {
    vi.stubGlobal('caches', new FakeCacheStorage().api);
    const hub = 'https://huggingface.co/org/repo/resolve/main/';
    const tree = 'https://huggingface.co/api/models/org/repo/tree/main';
    const calls: string[] = [];
    const fetchImpl = (async (input: string, init?: RequestInit) => {
      calls.push(`${init?.method ?? 'GET'} ${input}`);
      if (input === tree) {
        return Response.json([
          { type: 'file', path: 'config.json', size: 700 },
          { type: 'file', path: 'model.safetensors', size: 135, lfs: { oid: 'x', size: 513_028_808, pointerSize: 135 } },
        ]);
      }
      return new Response('', { status: 404 });
    }) as typeof fetch;
    const source = new UrlSource(hub, { fetchImpl });
    const check = await checkStorage(source, {}, { storage: fakeStorageManager(10e9, 0).manager, weightFiles: files(source) });
    expect(check.files).toEqual([{ name: 'model.safetensors', sizeBytes: 513_028_808, stored: false }]);
    expect(check.storing).toBe(true);
    expect(calls).toEqual([`GET ${tree}`]);
  });

  it('asks persist() once when opted in, not when already persisted, never unasked', async () => {
    const source = new MemorySource({});
    const weightFiles = vi.fn(async () => []);
    const granted = fakeStorageManager(100, 0, { grant: true });
    expect((await checkStorage(source, { persist: true }, { storage: granted.manager, weightFiles })).persisted).toBe(true);
    expect(granted.calls.persist).toBe(1);
    const already = fakeStorageManager(100, 0, { persisted: true });
    expect((await checkStorage(source, { persist: true }, { storage: already.manager, weightFiles })).persisted).toBe(true);
    expect(already.calls.persist).toBe(0);
    const refused = fakeStorageManager(100, 0, { grant: false });
    expect((await checkStorage(source, { persist: true }, { storage: refused.manager, weightFiles })).persisted).toBe(false);
    const unasked = fakeStorageManager(100, 0);
    const check = await checkStorage(source, {}, { storage: unasked.manager, weightFiles });
    expect(check.persisted).toBeUndefined();
    expect(unasked.calls).toEqual({ persist: 0, persisted: 0 });
    // Local files are read where they are: nothing to download, nothing to plan.
    expect(check).toMatchObject({
      storing: false,
      neededBytes: 0,
      files: [],
      reason: 'in-memory files is read where it is: nothing is downloaded',
    });
    expect(weightFiles).not.toHaveBeenCalled();
  });

  it('says when nothing can be stored: no Cache API (an insecure page)', async () => {
    const source = sharded(server().impl);
    const check = await checkStorage(source, { requireCache: true }, { storage: undefined, weightFiles: files(source) });
    expect(check).toMatchObject({ storing: false, neededBytes: 1100, reason: expect.stringContaining('no Cache API') });
  });
});

describe('the storage check of a GGUF pair at a URL', () => {
  // The pair as openGgufCheckpoint makes it (its headers read by ranges); the check needs its file names
  // and the folder they are downloaded from.
  const pair = (container: UrlSource) =>
    ({
      where: `${container.where} (m.gguf + mmproj-m.gguf)`,
      container,
      gguf: { files: [{ file: 'm.gguf' }, { file: 'mmproj-m.gguf' }] },
    }) as unknown as GgufModelSource;

  it('holds the two files against the quota: StorageQuotaError before either is downloaded', async () => {
    vi.stubGlobal('caches', new FakeCacheStorage().api);
    const s = server({ 'm.gguf': 900, 'mmproj-m.gguf': 300 });
    const source = pair(new UrlSource(BASE, { fetchImpl: s.impl }));
    const { manager } = fakeStorageManager(2000, 1000);
    const error = await checkStorage(
      source,
      { requireCache: true },
      { storage: manager, weightFiles: () => weightFilesOf(source, 'webgpu', 'q4') },
    ).catch((e) => e);
    expect(error).toBeInstanceOf(StorageQuotaError);
    expect([error.neededBytes, error.availableBytes]).toEqual([1200, 1000]);
    expect(s.heads).toEqual(['m.gguf', 'mmproj-m.gguf']);
    expect(s.gets).toEqual([]);
  });

  it('with room: storing, with both files planned', async () => {
    vi.stubGlobal('caches', new FakeCacheStorage().api);
    const s = server({ 'm.gguf': 900, 'mmproj-m.gguf': 300 });
    const source = pair(new UrlSource(BASE, { fetchImpl: s.impl }));
    const { manager } = fakeStorageManager(100_000, 0);
    const got = await checkStorage(source, {}, { storage: manager, weightFiles: () => weightFilesOf(source, 'webgpu', 'q4') });
    expect(got.storing).toBe(true);
    expect(got.neededBytes).toBe(1200);
    expect(got.files.map((f) => f.name)).toEqual(['m.gguf', 'mmproj-m.gguf']);
  });
});

describe('the weight files a load downloads', () => {
  it('a packed checkpoint: the files its manifest names; sharded: each shard once; one file; none', async () => {
    const pack = JSON.stringify({
      format: 'tessera-pack',
      version: 1,
      dtype: { text: 'q4' },
      files: { 'model.safetensors': 'model.q4.tsqw' },
    });
    expect(await weightFilesOf(new MemorySource({ 'tessera-pack.json': pack }), 'webgpu', 'f32')).toEqual(['model.q4.tsqw']);
    expect(await weightFilesOf(new MemorySource({ 'model.safetensors.index.json': INDEX }), 'webgpu', 'f32')).toEqual(SHARDS);
    expect(await weightFilesOf(new MemorySource({}), 'webgpu', 'f32')).toEqual(['model.safetensors']);
    const gguf = new UrlSource(BASE, { useCache: false, files: ['config.json', 'model-Q4_K_M.gguf'] });
    expect(await weightFilesOf(gguf, 'webgpu', 'f32')).toEqual([]);
  });

  it('the CPU backend: the ONNX graphs of the dtype, and their external data where present', async () => {
    const listed = [
      'onnx/vision_encoder_q4.onnx',
      'onnx/embed_tokens_q4.onnx',
      'onnx/decoder_model_merged_q4.onnx',
      'onnx/decoder_model_merged_q4.onnx_data',
    ];
    const source = new UrlSource(BASE, { useCache: false, files: listed });
    expect(await weightFilesOf(source, 'cpu', 'q4')).toEqual(listed);
  });
});
