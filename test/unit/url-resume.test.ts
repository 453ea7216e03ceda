// A checkpoint download that breaks off resumes from the bytes already received (HTTP Range with If-Range),
// against a real HTTP server on loopback that drops the connection part way: the bytes come out whole and
// in order, the second request asks for the rest only, a connection that hangs is given up on and resumed, a server that ignores ranges still gives the right
// bytes (its prefix skipped), a file that changed on the server is refused by name, and a connection that
// never recovers ends in a ModelFileError naming what was received. Each read two ways: chunk by chunk, and
// with a BYOB reader into the reader's own array (as the checkpoint readers read a tensor).

import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { ModelFileError } from '../../src/errors';
import { type StreamChunks, UrlSource } from '../../src/io/model-source';
import { resumableBody } from '../../src/io/resumable-download';

const FILE = new Uint8Array(1 << 20).map((_, i) => (i * 7 + (i >> 11)) & 255);
const GZIPPED = new Uint8Array(gzipSync(FILE, { level: 1 }));

interface Behaviour {
  /** Bytes written before the connection is destroyed, per request (undefined: the whole answer). */
  dropAfter: (request: number) => number | undefined;
  honourRanges: boolean;
  etag: (request: number) => string;
  /** Send the file gzip-encoded (Content-Encoding: gzip; ranges then are not offered). */
  gzip?: boolean;
  /** After dropAfter's bytes, keep the connection open and send nothing (a hung, not a dropped, connection). */
  hang?: boolean;
}

let server: Server | undefined;
afterEach(
  () =>
    new Promise<void>((r) => {
      server?.closeAllConnections();
      return server ? server.close(() => r()) : r();
    }),
);

async function serve(b: Behaviour): Promise<{ url: string; requests: IncomingMessage['headers'][]; sent: () => number }> {
  const requests: IncomingMessage['headers'][] = [];
  let sent = 0;
  server = createServer((req, res) => {
    const n = requests.push(req.headers) - 1;
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const ranged = !b.gzip && b.honourRanges && m !== null && req.headers['if-range'] === b.etag(n);
    const start = ranged ? Number(m![1]) : 0;
    const body = b.gzip ? GZIPPED : FILE.subarray(start);
    res.writeHead(ranged ? 206 : 200, {
      'content-length': String(body.byteLength),
      etag: b.etag(n),
      ...(b.gzip ? { 'content-encoding': 'gzip' } : { 'accept-ranges': 'bytes' }),
      ...(ranged ? { 'content-range': `bytes ${start}-${FILE.byteLength - 1}/${FILE.byteLength}` } : {}),
    });
    const drop = b.dropAfter(n);
    const part = drop === undefined ? body : body.subarray(0, drop);
    sent += part.byteLength;
    res.write(part, () => {
      if (drop === undefined) res.end();
      else if (!b.hang) res.socket?.destroy();
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${(server!.address() as AddressInfo).port}/m/`, requests, sent: () => sent };
}

/** The file's bytes exactly (a byte-wise toEqual of 1 MiB takes seconds). */
const same = (got: Uint8Array) => Buffer.from(got.buffer, got.byteOffset, got.byteLength).equals(FILE);

async function readAll(s: AsyncIterable<Uint8Array>): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  for await (const c of s) parts.push(c);
  const out = new Uint8Array(parts.reduce((a, p) => a + p.byteLength, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.byteLength;
  }
  return out;
}

/** The body read with a BYOB reader into one array, at most 100 000 bytes a read (smaller than a chunk). */
async function readInto(s: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const reader = s.getReader({ mode: 'byob' });
  let out = new Uint8Array(FILE.byteLength + 1); // room for one byte too many, to see a body that is too long
  let o = 0;
  for (;;) {
    const { done, value } = await reader.read(new Uint8Array(out.buffer, o, Math.min(100_000, out.byteLength - o)));
    out = new Uint8Array(value!.buffer); // the read moved the array's memory
    if (done) return out.subarray(0, o);
    o += value!.byteLength;
  }
}

const READS = [
  { name: 'chunk by chunk', read: (s: ReadableStream<Uint8Array>) => readAll(s) },
  { name: 'into its own array (BYOB)', read: readInto },
];

describe.each(READS)('a download that breaks off, read $name', ({ read }) => {
  it('resumes from the first byte not received: the whole file, the rest asked for by range', async () => {
    const s = await serve({ dropAfter: (n) => (n === 0 ? 300_000 : undefined), honourRanges: true, etag: () => '"v1"' });
    const source = new UrlSource(s.url, { files: ['model.safetensors'], useCache: false });
    const progress: number[] = [];
    const opened = await source.openBytes('model.safetensors', (loaded) => progress.push(loaded));
    expect(same(await read((opened!.stream as StreamChunks).readable))).toBe(true);
    expect(s.requests).toHaveLength(2);
    const start = Number(/^bytes=(\d+)-$/.exec(s.requests[1].range ?? '')?.[1]);
    expect(start).toBeGreaterThan(0);
    expect(start).toBeLessThanOrEqual(300_000);
    expect(s.requests[1]['if-range']).toBe('"v1"');
    expect(s.sent()).toBeLessThan(FILE.byteLength + 300_000); // not the whole file twice
    expect(progress.at(-1)).toBe(FILE.byteLength);
  });

  it('from a server that ignores ranges: the same bytes, its repeated prefix skipped', async () => {
    const s = await serve({ dropAfter: (n) => (n === 0 ? 200_000 : undefined), honourRanges: false, etag: () => '"v1"' });
    const first = await fetch(`${s.url}model.safetensors`);
    const body = resumableBody(`${s.url}model.safetensors`, first, { backoffMs: 1 });
    expect(same(await read(body))).toBe(true);
    expect(s.requests).toHaveLength(2);
  });

  it('a compressed body: asked for whole again (its ranges count encoded bytes), the decoded bytes received skipped', async () => {
    const s = await serve({
      dropAfter: (n) => (n === 0 ? GZIPPED.byteLength >> 1 : undefined),
      honourRanges: true,
      etag: () => '"v1"',
      gzip: true,
    });
    const first = await fetch(`${s.url}model.safetensors`);
    expect(same(await read(resumableBody(`${s.url}model.safetensors`, first, { backoffMs: 1 })))).toBe(true);
    expect(s.requests).toHaveLength(2);
    expect(s.requests[1].range).toBeUndefined();
  });

  it('a connection that hangs (open, sending nothing) is given up on after stallMs and resumed', async () => {
    const s = await serve({ dropAfter: (n) => (n === 0 ? 300_000 : undefined), honourRanges: true, etag: () => '"v1"', hang: true });
    const first = await fetch(`${s.url}model.safetensors`);
    const t0 = performance.now();
    expect(same(await read(resumableBody(`${s.url}model.safetensors`, first, { backoffMs: 1, stallMs: 300 })))).toBe(true);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(250);
    expect(s.requests).toHaveLength(2);
    expect(Number(/^bytes=(\d+)-$/.exec(s.requests[1].range ?? '')?.[1])).toBeGreaterThan(0);
  });

  it('a file that changed on the server meanwhile is refused, never spliced', async () => {
    const s = await serve({ dropAfter: (n) => (n === 0 ? 200_000 : undefined), honourRanges: true, etag: (n) => `"v${n}"` });
    const first = await fetch(`${s.url}model.safetensors`);
    const err = await read(resumableBody(`${s.url}model.safetensors`, first, { backoffMs: 1 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelFileError);
    expect((err as Error).message).toMatch(/changed on the server while it was downloading/);
  });

  it('a connection that keeps breaking ends in a ModelFileError with the bytes received', async () => {
    const s = await serve({ dropAfter: (n) => (n === 0 ? 100_000 : 0), honourRanges: true, etag: () => '"v1"' });
    const first = await fetch(`${s.url}model.safetensors`);
    const err = await read(resumableBody(`${s.url}model.safetensors`, first, { backoffMs: 1, retries: 3 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelFileError);
    expect((err as Error).message).toMatch(/broke off after \d+ of 1048576 bytes, and 3 attempts to resume it failed/);
    expect(s.requests).toHaveLength(4);
  });
});
