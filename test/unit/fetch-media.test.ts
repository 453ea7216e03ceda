// image_url fetching with bounds, against a real local HTTP server: the request's AbortSignal, a timeout,
// a byte cap that stops reading (the server sees the connection go), and media.blockPrivateNetwork for
// literal addresses, localhost, resolved names and redirects.

import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ImageFetchError, PrivateNetworkRefusedError, RequestAbortedError } from '../../src/errors';
import { fetchMedia } from '../../src/engine/intake/fetch-media';
import { mediaPolicy } from '../../src/engine/intake/media-options';
import { isPrivateAddress } from '../../src/engine/intake/private-network';

let server: Server;
let base: string;
/** Bytes each endless response managed to write before its connection closed. */
const written: number[] = [];

function endless(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'image/png' });
  const chunk = Buffer.alloc(64 * 1024, 7);
  let sent = 0;
  const pump = () => {
    while (!res.destroyed && res.write(chunk)) sent += chunk.length;
    if (!res.destroyed) res.once('drain', pump);
  };
  res.on('close', () => written.push(sent));
  pump();
}

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/small.png') return res.end(Buffer.from([1, 2, 3]));
    if (req.url === '/big-declared.png') return res.writeHead(200, { 'content-length': String(50 * 2 ** 20) }).end();
    if (req.url === '/endless.png') return endless(res);
    if (req.url === '/slow.png') return res.writeHead(200).write('x'); // never ends
    if (req.url === '/missing.png') return res.writeHead(404).end();
    if (req.url === '/redirect.png') return res.writeHead(302, { location: '/small.png' }).end();
    res.writeHead(500).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  server.close();
});

describe('fetchMedia', () => {
  it('fetches, following redirects', async () => {
    expect(Array.from(await fetchMedia(`${base}/redirect.png`, mediaPolicy()))).toEqual([1, 2, 3]);
  });

  it('HTTP errors are ImageFetchError with the status', async () => {
    const err = await fetchMedia(`${base}/missing.png`, mediaPolicy()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImageFetchError);
    expect((err as Error).message).toContain('HTTP 404');
  });

  it('a declared Content-Length over the cap is refused before reading', async () => {
    const err = await fetchMedia(`${base}/big-declared.png`, mediaPolicy({ maxImageBytes: 2 ** 20 })).catch((e: unknown) => e);
    expect((err as ImageFetchError).reason).toBe('too-large');
  });

  it('an endless body stops being read past the cap', async () => {
    const before = written.length;
    const err = await fetchMedia(`${base}/endless.png`, mediaPolicy({ maxImageBytes: 2 ** 20 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImageFetchError);
    expect((err as ImageFetchError).reason).toBe('too-large');
    await vi.waitFor(() => expect(written.length).toBe(before + 1));
    // The server could write a few socket buffers more, not the endless stream.
    expect(written.at(-1)!).toBeLessThan(32 * 2 ** 20);
  });

  it('a body that never ends stops at the timeout', async () => {
    const t0 = performance.now();
    const err = await fetchMedia(`${base}/slow.png`, mediaPolicy({ fetchTimeoutMs: 300 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImageFetchError);
    expect((err as ImageFetchError).reason).toBe('timeout');
    expect(performance.now() - t0).toBeLessThan(5000);
  });

  it("the request's AbortSignal stops it at once", async () => {
    const abort = new AbortController();
    const pending = fetchMedia(`${base}/slow.png`, mediaPolicy(), abort.signal).catch((e: unknown) => e);
    setTimeout(() => abort.abort(), 50);
    const t0 = performance.now();
    expect(await pending).toBeInstanceOf(RequestAbortedError);
    expect(performance.now() - t0).toBeLessThan(2000);
  });
});

describe('media.blockPrivateNetwork', () => {
  const blocking = (net: Parameters<typeof mediaPolicy>[1] = {}) => mediaPolicy({ blockPrivateNetwork: true }, net);

  it('refuses literal private, loopback and link-local hosts, and localhost, without contacting them', async () => {
    const fetchImpl = vi.fn();
    for (const url of [
      `${base}/small.png`,
      'http://169.254.169.254/latest/meta-data',
      'http://[::1]/x',
      'http://0x7f.1/x',
      'http://localhost:8080/x',
      'http://[::ffff:10.0.0.1]/x',
      'http://2130706433/x',
    ]) {
      const err = await fetchMedia(url, blocking({ fetchImpl: fetchImpl as unknown as typeof fetch })).catch((e: unknown) => e);
      expect(err, url).toBeInstanceOf(PrivateNetworkRefusedError);
    }
    expect(fetchImpl).not.toHaveBeenCalled();
  });

  it('refuses a name that resolves to a private address', async () => {
    const fetchImpl = vi.fn();
    const resolveHost = async (h: string) => (h === 'intranet.example' ? ['93.184.216.34', '10.1.2.3'] : ['93.184.216.34']);
    const err = await fetchMedia(
      'https://intranet.example/x.png',
      blocking({ fetchImpl: fetchImpl as unknown as typeof fetch, resolveHost }),
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PrivateNetworkRefusedError);
    expect((err as Error).message).toContain('10.1.2.3 (intranet.example)');
    expect(fetchImpl).not.toHaveBeenCalled();
  });

  it('checks every redirect target before following it', async () => {
    const fetched: string[] = [];
    const fetchImpl = (async (url: string, init: RequestInit) => {
      fetched.push(url);
      expect(init.redirect).toBe('manual');
      return new Response(null, { status: 302, headers: { location: 'http://169.254.169.254/latest/meta-data' } });
    }) as unknown as typeof fetch;
    const err = await fetchMedia('https://public.example/x.png', blocking({ fetchImpl, resolveHost: async () => ['93.184.216.34'] })).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(PrivateNetworkRefusedError);
    expect(fetched).toEqual(['https://public.example/x.png']);
  });

  it('lets public hosts through', async () => {
    const fetchImpl = (async () => new Response(new Uint8Array([9]))) as unknown as typeof fetch;
    expect(
      Array.from(await fetchMedia('https://public.example/x.png', blocking({ fetchImpl, resolveHost: async () => ['2606:4700::1111'] }))),
    ).toEqual([9]);
  });
});

describe('isPrivateAddress', () => {
  it('classifies IPv4 and IPv6 addresses', () => {
    const blocked = [
      '0.0.0.0',
      '10.9.8.7',
      '100.64.0.1',
      '127.0.0.1',
      '169.254.169.254',
      '172.16.0.1',
      '172.31.255.255',
      '192.168.1.1',
      '224.0.0.1',
      '255.255.255.255',
      '::',
      '::1',
      'fe80::1',
      'fc00::1',
      'fd12:3456::1',
      'ff02::1',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '64:ff9b::a00:1',
      '2002:a00:1::1',
      'not an address',
    ];
    const allowed = [
      '8.8.8.8',
      '93.184.216.34',
      '172.32.0.1',
      '100.128.0.1',
      '2606:4700::1111',
      '2001:4860:4860::8888',
      '::ffff:8.8.8.8',
      '64:ff9b::808:808',
    ];
    for (const a of blocked) expect(isPrivateAddress(a), a).toBe(true);
    for (const a of allowed) expect(isPrivateAddress(a), a).toBe(false);
  });
});
