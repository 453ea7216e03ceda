// A file kept in a Cache API cache in parts. Chromium refuses a Cache API entry over 256 MiB: put() fails
// with "Unexpected internal error" once that much is written (measured in headless Chromium 156: 260 MB
// stored, 280 MB refused), and every real checkpoint shard, GGUF file and quantized copy is larger. So a
// file is stored as
//
//   `url`                 the index: no body; the file's headers, with x-tessera-parts (how many),
//                         x-tessera-part-bytes (each one's size) and x-tessera-bytes (the file's)
//   `url?tessera-part=i`  part i (0 .. parts-1): part-bytes of the file (the last part the rest), with
//                         x-tessera-part-of naming `url`
//
// The index is put after every part, so a file half stored (a refused part, a closed tab) has no index and
// is not found; putting it again replaces the parts. An entry at `url` without x-tessera-parts is a file
// stored whole (before parts, or small): it reads as one part.

import { type BodyReader, bodyReader, closeBytes, deliver, wanted } from './body-reader';

/** Bytes of each part: a quarter of Chromium's limit per entry. */
const PART_BYTES = 64 * 2 ** 20;
/** Header of the index: how many parts. */
const PARTS_HEADER = 'x-tessera-parts';
/** Header of the index: the bytes of each part but the last. */
const PART_BYTES_HEADER = 'x-tessera-part-bytes';
/** Header of the index: the file's bytes. */
export const FILE_BYTES_HEADER = 'x-tessera-bytes';
/** Header of each part: the index's URL (stored-data.ts lists parts under their file). */
const PART_OF_HEADER = 'x-tessera-part-of';

/** Part i's URL: a query parameter (the Cache API ignores a URL's fragment when it matches). */
function partUrl(url: string, i: number): string {
  const u = new URL(url);
  u.hash = '';
  u.searchParams.append('tessera-part', String(i));
  return u.href;
}

/** A file found whole in the cache. */
export interface StoredFile {
  /** The file's headers as stored (its ETag, Content-Type, ...). */
  readonly headers: Headers;
  readonly sizeBytes: number;
  /** The file's bytes: a byte stream read part after part (each call reads them again). */
  body(): ReadableStream<Uint8Array>;
  /** Bytes [start, end) (fewer past the end), reading only the parts they are in. */
  slice(start: number, end: number): Promise<Uint8Array>;
}

/** The index's part count, or undefined for a file stored whole. */
function partsOf(index: Response): number | undefined {
  const n = index.headers.get(PARTS_HEADER);
  return n === null ? undefined : Number(n);
}

/**
 * Whether `url` is in the cache. The body a match opens is cancelled at once: Chromium holds a stored
 * entry open for as long as a Response's body is unread, and a load that left one open per part stalled
 * reading a later part (bench:load, Chromium, until the collector happened to free them).
 */
async function has(cache: Cache, url: string): Promise<boolean> {
  const r = await cache.match(url);
  await r?.body?.cancel();
  return r !== undefined;
}

/** The file at `url` when every part of it is stored; undefined otherwise. */
export async function matchFile(cache: Cache, url: string): Promise<StoredFile | undefined> {
  const index = await cache.match(url);
  if (!index) return undefined;
  await index.body?.cancel(); // read again when wanted (a file stored whole): see has()
  const count = partsOf(index);
  if (count === undefined) return index.body ? wholeFile(cache, url, index.headers) : undefined;
  for (let i = 0; i < count; i++) {
    // A part deleted meanwhile (by the browser, under storage pressure) makes the file not found.
    if (!(await has(cache, partUrl(url, i)))) return undefined;
  }
  /** A part, read from the cache when it is reached (a Response's body is read once). */
  const partAt = async (i: number) => {
    const part = await cache.match(partUrl(url, i));
    if (!part?.body) throw new Error(`part ${i} of ${url} is no longer stored`);
    return part;
  };
  const sizeBytes = Number(index.headers.get(FILE_BYTES_HEADER));
  const partBytes = Number(index.headers.get(PART_BYTES_HEADER));
  return {
    headers: index.headers,
    sizeBytes,
    body: () => concatenated(Array.from({ length: count }, (_, i) => () => partAt(i))),
    async slice(start, end) {
      const last = Math.min(end, sizeBytes);
      if (start >= last) return new Uint8Array(0);
      const out = new Uint8Array(last - start);
      for (let i = Math.floor(start / partBytes); i * partBytes < last; i++) {
        const from = Math.max(start, i * partBytes);
        const to = Math.min(last, (i + 1) * partBytes);
        // A fresh match per slice: a Response's body is read once.
        const part = await cache.match(partUrl(url, i));
        if (!part) throw new Error(`part ${i} of ${url} is no longer stored`);
        const blob = (await part.blob()).slice(from - i * partBytes, to - i * partBytes);
        out.set(new Uint8Array(await blob.arrayBuffer()), from - start);
      }
      return out;
    },
  };
}

function wholeFile(cache: Cache, url: string, headers: Headers): StoredFile {
  const length = Number(headers.get('content-length'));
  const again = async () => {
    const r = await cache.match(url);
    if (!r?.body) throw new Error(`${url} is no longer stored`);
    return r;
  };
  return {
    headers,
    sizeBytes: Number.isSafeInteger(length) ? length : 0,
    body: () => concatenated([again]),
    async slice(start, end) {
      return new Uint8Array(await (await (await again()).blob()).slice(start, end).arrayBuffer());
    },
  };
}

/** Responses' bodies one after another as one byte stream (BYOB readers are filled from one reused buffer). */
function concatenated(bodies: ReadonlyArray<() => Promise<Response>>): ReadableStream<Uint8Array> {
  let next = 0;
  let reader: BodyReader | undefined;
  return new ReadableStream({
    type: 'bytes',
    async pull(controller: ReadableByteStreamController) {
      for (;;) {
        if (!reader) {
          if (next === bodies.length) {
            closeBytes(controller);
            return;
          }
          const response = await bodies[next++]();
          // Chunk by chunk: a BYOB read of a Cache API body stopped part way now and then in Chromium 156
          // (1 load in 5 of test/e2e/demo-load.spec.ts, 4 of 7 GGUF loads in bench:load: a read that never
          // settled), where the same reads of a fetch body never did.
          reader = bodyReader(response.body!, response, false);
        }
        const got = await reader.read(wanted(controller));
        if (got) {
          deliver(controller, got.bytes, got.reused);
          return;
        }
        reader = undefined;
      }
    },
    cancel(reason) {
      return reader?.cancel(reason);
    },
  });
}

/**
 * Store `body` at `url` in parts (replacing what was there), with `headers` on the index and `partHeaders`
 * on every part too (the model a file belongs to, for listing and deleting). Rejects when the cache refuses
 * a part (quota); the file is then not stored (no index), and its parts are deleted.
 */
export async function putFile(
  cache: Cache,
  url: string,
  body: ReadableStream<Uint8Array>,
  headers: Headers,
  partHeaders: Record<string, string> = {},
  partBytes = PART_BYTES,
): Promise<void> {
  await cache.delete(url); // a reader never sees the old index over new parts
  const reader = body.getReader();
  /** A chunk's bytes not yet given to a part. */
  let rest: Uint8Array | undefined;
  let ended = false;
  let total = 0;
  let count = 0;
  try {
    while (!ended) {
      let inPart = 0;
      let started = false;
      const part = new ReadableStream<Uint8Array>({
        async pull(controller) {
          if (inPart === partBytes) {
            controller.close();
            return;
          }
          if (!rest) {
            const r = await reader.read();
            if (r.done) {
              ended = true;
              controller.close();
              return;
            }
            rest = r.value;
          }
          started = true;
          const k = Math.min(rest.byteLength, partBytes - inPart);
          controller.enqueue(rest.subarray(0, k));
          rest = k === rest.byteLength ? undefined : rest.subarray(k);
          inPart += k;
          total += k;
        },
      });
      const onPart = { ...partHeaders, 'content-type': 'application/octet-stream', [PART_OF_HEADER]: url };
      await cache.put(partUrl(url, count), new Response(part, { headers: onPart }));
      if (!started && ended) {
        if (count > 0)
          await cache.delete(partUrl(url, count)); // the empty part after the last
        else count++; // an empty file: one empty part
        break;
      }
      count++;
    }
  } catch (e) {
    await reader.cancel(e).catch(() => {});
    await deleteParts(cache, url, count + 1);
    throw e;
  }
  const index = new Headers(headers);
  index.set(PARTS_HEADER, String(count));
  index.set(FILE_BYTES_HEADER, String(total));
  index.set(PART_BYTES_HEADER, String(partBytes));
  await cache.put(url, new Response(null, { headers: index }));
}

async function deleteParts(cache: Cache, url: string, count: number): Promise<void> {
  for (let i = 0; i < count; i++) await cache.delete(partUrl(url, i));
}

/** Delete the file at `url`: its index and its parts. */
export async function deleteFile(cache: Cache, url: string): Promise<void> {
  const index = await cache.match(url);
  await index?.body?.cancel();
  await cache.delete(url);
  const count = index ? partsOf(index) : undefined;
  if (count !== undefined) await deleteParts(cache, url, count);
}

/** Whether a cache entry's URL is a part of a file (listed under its file, not as one). */
export function isPart(r: Response): boolean {
  return r.headers.has(PART_OF_HEADER);
}
