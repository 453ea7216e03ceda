// Raw HTTP for the server tests: what the openai client cannot send (wrong content types, huge or slow
// bodies, connections dropped half-way), over node:net so every byte is the test's.

import { connect, type Socket } from 'node:net';

export interface RawResponse {
  status: number;
  head: string;
  body: string;
  /** Milliseconds from connecting to the connection's end. */
  ms: number;
}

/** Open a connection to `url`'s host and port. */
export function openSocket(url: string): Promise<Socket> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const s = connect({ host: hostname, port: Number(port) }, () => resolve(s));
    s.once('error', reject);
  });
}

/** Read what the server sends until it closes the connection (or `timeoutMs` passes: status 0). */
export function readUntilClose(socket: Socket, timeoutMs: number): Promise<RawResponse> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    const done = () => {
      clearTimeout(timer);
      const text = Buffer.concat(parts).toString('latin1');
      const [head, ...rest] = text.split('\r\n\r\n');
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(head)?.[1] ?? 0);
      resolve({ status, head, body: rest.join('\r\n\r\n'), ms: performance.now() - t0 });
    };
    const timer = setTimeout(() => {
      socket.destroy();
      done();
    }, timeoutMs);
    socket.on('data', (d: Buffer) => parts.push(d));
    socket.on('error', () => {}); // a reset after the server's answer: the answer is what counts
    socket.once('close', done);
  });
}

/**
 * Send a POST whose body is `totalBytes` of JSON-looking filler, `chunkBytes` at a time, honouring
 * backpressure, until the server answers or closes. Returns its answer and how many body bytes went out.
 */
export async function postHugeBody(
  url: string,
  totalBytes: number,
  options: { chunked: boolean; chunkBytes?: number; timeoutMs: number /** More header lines, each ending in \r\n. */; headers?: string },
): Promise<RawResponse & { sentBytes: number }> {
  const socket = await openSocket(url);
  const { host, pathname } = new URL(url);
  const answer = readUntilClose(socket, options.timeoutMs);
  let closed = false;
  socket.once('close', () => (closed = true));
  socket.once('data', () => (closed = true));
  const length = options.chunked ? 'Transfer-Encoding: chunked' : `Content-Length: ${totalBytes}`;
  socket.write(`POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\nContent-Type: application/json\r\n${options.headers ?? ''}${length}\r\n\r\n`);
  const chunk = Buffer.alloc(options.chunkBytes ?? 1 << 20, 0x20);
  let sent = 0;
  while (sent < totalBytes && !closed) {
    const frame = options.chunked ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]) : chunk;
    const ok = socket.write(frame);
    sent += chunk.length;
    if (!ok) await new Promise<void>((r) => (closed ? r() : socket.once('drain', () => r()).once('close', () => r())));
  }
  return { ...(await answer), sentBytes: sent };
}
