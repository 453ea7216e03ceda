// A download that survives a dropped connection: when a response body fails (or ends short of its
// Content-Length) part way, the file is asked for again from the first byte not yet received (an HTTP
// Range request, with If-Range naming the first response's validator), and the stream goes on from there.
// A multi-gigabyte checkpoint on a flaky network then costs the bytes it lost, not the whole file again.
//
//   206 from the byte asked for   ─► the rest follows
//   200 with the same validator   ─► the server ignores ranges: the new body's first bytes are skipped
//   200 with another validator    ─► the file changed on the server: ModelFileError (never splice two versions)
// A compressed body (Content-Encoding) is asked for whole again, its first bytes skipped: its ranges would
// count encoded bytes.
//
// A body that sends nothing for `stallMs` (a connection that hangs rather than drops) is given up on and
// resumed the same way.
//
// After `retries` failed resumptions in a row (no byte received between them) the error is a ModelFileError
// naming the file, the bytes received and the last cause.
//
// The result is a byte stream: a reader with arrays of its own (src/model/weights/byte-reader.ts reads a
// tensor straight into the load's buffer) gets the bytes copied into them from one reused buffer the
// network body is read into, so a multi-gigabyte download leaves no array per chunk for the collector.

import { ModelFileError } from '../errors';
import { bodyReader, closeBytes, deliver, wanted } from './body-reader';

export interface ResumeOptions {
  fetchImpl?: typeof fetch;
  /** Resumptions in a row without progress before giving up (default 4). */
  retries?: number;
  /** Wait before the n-th resumption in a row: n x this (default 500 ms). */
  backoffMs?: number;
  /** A body that sends nothing for this long is given up on and resumed, like a dropped one (default 60 s). */
  stallMs?: number;
  /** Called with the bytes received so far (of the file, resumptions included) as they arrive. */
  onBytes?: (received: number) => void;
}

/** What If-Range compares: the ETag or Last-Modified. */
function validatorOf(r: { headers: Headers }): string | undefined {
  const h = r.headers;
  return h.get('etag') ?? h.get('last-modified') ?? undefined;
}

/** A response's version of the file (Hugging Face sends the LFS file's sha256 as X-Linked-Etag). */
export function responseVersion(r: { headers: Headers }): string | undefined {
  return r.headers.get('x-linked-etag') ?? validatorOf(r);
}

/** `first`'s body, resumed by range requests when it breaks off; `first` must be a 200 for the whole file. */
export function resumableBody(url: string, first: Response, options: ResumeOptions = {}): ReadableStream<Uint8Array> {
  const fetchImpl = options.fetchImpl ?? fetch;
  const retries = options.retries ?? 4;
  const backoffMs = options.backoffMs ?? 500;
  const stallMs = options.stallMs ?? 60_000;
  // Content-Length counts the encoded bytes when the body is compressed; the decoded ones are what arrive.
  const encoded = (first.headers.get('content-encoding') ?? 'identity') !== 'identity';
  const total = encoded ? undefined : Number(first.headers.get('content-length')) || undefined;
  const validator = validatorOf(first);
  const identity = responseVersion(first);
  let reader = bodyReader(first.body!, first);
  let received = 0;
  /** Bytes of the current body to drop before passing any on (a server that ignored the range). */
  let skip = 0;
  let failures = 0;

  const fail = (cause: unknown) =>
    new ModelFileError(
      `downloading ${url} broke off after ${received}${total ? ` of ${total}` : ''} bytes, and ${retries} attempts to resume it ` +
        `failed (last: ${(cause as Error)?.message ?? cause}). Check the connection and load again: a stored part is not kept.`,
      { cause },
    );

  async function reopen(cause: unknown): Promise<void> {
    failures++;
    if (failures > retries) throw fail(cause);
    await new Promise((r) => setTimeout(r, backoffMs * failures));
    let r: Response;
    try {
      // A compressed body's ranges count encoded bytes, not the decoded ones received: ask for it whole
      // again and skip what arrived.
      const range = encoded ? {} : { range: `bytes=${received}-`, ...(validator ? { 'if-range': validator } : {}) };
      r = await fetchImpl(url, { headers: range });
    } catch (e) {
      return reopen(e);
    }
    if (r.status === 206 && r.body) {
      const start = Number(/^bytes (\d+)-/.exec(r.headers.get('content-range') ?? '')?.[1]);
      if (start !== received) {
        await r.body.cancel();
        throw new ModelFileError(`resuming ${url} at byte ${received}, the server sent bytes from ${start}: not resumable`);
      }
      reader = bodyReader(r.body, r);
      skip = 0;
      return;
    }
    if (r.status === 200 && r.body) {
      if (responseVersion(r) !== identity) {
        await r.body.cancel();
        throw new ModelFileError(
          `${url} changed on the server while it was downloading (version ${identity} then ${responseVersion(r)}); load it again.`,
        );
      }
      reader = bodyReader(r.body, r);
      skip = received;
      return;
    }
    await r.body?.cancel();
    return reopen(new Error(`HTTP ${r.status} ${r.statusText}`));
  }

  return new ReadableStream({
    type: 'bytes',
    async pull(controller: ReadableByteStreamController) {
      const want = wanted(controller);
      for (;;) {
        let chunk: { bytes: Uint8Array; reused: boolean } | undefined;
        let timer: ReturnType<typeof setTimeout> | undefined;
        const stalled = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no byte for ${stallMs} ms`)), stallMs);
        });
        try {
          chunk = await Promise.race([reader.read(want), stalled]);
        } catch (e) {
          reader.cancel(e).catch(() => {}); // a stalled body is dropped, not waited on
          await reopen(e);
          continue;
        } finally {
          clearTimeout(timer);
        }
        if (!chunk) {
          if (total !== undefined && received < total) {
            await reopen(new Error(`the body ended at byte ${received} of ${total}`));
            continue;
          }
          closeBytes(controller);
          return;
        }
        let bytes = chunk.bytes;
        if (skip > 0) {
          const k = Math.min(skip, bytes.byteLength);
          skip -= k;
          bytes = bytes.subarray(k);
          if (bytes.byteLength === 0) continue;
        }
        received += bytes.byteLength;
        failures = 0;
        options.onBytes?.(received);
        deliver(controller, bytes, chunk.reused);
        return;
      }
    },
    cancel(reason) {
      return reader.cancel(reason);
    },
  });
}
