// Where stored quantized copies of checkpoint files live, so a second load reads packed weights directly
// instead of converting and quantizing the checkpoint again:
//
//   WeightStore ─┬─ CacheApiWeightStore  browsers and workers: the Cache API (`tessera-quantized-v1`)
//                └─ DirWeightStore       Node: one file per key in a cache directory (store-node.ts; never
//                                        imported by browser code)
//
// A store only keeps bytes under a key; what the bytes mean, and whether they still match their source,
// is stored-copy.ts's job. Any method may reject (quota, permissions); the loader then carries on without
// the store.

import { deleteFile, matchFile, putFile } from '../../io/cache-parts';
import { iterateStream, STORED_MODEL_HEADER } from '../../io/model-source';
import type { WeightCacheRef } from '../../protocol/encoder';

export interface WeightStore {
  /** Where it keeps copies, for messages. */
  readonly where: string;
  /** The stored bytes under `key` as a stream of chunks, or undefined. */
  read(key: string): Promise<AsyncIterable<Uint8Array> | undefined>;
  /** Store `chunks` under `key`, replacing any copy; a reader never sees a partly written copy. */
  write(key: string, chunks: AsyncIterable<Uint8Array>): Promise<void>;
  delete(key: string): Promise<void>;
}

/** The Cache API cache of stored quantized copies (src/storage/stored-data.ts lists and deletes them). */
export const QUANTIZED_CACHE_NAME = 'tessera-quantized-v1';

/** A ReadableStream pulling from an async iterable (ReadableStream.from is not everywhere yet). */
function readableFrom(chunks: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  const it = chunks[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const r = await it.next();
      if (r.done) controller.close();
      else controller.enqueue(r.value);
    },
    async cancel() {
      await it.return?.();
    },
  });
}

/** The Cache API under a synthetic URL per key (Cache API keys must be http(s) requests). */
export class CacheApiWeightStore implements WeightStore {
  readonly where = `the browser's Cache API (${QUANTIZED_CACHE_NAME})`;

  /** `model`: the checkpoint the copies are made from (its folder URL), written beside each copy for listing. */
  constructor(
    private readonly storage: CacheStorage,
    private readonly model?: string,
  ) {}

  static available(model?: string): CacheApiWeightStore | undefined {
    return typeof caches !== 'undefined' ? new CacheApiWeightStore(caches, model) : undefined;
  }

  private url(key: string): string {
    return `https://tessera.invalid/quantized/${key}`;
  }

  async read(key: string): Promise<AsyncIterable<Uint8Array> | undefined> {
    const cache = await this.storage.open(QUANTIZED_CACHE_NAME);
    const stored = await matchFile(cache, this.url(key));
    return stored ? iterateStream(stored.body()) : undefined;
  }

  async write(key: string, chunks: AsyncIterable<Uint8Array>): Promise<void> {
    const cache = await this.storage.open(QUANTIZED_CACHE_NAME);
    // In parts (a copy is often over the 256 MiB Chromium allows an entry: io/cache-parts.ts), its index
    // put last: until then matchFile() does not find it.
    const headers = new Headers({ 'content-type': 'application/octet-stream' });
    if (this.model !== undefined) headers.set(STORED_MODEL_HEADER, this.model);
    await putFile(
      cache,
      this.url(key),
      readableFrom(chunks),
      headers,
      this.model === undefined ? {} : { [STORED_MODEL_HEADER]: this.model },
    );
  }

  async delete(key: string): Promise<void> {
    const cache = await this.storage.open(QUANTIZED_CACHE_NAME);
    await deleteFile(cache, this.url(key));
  }
}

/** The store a worker init names, in a browser or Web Worker (the Cache API). */
export function openWeightStoreBrowser(ref: WeightCacheRef): WeightStore | undefined {
  return ref.kind === 'cache-api' ? CacheApiWeightStore.available(ref.model) : undefined;
}
