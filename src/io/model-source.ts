// Where a checkpoint's files come from: a URL base (e.g. a Hugging Face `resolve/main/` URL), browser
// File objects (an <input type=file multiple>), a directory handle (showDirectoryPicker), or memory.
// The Node directory source lives in model-source-node.ts so browser bundles never import node:fs.
// Both the processor (small text files) and the weight loader (large binary files) read through this.
//
// Downloaded files are kept in the Cache API (`tessera-weights-v1`) when it exists, so a second load of
// the same URL reads from browser storage instead of the network. Before a load downloads, the storage
// check (src/storage/check-storage.ts) adds up what its files cost (downloadSize, isStored) against the
// origin's quota, and loads withoutStoring() when there is no room. A URL source that knows its folder's
// file list (given, or from the Hugging Face Hub's API: file-listing.ts) never requests a file that is
// not in it.

import { ModelFileError } from '../errors';
import { matchFile, putFile, type StoredFile } from './cache-parts';
import { readChunkwise } from './body-reader';
import { responseVersion, resumableBody } from './resumable-download';
import { checkCheckpointFileName } from './checkpoint-path';
import { listHubFiles } from './file-listing';

export interface ByteStream {
  stream: AsyncIterable<Uint8Array>;
  /** Total bytes when known (Content-Length, File.size, stat). */
  sizeBytes?: number;
  /** True when the bytes come from a local cache rather than the network. */
  fromCache?: boolean;
  /**
   * What changes when the file's content changes, where the source can tell cheaply (an HTTP ETag or
   * Last-Modified, a file's modification time). Stored quantized copies are keyed by it.
   */
  version?: string;
}

export interface ModelSource {
  /** Human-readable origin for messages ("https://…/resolve/main/", "./models/x", "3 selected files"). */
  readonly where: string;
  /** A file's text, or undefined when the checkpoint has no such file. */
  readText(name: string): Promise<string | undefined>;
  /**
   * A file's bytes as a stream, or undefined when absent. Sources that download first (a URL into the
   * browser cache) report that phase through `onDownload`.
   */
  openBytes(name: string, onDownload?: DownloadProgress): Promise<ByteStream | undefined>;
  /** Whether the file is there, without reading or downloading it (absent: callers open it instead). */
  exists?(name: string): Promise<boolean>;
  /**
   * Bytes [start, end) of a file, without reading the rest (an HTTP range request), and what its
   * version is (as ByteStream.version); fewer when the file ends before `end`; undefined when this source
   * cannot read a part alone (the server ignores ranges), the file is absent, or `start` is past its end.
   * Absent: parts are never read alone.
   */
  readRange?(name: string, start: number, end: number): Promise<{ bytes: Uint8Array; version?: string } | undefined>;
}

export type DownloadProgress = (loadedBytes: number, totalBytes: number | undefined) => void;

/** The Cache API cache downloaded checkpoint files are kept in (src/storage/stored-data.ts lists and deletes them). */
export const WEIGHT_CACHE_NAME = 'tessera-weights-v1';
/** Header on each stored file (and stored quantized copy) naming the checkpoint folder's URL it belongs to. */
export const STORED_MODEL_HEADER = 'x-tessera-model';

/** Pass a body through, counting bytes. */
function counting(body: ReadableStream<Uint8Array>, total: number | undefined, onDownload: DownloadProgress) {
  let loaded = 0;
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        loaded += chunk.byteLength;
        onDownload(loaded, total);
        controller.enqueue(chunk);
      },
    }),
  );
}

/**
 * A stream's chunks (Safari's streams are not async-iterable), with the stream itself: a reader that can
 * read into arrays of its own (a BYOB reader of a byte stream: src/model/weights/byte-reader.ts) takes
 * `readable` instead of iterating.
 */
export interface StreamChunks extends AsyncIterable<Uint8Array> {
  readonly readable: ReadableStream<Uint8Array>;
}

export function iterateStream(stream: ReadableStream<Uint8Array>): StreamChunks {
  return { readable: stream, [Symbol.asyncIterator]: () => chunksOf(stream) };
}

async function* chunksOf(stream: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = stream.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      if (value) yield value;
    }
  } finally {
    reader.releaseLock();
  }
}

function cacheStorage(): CacheStorage | undefined {
  return typeof caches !== 'undefined' ? caches : undefined;
}

export interface UrlSourceOptions {
  /** Keep downloads in the Cache API, and read files kept there (default: true where it exists). */
  useCache?: boolean;
  /** Store new downloads in the Cache API (default true); false still reads files stored earlier. */
  storeDownloads?: boolean;
  fetchImpl?: typeof fetch;
  /**
   * The folder's file names, when known (a manifest): a file not listed is absent and never requested.
   * Unset: Hugging Face `resolve/` URLs are listed through the Hub's API, other URLs are probed.
   */
  files?: readonly string[];
  /** Ask the Hub's API for the file list of a Hugging Face URL (default true). */
  listHub?: boolean;
}

export class UrlSource implements ModelSource {
  readonly where: string;
  private readonly base: string;
  /** The folder's files and their sizes (undefined: not known), once known; undefined: unknown, probe. */
  private listing: Promise<ReadonlyMap<string, number | undefined> | undefined> | undefined;

  constructor(
    base: string,
    private readonly options: UrlSourceOptions = {},
  ) {
    this.base = base.endsWith('/') ? base : `${base}/`;
    this.where = this.base;
  }

  /** The folder's file names when known (given, or listed by the Hub once); undefined: unknown, probe. */
  async knownFiles(): Promise<string[] | undefined> {
    const set = await this.listed();
    return set ? [...set.keys()] : undefined;
  }

  private listed(): Promise<ReadonlyMap<string, number | undefined> | undefined> {
    this.listing ??= (async () => {
      const { files, listHub, fetchImpl } = this.options;
      if (files) return new Map(files.map((name) => [name, undefined]));
      const listed = listHub === false ? undefined : await listHubFiles(this.url(''), fetchImpl);
      return listed ? new Map(listed.map((f) => [f.name, f.sizeBytes])) : undefined;
    })();
    return this.listing;
  }

  /** The folder's absolute URL (a relative base resolved against the page), as stored files name it. */
  get folderUrl(): string {
    return this.url('');
  }

  /** Whether downloads are kept in the Cache API (asked for, and the Cache API exists here). */
  get storesDownloads(): boolean {
    return this.options.useCache !== false && this.options.storeDownloads !== false && cacheStorage() !== undefined;
  }

  /**
   * The same folder (and its listing, not asked for again), reading files stored earlier but storing no
   * new download: a load the storage quota has no room for (src/storage/check-storage.ts).
   */
  withoutStoring(): UrlSource {
    const other = new UrlSource(this.base, { ...this.options, storeDownloads: false });
    other.listing = this.listing;
    return other;
  }

  /** The Cache API cache files are kept in, unless this source does not use it. */
  private async cache(): Promise<Cache | undefined> {
    // A file: URL (Deno) is on disk already: a stored copy would only double it.
    if (this.url('').startsWith('file:')) return undefined;
    const storage = this.options.useCache === false ? undefined : cacheStorage();
    return storage ? await storage.open(WEIGHT_CACHE_NAME).catch(() => undefined) : undefined;
  }

  /** The file as stored in the Cache API (every part of it), or undefined. */
  private async stored(name: string): Promise<StoredFile | undefined> {
    const cache = await this.cache();
    return cache ? matchFile(cache, this.url(name)) : undefined;
  }

  /** Whether the file is in the Cache API already (a load reads it there and downloads nothing). */
  async isStored(name: string): Promise<boolean> {
    return (await this.stored(name)) !== undefined;
  }

  /**
   * The bytes downloading a file costs, where that is known without downloading it: the listing's size (the
   * Hub's), else a HEAD request's Content-Length (not of a compressed answer, whose length is not the
   * file's). Undefined when unknown or absent.
   */
  async downloadSize(name: string): Promise<number | undefined> {
    const listing = await this.listed();
    if (listing && !listing.has(name)) return undefined;
    const listed = listing?.get(name);
    if (listed !== undefined) return listed;
    let r: Response;
    try {
      r = await (this.options.fetchImpl ?? fetch)(this.url(name), { method: 'HEAD' });
    } catch {
      return undefined; // the download itself will say what is wrong
    }
    if (!r.ok || r.headers.get('content-encoding')) return undefined;
    const length = Number(r.headers.get('content-length'));
    return r.headers.get('content-length') !== null && Number.isSafeInteger(length) && length >= 0 ? length : undefined;
  }

  /** False only when a known listing says the file is not there. */
  private async mayExist(name: string): Promise<boolean> {
    const set = await this.listed();
    return !set || set.has(name);
  }

  /** A file under the base; names that would leave it (checkpoint-path.ts) are refused, not resolved. */
  private url(name: string): string {
    if (name !== '') checkCheckpointFileName(name, this.where, 'the checkpoint'); // '' is the base folder itself
    return new URL(name, new URL(this.base, globalThis.location?.href ?? 'http://localhost/')).href;
  }

  private async fetchFile(name: string): Promise<Response | undefined> {
    const url = this.url(name);
    let response: Response;
    try {
      response = await (this.options.fetchImpl ?? fetch)(url);
    } catch (e) {
      // Deno fails a fetch of a missing file: URL instead of answering 404.
      if (url.startsWith('file:')) return undefined;
      throw new ModelFileError(`could not fetch ${url}: ${(e as Error).message}. Check the URL and your connection.`, { cause: e });
    }
    if (response.status === 404) return undefined;
    if (!response.ok) throw new ModelFileError(`fetching ${url} failed with HTTP ${response.status} ${response.statusText}`);
    return response;
  }

  async exists(name: string): Promise<boolean> {
    const set = await this.listed();
    if (set) return set.has(name);
    if (await this.stored(name)) return true;
    const url = this.url(name);
    if (url.startsWith('file:')) {
      // Deno fetches file: URLs with GET only (HEAD is refused), and a missing file is an error, not a 404.
      try {
        const r = await (this.options.fetchImpl ?? fetch)(url);
        await r.body?.cancel();
        return r.ok;
      } catch {
        return false;
      }
    }
    let r: Response;
    try {
      r = await (this.options.fetchImpl ?? fetch)(url, { method: 'HEAD' });
    } catch (e) {
      throw new ModelFileError(`could not reach ${this.url(name)}: ${(e as Error).message}. Check the URL and your connection.`, {
        cause: e,
      });
    }
    return r.ok && !(r.headers.get('content-type') ?? '').includes('text/html');
  }

  async readText(name: string): Promise<string | undefined> {
    if (!(await this.mayExist(name))) return undefined;
    const r = await this.fetchFile(name);
    // Single-page-app hosts answer a missing file with their index.html and status 200; no checkpoint
    // file (JSON, Jinja, text) is HTML, so that answer means "absent".
    if (r && (r.headers.get('content-type') ?? '').includes('text/html') && !name.endsWith('.html')) return undefined;
    return r ? r.text() : undefined;
  }

  async readRange(name: string, start: number, end: number): Promise<{ bytes: Uint8Array; version?: string } | undefined> {
    if (!(await this.mayExist(name))) return undefined;
    const url = this.url(name);
    // A file already in the browser cache is read there (nothing downloaded).
    const stored = await this.stored(name);
    if (stored) return { bytes: await stored.slice(start, end), version: responseVersion(stored) };
    let r: Response;
    try {
      r = await (this.options.fetchImpl ?? fetch)(url, { headers: { range: `bytes=${start}-${end - 1}` } });
    } catch (e) {
      throw new ModelFileError(`could not fetch ${url}: ${(e as Error).message}. Check the URL and your connection.`, { cause: e });
    }
    if (r.status === 404) return undefined;
    if (r.status !== 206) {
      await r.body?.cancel(); // the whole file is coming: not what was asked
      return undefined;
    }
    const bytes = new Uint8Array(await r.arrayBuffer());
    // The file's size after the slash of `Content-Range: bytes a-b/size`: a range past its end is cut there.
    const size = Number(r.headers.get('content-range')?.split('/')[1]) || undefined;
    const want = Math.min(end, size ?? end) - start;
    if (bytes.byteLength !== want) {
      throw new ModelFileError(`fetching bytes ${start}-${end - 1} of ${url} gave ${bytes.byteLength} bytes, not ${want}`);
    }
    return { bytes, version: responseVersion(r) };
  }

  async openBytes(name: string, onDownload?: DownloadProgress): Promise<ByteStream | undefined> {
    if (!(await this.mayExist(name))) return undefined;
    const url = this.url(name);
    const cache = await this.cache();
    const cached = cache ? await matchFile(cache, url) : undefined;
    if (cached) return fromStored(cached, true);
    const response = await this.fetchFile(name);
    if (!response?.body) return undefined;
    const total = Number(response.headers.get('content-length')) || undefined;
    // A dropped connection resumes from the bytes already received (HTTP Range), not from the start. Its
    // body is a byte stream: a tensor is read from the network straight into the load's buffer.
    const resumable = (r: Response) =>
      r.status === 200
        ? resumableBody(url, r, { fetchImpl: this.options.fetchImpl, onBytes: onDownload && ((n) => onDownload(n, total)) })
        : onDownload
          ? counting(r.body!, total, onDownload)
          : r.body!;
    const direct = (r: Response): ByteStream => ({
      stream: iterateStream(resumable(r)),
      sizeBytes: total,
      fromCache: false,
      version: responseVersion(r),
    });
    // Files stored earlier are read (above) even when this load stores nothing new.
    const store = this.options.storeDownloads === false ? undefined : cache;
    if (!store || !(await roomFor(total))) {
      if (store) console.warn(`tessera: not caching ${url} (${total} bytes): the browser's storage quota has no room for it`);
      return direct(response);
    }
    // Download into browser storage first (streamed to disk in parts, not memory: cache-parts.ts), then
    // read it back: a second load finds it there. If the browser refuses to store it (quota, private
    // mode), load it from the network without caching instead of failing.
    const body = resumable(response);
    try {
      const headers = new Headers(response.headers);
      headers.set(STORED_MODEL_HEADER, this.folderUrl); // which model it is, for listing and deleting (stored-data.ts)
      await putFile(store, url, body, headers, { [STORED_MODEL_HEADER]: this.folderUrl });
      const stored = await matchFile(store, url);
      if (stored) return fromStored(stored, false);
    } catch (e) {
      console.warn(`tessera: the browser cache refused ${url} (${(e as Error).message}); loading it without caching`);
    }
    const again = await this.fetchFile(name);
    return again?.body ? direct(again) : undefined;
  }
}

/** Whether the origin's storage quota has room for `bytes` more (unknown sizes or quotas: assume yes). */
async function roomFor(bytes: number | undefined): Promise<boolean> {
  const storage = (globalThis.navigator as Navigator | undefined)?.storage;
  if (!bytes || !storage?.estimate) return true;
  try {
    const { quota, usage } = await storage.estimate();
    return quota === undefined || usage === undefined || quota - usage > bytes * 1.1;
  } catch {
    return true;
  }
}

function fromStored(s: StoredFile, fromCache: boolean): ByteStream {
  return { stream: iterateStream(s.body()), sizeBytes: s.sizeBytes || undefined, fromCache, version: responseVersion(s) };
}

/** Files picked by the user (matched by base name, so a folder upload's relative paths work too). */
export class FileListSource implements ModelSource {
  readonly where: string;
  private readonly byName = new Map<string, Blob>();

  constructor(files: Iterable<File>) {
    for (const f of files) this.byName.set(f.name.split('/').pop()!, f);
    this.where = `${this.byName.size} selected files`;
  }

  /** A file by its name, or by its base name ('onnx/embed_tokens.onnx' is the picked embed_tokens.onnx). */
  private file(name: string): Blob | undefined {
    return this.byName.get(name) ?? this.byName.get(name.split('/').pop()!);
  }

  async exists(name: string): Promise<boolean> {
    return this.file(name) !== undefined;
  }

  async readText(name: string): Promise<string | undefined> {
    return this.file(name)?.text();
  }

  async openBytes(name: string): Promise<ByteStream | undefined> {
    const blob = this.file(name);
    const modified = (blob as File | undefined)?.lastModified;
    return blob
      ? {
          stream: iterateStream(readChunkwise(blob.stream())),
          sizeBytes: blob.size,
          fromCache: true,
          version: modified === undefined ? undefined : `mtime:${modified}`,
        }
      : undefined;
  }
}

/** A directory the user granted (File System Access API). */
export class DirectoryHandleSource implements ModelSource {
  readonly where: string;

  constructor(private readonly dir: FileSystemDirectoryHandle) {
    this.where = `folder ${dir.name}`;
  }

  /** A file by its path under the folder ('onnx/embed_tokens.onnx' is in its onnx subfolder). */
  private async file(name: string): Promise<File | undefined> {
    try {
      const parts = name.split('/');
      let dir = this.dir;
      for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part);
      return await (await dir.getFileHandle(parts.at(-1)!)).getFile();
    } catch (e) {
      if ((e as DOMException).name === 'NotFoundError') return undefined;
      throw new ModelFileError(`could not read ${name} from ${this.where}: ${(e as Error).message}`, { cause: e });
    }
  }

  async exists(name: string): Promise<boolean> {
    return (await this.file(name)) !== undefined;
  }

  async readText(name: string): Promise<string | undefined> {
    return (await this.file(name))?.text();
  }

  async openBytes(name: string): Promise<ByteStream | undefined> {
    const f = await this.file(name);
    return f
      ? { stream: iterateStream(readChunkwise(f.stream())), sizeBytes: f.size, fromCache: true, version: `mtime:${f.lastModified}` }
      : undefined;
  }
}

/** Files held in memory (tests, or files the caller already has). */
export class MemorySource implements ModelSource {
  constructor(
    private readonly entries: Record<string, string | Uint8Array>,
    readonly where = 'in-memory files',
  ) {}

  async readText(name: string): Promise<string | undefined> {
    if (!Object.hasOwn(this.entries, name)) return undefined;
    const v = this.entries[name];
    return typeof v === 'string' ? v : new TextDecoder().decode(v);
  }

  async openBytes(name: string): Promise<ByteStream | undefined> {
    if (!Object.hasOwn(this.entries, name)) return undefined;
    const v = this.entries[name];
    const bytes = typeof v === 'string' ? new TextEncoder().encode(v) : v;
    async function* once() {
      yield bytes;
    }
    return { stream: once(), sizeBytes: bytes.byteLength, fromCache: true };
  }
}
