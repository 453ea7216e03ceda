// Files in the Cache API in parts (src/io/cache-parts.ts; Chromium refuses an entry over 256 MiB): a file
// reads back whole (chunk by chunk and with a BYOB reader) and by slices across parts, with its headers; a
// file missing a part is not found; a refused part leaves nothing behind; a file stored whole (the layout
// before parts) still reads; deleting removes every part.

import { describe, expect, it } from 'vitest';
import { deleteFile, matchFile, putFile } from '../../src/io/cache-parts';
import { FakeCacheStorage } from '../helpers/fake-storage';

const URL_ = 'http://models.test/m/model.safetensors';
const FILE = new Uint8Array(1000).map((_, i) => (i * 31 + 7) & 255);

function streamOf(bytes: Uint8Array, chunk: number): ReadableStream<Uint8Array> {
  let o = 0;
  return new ReadableStream({
    pull(c) {
      if (o >= bytes.length) c.close();
      else c.enqueue(bytes.slice(o, (o += chunk)));
    },
  });
}

async function readChunks(s: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  return new Uint8Array(await new Response(s).arrayBuffer());
}

async function readByob(s: ReadableStream<Uint8Array>, size: number): Promise<Uint8Array> {
  const reader = s.getReader({ mode: 'byob' });
  let out = new Uint8Array(size + 1);
  let o = 0;
  for (;;) {
    const { done, value } = await reader.read(new Uint8Array(out.buffer, o, Math.min(37, out.byteLength - o)));
    out = new Uint8Array(value!.buffer);
    if (done) return out.subarray(0, o);
    o += value!.byteLength;
  }
}

async function stored(partBytes: number) {
  const caches = new FakeCacheStorage();
  const cache = (await caches.api.open('w')) as Cache;
  await putFile(cache, URL_, streamOf(FILE, 45), new Headers({ etag: '"v1"' }), { 'x-tessera-model': 'http://models.test/m/' }, partBytes);
  return { caches, cache, fake: await caches.open('w') };
}

describe('a file in Cache API parts', () => {
  it('reads back whole, chunk by chunk and into its own arrays, with its headers', async () => {
    const { cache, fake } = await stored(64);
    expect(fake.entries.size).toBe(16 + 1); // 15 parts of 64 bytes, one of 40, and the index
    expect(fake.entries.get(`${URL_}?tessera-part=3`)!.headers.get('x-tessera-model')).toBe('http://models.test/m/');
    const file = (await matchFile(cache, URL_))!;
    expect(file.sizeBytes).toBe(1000);
    expect(file.headers.get('etag')).toBe('"v1"');
    expect(await readChunks(file.body())).toEqual(FILE);
    expect(await readByob(file.body(), 1000)).toEqual(FILE);
  });

  it('reads slices within and across parts, and cut at the end', async () => {
    const { cache } = await stored(64);
    const file = (await matchFile(cache, URL_))!;
    for (const [a, b] of [
      [0, 8],
      [60, 70],
      [5, 300],
      [990, 1200],
      [1000, 1010],
    ])
      expect(await file.slice(a, b), `${a}-${b}`).toEqual(FILE.slice(a, Math.min(b, 1000)));
  });

  it('is not found when a part is missing, and deleting it removes every part', async () => {
    const { cache, fake } = await stored(100);
    fake.entries.delete(`${URL_}?tessera-part=4`);
    expect(await matchFile(cache, URL_)).toBeUndefined();
    await deleteFile(cache, URL_);
    expect(fake.entries.size).toBe(0);
  });

  it('a refused part rejects the put and leaves no index and no parts', async () => {
    const caches = new FakeCacheStorage();
    const cache = (await caches.api.open('w')) as Cache;
    const fake = await caches.open('w');
    const put = fake.put.bind(fake);
    fake.put = async (req, r) => {
      if (String(req).endsWith('part=2')) throw new DOMException('Unexpected internal error.', 'UnknownError');
      return put(req, r);
    };
    await expect(putFile(cache, URL_, streamOf(FILE, 45), new Headers(), {}, 100)).rejects.toThrow(/Unexpected internal error/);
    expect(fake.entries.size).toBe(0);
    expect(await matchFile(cache, URL_)).toBeUndefined();
  });

  it('a file stored whole (before parts) still reads; an empty file is one empty part', async () => {
    const caches = new FakeCacheStorage();
    await caches.store('w', URL_, 0);
    const fake = await caches.open('w');
    fake.entries.set(URL_, { body: FILE.slice(), headers: new Headers({ 'content-length': '1000' }) });
    const cache = (await caches.api.open('w')) as Cache;
    const whole = (await matchFile(cache, URL_))!;
    expect(whole.sizeBytes).toBe(1000);
    expect(await readChunks(whole.body())).toEqual(FILE);
    expect(await whole.slice(10, 20)).toEqual(FILE.slice(10, 20));
    await putFile(cache, `${URL_}.empty`, streamOf(new Uint8Array(0), 1), new Headers(), {}, 64);
    const empty = (await matchFile(cache, `${URL_}.empty`))!;
    expect(empty.sizeBytes).toBe(0);
    expect(await readChunks(empty.body())).toEqual(new Uint8Array(0));
  });
});
