// A GGUF pair at a URL has its headers read by range requests of growing size (families/gguf-checkpoint.ts),
// so a file no family reads fails before its download: here a 3 MiB header in front of 16 MiB of tensor data
// is read in a few ranges and nothing else. A server that ignores ranges gets the whole file, as before.

import { afterEach, describe, expect, it, vi } from 'vitest';
import { UnsupportedModelError } from '../../src/errors';
import { openGgufCheckpoint } from '../../src/families/gguf-checkpoint';
import { UrlSource } from '../../src/io/model-source';
import { ggmlType } from '../../src/model/weights/gguf/gguf-format';
import { writeGguf } from '../../src/model/weights/gguf/gguf-writer';

/** A model .gguf of an architecture no family reads, with a header of about 3 MiB (a vocabulary) and 16 MiB of data. */
function unreadGguf(): Uint8Array {
  const tokens = Array.from({ length: 300_000 }, (_, i) => `token-${i}`);
  return writeGguf(
    [
      { key: 'general.architecture', type: 'string', value: 'no-such-architecture' },
      { key: 'tokenizer.ggml.tokens', type: 'array', itemType: 'string', value: tokens },
    ],
    [{ name: 'token_embd.weight', shape: [4096, 1024], type: ggmlType('F32'), values: () => new Float32Array(4096 * 1024) }],
  );
}

/** A server of `file` at its URL that answers Range requests (206) or, with ranges: false, always the whole file. */
function server(file: Uint8Array, ranges: boolean) {
  const served = { bytes: 0, whole: 0, ranged: 0 };
  const fetchImpl = vi.fn(async (url: string | URL | Request, init?: RequestInit) => {
    if (!String(url).endsWith('/m.gguf')) return new Response('absent', { status: 404 });
    if ((init?.method ?? 'GET') === 'HEAD') return new Response(null, { headers: { 'content-length': String(file.byteLength) } });
    const range = new Headers(init?.headers).get('range')?.match(/^bytes=(\d+)-(\d+)$/);
    if (!ranges || !range) {
      served.whole++;
      served.bytes += file.byteLength;
      return new Response(file.slice(), { headers: { 'content-length': String(file.byteLength) } });
    }
    const start = Number(range[1]);
    if (start >= file.byteLength) return new Response(null, { status: 416 });
    const end = Math.min(Number(range[2]) + 1, file.byteLength);
    served.ranged++;
    served.bytes += end - start;
    return new Response(file.slice(start, end), {
      status: 206,
      headers: { 'content-range': `bytes ${start}-${end - 1}/${file.byteLength}`, 'content-length': String(end - start) },
    });
  });
  return { served, fetchImpl: fetchImpl as unknown as typeof fetch };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('a GGUF header at a URL', () => {
  const file = unreadGguf();

  it('is read by range requests alone: a file no family reads fails before its download', async () => {
    const { served, fetchImpl } = server(file, true);
    const source = new UrlSource('http://models.test/', { fetchImpl, useCache: false });
    await expect(openGgufCheckpoint(source, { model: 'm.gguf' })).rejects.toThrow(UnsupportedModelError);
    expect(served.whole).toBe(0);
    // 1 + 2 + 4 MiB at most for a 3 MiB header, of a 19 MiB file.
    expect(served.ranged).toBeLessThanOrEqual(3);
    expect(served.bytes).toBeLessThanOrEqual(7 * 2 ** 20);
    expect(file.byteLength).toBeGreaterThan(19 * 2 ** 20);
  });

  it('a file shorter than the first range is read whole by it', async () => {
    const small = writeGguf([{ key: 'general.architecture', type: 'string', value: 'no-such-architecture' }], []);
    const { served, fetchImpl } = server(small, true);
    await expect(
      openGgufCheckpoint(new UrlSource('http://models.test/', { fetchImpl, useCache: false }), { model: 'm.gguf' }),
    ).rejects.toThrow(UnsupportedModelError);
    expect([served.whole, served.ranged, served.bytes]).toEqual([0, 1, small.byteLength]);
  });

  it('from a server that ignores ranges, is read from the whole file', async () => {
    const { served, fetchImpl } = server(file, false);
    const source = new UrlSource('http://models.test/', { fetchImpl, useCache: false });
    await expect(openGgufCheckpoint(source, { model: 'm.gguf' })).rejects.toThrow(/no model family reads the GGUF pair/);
    expect(served.whole).toBeGreaterThanOrEqual(1);
  });
});
