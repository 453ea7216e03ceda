import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fsStore } from '../../src/cache/fs-store';

let dir = '';
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tessera-fs-store-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('fsStore', () => {
  it('stores data as raw float bytes: 24-byte prefix + padded JSON header + 4 bytes per float', async () => {
    const store = fsStore(dir);
    const data = Float32Array.from({ length: 1000 }, (_, i) => i / 3);
    const meta = { key: 'k', shape: [10, 100] };
    await store.set('k', { meta, data });
    const headerBytes = Buffer.byteLength(JSON.stringify({ meta }));
    expect((await stat(join(dir, 'k.tkv'))).size).toBe(24 + Math.ceil(headerBytes / 4) * 4 + 4000);
    const back = (await store.get('k')) as { meta: unknown; data: Float32Array };
    expect(back.meta).toEqual(meta);
    expect(back.data).toBeInstanceOf(Float32Array);
    expect(Array.from(back.data)).toEqual(Array.from(data));
  });

  it('creates its directory private to the user (0700) and its files 0600', async () => {
    const nested = join(dir, 'a', 'cache');
    const store = fsStore(nested);
    await store.set('k', { data: new Float32Array(3) });
    expect((await stat(nested)).mode & 0o777).toBe(0o700);
    expect((await stat(join(nested, 'k.tkv'))).mode & 0o777).toBe(0o600);
  });

  it('writes through a temp file and leaves only the entry behind', async () => {
    const store = fsStore(dir);
    await store.set('k', { data: new Float32Array(3) });
    await store.set('k', { data: new Float32Array(5) });
    expect(await readdir(dir)).toEqual(['k.tkv']);
    expect(((await store.get('k')) as { data: Float32Array }).data.length).toBe(5);
  });

  it('round-trips keys outside [A-Za-z0-9_-] and plain JSON values', async () => {
    const store = fsStore(dir);
    await store.set('a/b:c', { n: 1 });
    await store.set('tessera-manifest', [1, 'two']);
    expect((await store.keys()).sort()).toEqual(['a/b:c', 'tessera-manifest']);
    expect(await store.get('a/b:c')).toEqual({ n: 1 });
    expect(await store.get('tessera-manifest')).toEqual([1, 'two']);
  });

  it('answers undefined for a missing key, [] for a missing directory, and ignores a missing delete', async () => {
    const store = fsStore(join(dir, 'not-yet'));
    expect(await store.get('nope')).toBeUndefined();
    expect(await store.keys()).toEqual([]);
    await store.del('nope');
  });

  it('returns { unreadable } for a truncated file instead of throwing', async () => {
    const store = fsStore(dir);
    await store.set('k', { data: new Float32Array(8) });
    const file = await readFile(join(dir, 'k.tkv'));
    await writeFile(join(dir, 'k.tkv'), file.subarray(0, file.byteLength - 4));
    expect(await store.get('k')).toEqual({ unreadable: `${file.byteLength - 4} bytes but the prefix implies ${file.byteLength}` });
  });

  it('clears entries and stale temp files', async () => {
    const store = fsStore(dir);
    await store.set('a', 1);
    await writeFile(join(dir, '.tmp-stale'), 'x');
    await store.clear();
    expect(await readdir(dir)).toEqual([]);
  });
});
