// A static file server for tests that honours HTTP Range requests (as Hugging Face's and most CDNs do),
// recording what each request asked for and how many bytes went out.

import { readFileSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, normalize } from 'node:path';

export interface RangeServer {
  /** http://127.0.0.1:<port>/ */
  url: string;
  /** Every request: the file's path, its Range header, the bytes sent. */
  served: Array<{ path: string; range: string | undefined; bytes: number }>;
  /** false: answer every request with the whole file (a server that ignores Range). */
  honourRanges: boolean;
  close(): Promise<void>;
}

export async function startRangeServer(root: string): Promise<RangeServer> {
  const state: Omit<RangeServer, 'url' | 'close'> = { served: [], honourRanges: true };
  const server: Server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)).replace(/^\/+/, '');
    const file = join(root, path);
    let size: number;
    try {
      const s = statSync(file);
      if (!s.isFile() || path.startsWith('..')) throw new Error('not a file');
      size = s.size;
    } catch {
      res.writeHead(404).end();
      return;
    }
    const m = state.honourRanges ? /^bytes=(\d+)-(\d+)$/.exec(req.headers.range ?? '') : null;
    const all = readFileSync(file);
    const body = m ? all.subarray(Number(m[1]), Math.min(size, Number(m[2]) + 1)) : all;
    state.served.push({ path, range: req.headers.range, bytes: req.method === 'HEAD' ? 0 : body.length });
    res.writeHead(m ? 206 : 200, {
      'content-length': body.length,
      etag: `"${size}"`,
      'accept-ranges': 'bytes',
      ...(m ? { 'content-range': `bytes ${m[1]}-${Number(m[1]) + body.length - 1}/${size}` } : {}),
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const result = state as RangeServer;
  result.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  result.close = () => new Promise<void>((r) => server.close(() => r()));
  return result;
}
