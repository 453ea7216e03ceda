// Media embeddings for requests, each image encoded at most once per model: across requests (memory
// tier, refcounted per request), page reloads (persistent tier: IndexedDB / files), and tabs (an exclusive
// Web Lock per key while one of them encodes). The encoding itself happens in a backend: encoder workers
// (EncoderWorkerPool) or, with the same code, an EncoderCore on this thread.
//
//   embeddings(key) ─► memory tier ── hit ───────────────────────────────────────────► 'memory'
//                        │ in flight (another request) ── wait for the same job ────► 'inflight'
//                        └ produce: persistent tier ── verified hit ──────────────────► 'persistent'
//                                    └ lock(key) ─► persistent again (another tab) ──► 'persistent'
//                                                  └ encode in a worker ─► store ───► 'encoded'

import type { PersistentEncoderCache } from '../cache/persistent-cache';
import { MemoryEncoderCache } from '../cache/memory-cache';
import { EncodeTimeoutError, RequestAbortedError } from '../errors';
import type { EncodedMedia, EncoderWorkerInfo, PrepareOptions, PreparedMedia } from '../protocol/encoder';

/** What encodes: an EncoderWorkerPool, or an in-process EncoderCore wrapped to this shape. */
export interface EncodeBackend {
  /** 'workers' (a pool of encoder workers) or 'in-process' (this thread). */
  readonly kind: 'workers' | 'in-process';
  readonly info: EncoderWorkerInfo;
  prepare(bytes: Uint8Array, options?: PrepareOptions): Promise<PreparedMedia>;
  encode(key: string): Promise<EncodedMedia>;
  forget(key: string): Promise<void>;
  queueDepth(): number;
  destroy(): void;
}

export type EmbeddingSource = 'memory' | 'inflight' | 'persistent' | 'encoded';

export interface MediaEmbeddings {
  /** [numTokens, hidden] f32 on the host; shared with the cache: never modify it. */
  data: Float32Array;
  source: EmbeddingSource;
}

/** The subset of the Web Locks API used here (navigator.locks). */
export interface LockManagerLike {
  request<T>(name: string, callback: () => Promise<T>): Promise<T>;
}

export interface MediaEncoderOptions {
  memoryCacheBytes: number;
  persistent?: PersistentEncoderCache;
  locks?: LockManagerLike;
  /** Counts lifecycle transitions (ENCODING, READY). */
  lifecycle: LifecycleCounters;
}

export interface LifecycleCounters {
  encoding: number;
  ready: number;
  staged: number;
  spliced: number;
  prefilled: number;
  released: number;
}

export interface MediaEncoderStats {
  mode: 'workers' | 'in-process';
  memoryHits: number;
  inflightJoins: number;
  persistentHits: number;
  misses: number;
  encodes: number;
  /** Encodes that shared a forward pass with another image (cross-request batching). */
  batchedEncodes: number;
  memoryBytes: number;
  /** Memory-tier entries referenced by running requests (0 once every request has ended) and their bytes. */
  referencedEntries: number;
  referencedBytes: number;
  memoryEvictions: number;
  persistentBytes: number;
  persistentEvictions: number;
  persistentCorrupt: number;
  persistentForeign: number;
  persistentDegraded: boolean;
  encodeMs: { p50: number; p95: number; count: number };
  queueDepth: number;
}

function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

export class MediaEncoder {
  private readonly memory: MemoryEncoderCache<Float32Array>;
  private readonly encodeTimes: number[] = [];
  private readonly counts = { persistentHits: 0, misses: 0, encodes: 0, batchedEncodes: 0 };

  constructor(
    readonly backend: EncodeBackend,
    private readonly options: MediaEncoderOptions,
  ) {
    this.memory = new MemoryEncoderCache<Float32Array>({ capacityBytes: options.memoryCacheBytes });
  }

  get info(): EncoderWorkerInfo {
    return this.backend.info;
  }

  /** Key and layout (hashing, decoding and tiling happen in the backend). */
  prepare(bytes: Uint8Array, options?: PrepareOptions): Promise<PreparedMedia> {
    return this.backend.prepare(bytes, options);
  }

  /** Drop prepared pixels that will not be encoded. */
  forget(media: PreparedMedia): void {
    void this.backend.forget(media.key);
  }

  async embeddings(
    media: PreparedMedia,
    requestId: number,
    options: { signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<MediaEmbeddings> {
    const sizeBytes = media.numTokens * this.info.hiddenSize * 4;
    const origin: { source: EmbeddingSource } = { source: 'encoded' };
    const work = this.memory.getOrProduce(media.key, requestId, sizeBytes, async () => {
      const stored = await this.fromPersistent(media.key);
      if (stored) {
        origin.source = 'persistent';
        this.forget(media);
        return stored;
      }
      const encode = () => this.encodeUnlessStored(media, options.timeoutMs, origin);
      return this.options.locks ? this.options.locks.request(`tessera-encode:${media.key}`, encode) : encode();
    });
    const result = await abortable(work, options.signal);
    if (result.source === 'produced') return { data: result.value, source: origin.source };
    this.forget(media); // answered from memory or another request's job: this request's pixels are unused
    return { data: result.value, source: result.source };
  }

  private async fromPersistent(key: string): Promise<Float32Array | undefined> {
    const hit = await this.options.persistent?.get(key);
    if (hit) {
      this.counts.persistentHits++;
      return hit.data;
    }
    return undefined;
  }

  /** Inside the key's lock: another tab may have stored it while we waited. */
  private async encodeUnlessStored(
    media: PreparedMedia,
    timeoutMs: number | undefined,
    origin: { source: EmbeddingSource },
  ): Promise<Float32Array> {
    const stored = await this.fromPersistent(media.key);
    if (stored) {
      origin.source = 'persistent';
      this.forget(media);
      return stored;
    }
    this.counts.misses++;
    this.options.lifecycle.encoding++;
    const t0 = performance.now();
    const encoded = await withTimeout(this.backend.encode(media.key), timeoutMs);
    this.counts.encodes++;
    if (encoded.batchImages > 1) this.counts.batchedEncodes++;
    this.encodeTimes.push(performance.now() - t0);
    this.options.lifecycle.ready++;
    await this.options.persistent?.put(media.key, encoded.embeddings, [encoded.numTokens, encoded.hiddenSize]);
    origin.source = 'encoded';
    return encoded.embeddings;
  }

  /** The request is done with its media: its references go; entries stay cached (freeable). */
  release(requestId: number): void {
    this.memory.release(requestId);
  }

  /** What the persistent tier holds (empty when there is none). */
  async inspect(): Promise<{ entries: Array<{ key: string; sizeBytes: number; lastUsedAt: number }>; totalBytes: number }> {
    const p = this.options.persistent;
    if (!p) return { entries: [], totalBytes: 0 };
    const r = await p.inspect();
    return { entries: r.entries.map((e) => ({ key: e.key, sizeBytes: e.sizeBytes, lastUsedAt: e.lastUsedAt })), totalBytes: r.totalBytes };
  }

  /** Empty both tiers (entries still referenced by running requests stay in memory until released). */
  async clear(): Promise<void> {
    this.memory.clear();
    await this.options.persistent?.clear();
  }

  /** Live references (0 for every key once all requests finished). */
  refCount(key: string): number {
    return this.memory.refCount(key);
  }

  stats(): MediaEncoderStats {
    const m = this.memory.stats();
    const p = this.options.persistent?.stats();
    const times = [...this.encodeTimes].sort((a, b) => a - b);
    return {
      mode: this.backend.kind,
      memoryHits: m.hits,
      inflightJoins: m.inflightJoins,
      persistentHits: this.counts.persistentHits,
      misses: this.counts.misses,
      encodes: this.counts.encodes,
      batchedEncodes: this.counts.batchedEncodes,
      memoryBytes: m.usedBytes,
      referencedEntries: m.numReferenced,
      referencedBytes: m.referencedBytes,
      memoryEvictions: m.evictions,
      persistentBytes: p?.bytes ?? 0,
      persistentEvictions: p?.evictions ?? 0,
      persistentCorrupt: p?.corrupt ?? 0,
      persistentForeign: p?.foreign ?? 0,
      persistentDegraded: p?.degraded ?? false,
      encodeMs: { p50: percentile(times, 0.5), p95: percentile(times, 0.95), count: times.length },
      queueDepth: this.backend.queueDepth(),
    };
  }

  destroy(): void {
    this.backend.destroy();
  }
}

function withTimeout<T>(p: Promise<T>, timeoutMs: number | undefined): Promise<T> {
  if (!timeoutMs) return p;
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(new EncodeTimeoutError(timeoutMs)), timeoutMs);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        reject(e);
      },
    );
  });
}

/** Stop waiting when `signal` aborts (the shared work itself goes on for other waiters). */
function abortable<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  if (signal.aborted) return Promise.reject(new RequestAbortedError(signal.reason));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new RequestAbortedError(signal.reason));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
