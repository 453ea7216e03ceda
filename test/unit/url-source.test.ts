// UrlSource: downloaded files go through the browser Cache API, a second open reads the cache, and a
// cache that refuses a file (quota, private browsing) means loading without caching, not failing.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { UrlSource } from '../../src/io/model-source';

const BYTES = new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8]);

/** The Cache API: each match a new Response of the stored bytes and headers (bodies are read once). */
function fakeCaches(putFails: boolean) {
  const stored = new Map<string, { body: Uint8Array; headers: Headers }>();
  return {
    stored,
    api: {
      open: async () => ({
        match: async (url: string) => {
          const e = stored.get(url);
          return e ? new Response(e.body.slice(), { headers: e.headers }) : undefined;
        },
        delete: async (url: string) => stored.delete(url),
        put: async (url: string, r: Response) => {
          const body = new Uint8Array(await r.arrayBuffer());
          if (putFails) throw new DOMException('Unexpected internal error.', 'UnknownError');
          stored.set(url, { body, headers: new Headers(r.headers) });
        },
      }),
    },
  };
}

async function readAll(s: AsyncIterable<Uint8Array>): Promise<number[]> {
  const out: number[] = [];
  for await (const c of s) out.push(...c);
  return out;
}

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

describe('UrlSource with the Cache API', () => {
  it('downloads once, then reads the cache', async () => {
    const caches = fakeCaches(false);
    vi.stubGlobal('caches', caches.api);
    const fetchImpl = vi.fn(async () => new Response(BYTES, { headers: { 'content-length': '8' } }));
    const source = new UrlSource('http://models.test/m/', { fetchImpl: fetchImpl as unknown as typeof fetch });
    const progress: number[] = [];
    const first = await source.openBytes('model.safetensors', (loaded) => progress.push(loaded));
    expect(await readAll(first!.stream)).toEqual([...BYTES]);
    expect(first!.fromCache).toBe(false);
    expect(progress.at(-1)).toBe(8);
    const second = await source.openBytes('model.safetensors');
    expect(second!.fromCache).toBe(true);
    expect(await readAll(second!.stream)).toEqual([...BYTES]);
    expect(fetchImpl).toHaveBeenCalledTimes(1);
  });

  it('a cache that refuses the file is warned about, and the file still loads from the network', async () => {
    vi.stubGlobal('caches', fakeCaches(true).api);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const fetchImpl = vi.fn(async () => new Response(BYTES, { headers: { 'content-length': '8' } }));
    const source = new UrlSource('http://models.test/m/', { fetchImpl: fetchImpl as unknown as typeof fetch });
    const opened = await source.openBytes('model.safetensors');
    expect(await readAll(opened!.stream)).toEqual([...BYTES]);
    expect(opened!.fromCache).toBe(false);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(String(warn.mock.calls[0][0])).toContain('the browser cache refused http://models.test/m/model.safetensors');
  });

  it('a missing file is undefined, an HTTP error is a named error', async () => {
    const source = new UrlSource('http://models.test/m/', {
      useCache: false,
      fetchImpl: (async (url: string) => new Response('', { status: url.endsWith('missing.json') ? 404 : 500 })) as unknown as typeof fetch,
    });
    expect(await source.readText('missing.json')).toBeUndefined();
    await expect(source.readText('config.json')).rejects.toThrowError(/HTTP 500/);
  });
});
