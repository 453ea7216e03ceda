// Media embeddings for requests, each image encoded at most once per model: across requests (memory
// tier, refcounted per request), page reloads (persistent tier: IndexedDB / files), and tabs (an exclusive
// Web Lock per key while one of them encodes). The encoding itself happens in a backend: encoder workers
// (EncoderWorkerPool) or, with the same code, an EncoderCore on this thread.
//
// Two calls, so that the scheduler decides when encoder work starts (docs/design.md invariant 5):
//   lookup(item)        memory tier hit ──────────────────────────────────────────────► 'memory'
//                       persistent tier verified hit (copied into memory) ─────────────► 'persistent'
//                       otherwise undefined: nothing referenced, nothing started (an item another
//                       request is encoding right now is left to encodeBatch, which joins that job)
//   encodeBatch(items)  per item: memory hit / join an in-flight job ──────► 'memory' / 'inflight'
//                       the rest, together: lock(keys) ─► persistent again (another tab) ► 'persistent'
//                                                      └ one backend batch ─► store ───► 'encoded'
//
// Video: prepareVideo() has the backend sample and decode a clip; each sampled frame is then an
// ordinary item (its own key and placeholder run) for lookup/encodeBatch. A clip index (whole-clip key ->
// frame keys, timestamps, metadata) lets a repeat skip demuxing and decoding whenever every frame's
// embeddings are still in a tier. With pruning (EVS), a video is one composite item whose parts are its
// frames: encoding it encodes (or finds) the frames, then keeps the evs.ts selection; the frames stay
// cached one by one, the pruned result under a key derived from theirs and the rate.

import type { PersistentEncoderCache } from '../cache/persistent-cache';
import { MemoryEncoderCache } from '../cache/memory-cache';
import { contentKey } from '../cache/content-key';
import { EncodeTimeoutError, InternalError, RequestAbortedError } from '../errors';
import type {
  AudioSource,
  EncodedMedia,
  EncoderDeviceMemory,
  EncoderWorkerInfo,
  PrepareAudioOptions,
  PreparedAudio,
  PrepareOptions,
  PreparedMedia,
  PreparedVideo,
  PreparedVideoFrame,
  PrepareVideoOptions,
  VideoMetaInfo,
  VideoSource,
} from '../protocol/encoder';
import { evsPrune } from './video/evs';

/** What encodes: an EncoderWorkerPool, or an in-process EncoderCore wrapped to this shape. */
export interface EncodeBackend {
  /** 'workers' (a pool of encoder workers) or 'in-process' (this thread). */
  readonly kind: 'workers' | 'in-process';
  readonly info: EncoderWorkerInfo;
  prepare(bytes: Uint8Array, options?: PrepareOptions): Promise<PreparedMedia>;
  /** Sample and decode a video's frames (kept like prepared images); see protocol/encoder.ts. */
  prepareVideo(source: VideoSource, options?: PrepareVideoOptions): Promise<PreparedVideo>;
  /** Decode an audio part into prepared 30-second chunks; see protocol/encoder.ts. */
  prepareAudio(source: AudioSource, options: PrepareAudioOptions): Promise<PreparedAudio>;
  encode(key: string): Promise<EncodedMedia>;
  /** Encode several prepared keys as one batch (results in key order). */
  encodeBatch(keys: string[]): Promise<EncodedMedia[]>;
  /** Decode priority: see piece-gate.ts. */
  setPaced(paced: boolean): void;
  grant(budgetMs: number): Promise<number>;
  forget(key: string): Promise<void>;
  queueDepth(): number;
  /**
   * GPU memory on devices of the backend's own (encoder workers'); undefined when it has none: in-process
   * encoding shares the engine's device (counted in engine.stats().gpuMemory), and the CPU backend has none.
   */
  deviceMemory?(): EncoderDeviceMemory | undefined;
  /** What the backend holds and waits on now, for a stall report (src/engine/stall.ts). */
  state?(): Record<string, unknown>;
  destroy(): void;
}

/** Where embeddings came from; 'given': the request carried them (an image_embeds part). */
type EmbeddingSource = 'memory' | 'inflight' | 'persistent' | 'encoded' | 'given';

/** A video pruned with EVS: one item whose embeddings are chosen from its frames' (evs.ts). */
export interface CompositeMedia extends PreparedMedia {
  /** The frames, in order; each a media item of its own in the cache. */
  parts: readonly PreparedMedia[];
  /** EVS pruning rate q in (0, 1); numTokens is the retained count. */
  pruneRate: number;
}

export function isComposite(m: PreparedMedia): m is CompositeMedia {
  return (m as CompositeMedia).parts !== undefined;
}

/** A video ready for planning: its sampled frames, each with its embeddings when a tier already had them. */
export interface VideoClip {
  clipKey?: string;
  meta: VideoMetaInfo;
  frames: Array<PreparedVideoFrame & { cached?: MediaEmbeddings }>;
  /** 'decoded' (demuxed and decoded now) or 'clip-cache' (known clip: nothing decoded). */
  source: 'decoded' | 'clip-cache';
}

/** Whole clips remembered (their frame keys and timestamps, not their pixels). */
const MAX_CLIP_RECORDS = 256;

/** One media item to encode for one request. */
export interface EncodeItem {
  media: PreparedMedia;
  requestId: number;
  signal?: AbortSignal;
  timeoutMs?: number;
}

interface PendingEncode {
  media: PreparedMedia;
  job: Deferred<Float32Array>;
  origin: { source: EmbeddingSource };
  timeoutMs: number | undefined;
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve(v: T): void;
  reject(e: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export interface MediaEmbeddings {
  /** [numTokens × (1 + info.deepstackLevels), hidden] f32 on the host; shared with the cache: never modify it. */
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
  /** Videos: clips prepared (demuxed + decoded), answered from the clip index (nothing decoded), frames decoded. */
  video: { clipsDecoded: number; clipCacheHits: number; framesDecoded: number; demuxMs: number; decodeMs: number };
  /** Audio: parts decoded, their 30-second chunks, and the time decoding (with resampling) and log-mel took. */
  audio: { decoded: number; chunks: number; decodeMs: number; featuresMs: number };
  /**
   * GPU memory the encoder workers hold on their own devices (live and high-water bytes, summed over the
   * workers), apart from engine.stats().gpuMemory, which counts the engine's device (and in-process
   * encoding, which shares it). Undefined in-process, on the CPU backend, and before a worker's first encode.
   */
  gpuMemory?: EncoderDeviceMemory;
}

function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

export class MediaEncoder {
  private readonly memory: MemoryEncoderCache<Float32Array>;
  private readonly encodeTimes: number[] = [];
  private readonly counts = { persistentHits: 0, misses: 0, encodes: 0, batchedEncodes: 0 };
  private readonly videoCounts = { clipsDecoded: 0, clipCacheHits: 0, framesDecoded: 0, demuxMs: 0, decodeMs: 0 };
  private readonly audioCounts = { decoded: 0, chunks: 0, decodeMs: 0, featuresMs: 0 };
  /** Whole-clip key -> what sampling and decoding gave (LRU order: least recently used first). */
  private readonly clips = new Map<string, { meta: VideoMetaInfo; frames: PreparedVideoFrame[]; thumbnailEdge: number }>();
  private paced = false;
  /** Items handed to the backend to encode and not settled yet. */
  private encodesRunning = 0;
  /** Requests holding each prepared key (see hold()). */
  private readonly holds = new Map<string, number>();

  constructor(
    public backend: EncodeBackend,
    private readonly options: MediaEncoderOptions,
  ) {
    this.memory = new MemoryEncoderCache<Float32Array>({ capacityBytes: options.memoryCacheBytes });
  }

  get info(): EncoderWorkerInfo {
    return this.backend.info;
  }

  /** Key and layout (hashing, decoding and tiling happen in the backend). */
  async prepare(bytes: Uint8Array, options?: PrepareOptions): Promise<PreparedMedia> {
    const prepared = await this.backend.prepare(bytes, options);
    this.hold(prepared.key);
    return prepared;
  }

  /**
   * One more request holds the backend's prepared pixels (or features) of `key`. Requests with the same
   * media share one prepared item; forget() lets it go only when the last holder does, and an encode
   * consumes it for all of them.
   */
  private hold(key: string): void {
    this.holds.set(key, (this.holds.get(key) ?? 0) + 1);
  }

  /**
   * Decode an audio part into its 30-second chunks; each is then an ordinary item (its own key and
   * placeholder run) for lookup / encodeBatch, so a chunk seen before (the same recording, or the start of
   * one that has grown) is not encoded again.
   */
  async prepareAudio(source: AudioSource, options: PrepareAudioOptions): Promise<PreparedAudio> {
    const out = await this.backend.prepareAudio(source, options);
    for (const c of out.chunks) this.hold(c.media.key);
    this.audioCounts.decoded++;
    this.audioCounts.chunks += out.chunks.length;
    this.audioCounts.decodeMs += out.decodeMs;
    this.audioCounts.featuresMs += out.featuresMs;
    return out;
  }

  /** Drop prepared pixels that will not be encoded (a pruned video's: its frames'). */
  forget(media: PreparedMedia): void {
    for (const key of isComposite(media) ? media.parts.map((p) => p.key) : [media.key]) {
      const n = this.holds.get(key);
      if (n !== undefined && n > 1) {
        this.holds.set(key, n - 1); // another request still needs it
        continue;
      }
      this.holds.delete(key);
      void this.backend.forget(key);
    }
  }

  /**
   * A video's sampled frames for requestId. A clip seen before (same bytes and config) whose frames' embeddings
   * are all still cached is answered from the clip index, decoding nothing; its frames come back referenced
   * for requestId with their embeddings (`cached`). Otherwise the backend demuxes and decodes it.
   */
  async prepareVideo(source: VideoSource, requestId: number, options: { thumbnailEdge?: number } = {}): Promise<VideoClip> {
    const thumbnailEdge = options.thumbnailEdge ?? 0;
    let r = await this.backend.prepareVideo(source, { knownClips: [...this.clips.keys()], thumbnailEdge });
    if (r.known) {
      const record = this.clips.get(r.clipKey!);
      if (record && record.thumbnailEdge >= thumbnailEdge) {
        const hits = await Promise.all(record.frames.map((f) => this.lookup(f.media, requestId)));
        if (hits.every((h) => h !== undefined)) {
          this.clips.delete(r.clipKey!);
          this.clips.set(r.clipKey!, record);
          this.videoCounts.clipCacheHits++;
          const frames = record.frames.map((f, i) => ({ ...f, thumbnail: thumbnailEdge ? f.thumbnail : undefined, cached: hits[i] }));
          return { clipKey: r.clipKey, meta: record.meta, frames, source: 'clip-cache' };
        }
      }
      // Some frame left every tier (or the record did): decode the clip again.
      r = await this.backend.prepareVideo(source, { thumbnailEdge });
    }
    for (const f of r.frames) this.hold(f.media.key);
    this.videoCounts.clipsDecoded++;
    this.videoCounts.framesDecoded += r.numDecoded;
    this.videoCounts.demuxMs += r.demuxMs;
    this.videoCounts.decodeMs += r.decodeMs;
    if (r.clipKey) {
      this.clips.delete(r.clipKey);
      this.clips.set(r.clipKey, { meta: r.meta!, frames: r.frames, thumbnailEdge });
      if (this.clips.size > MAX_CLIP_RECORDS) this.clips.delete(this.clips.keys().next().value!);
    }
    return { clipKey: r.clipKey, meta: r.meta!, frames: r.frames, source: 'decoded' };
  }

  /** A video pruned with EVS at rate q: one item over its frames (numTokens = the retained count). */
  async compositeOf(parts: readonly PreparedMedia[], pruneRate: number, numTokens: number): Promise<CompositeMedia> {
    const key = await contentKey(
      `${this.info.identity}.evs`,
      new TextEncoder().encode(`q=${pruneRate};n=${numTokens};${parts.map((p) => p.key).join(',')}`),
    );
    return { key, layout: parts[0]!.layout, numTokens, parts, pruneRate };
  }

  /** Embeddings already cached (memory or persistent tier), referenced for requestId; undefined otherwise. */
  async lookup(media: PreparedMedia, requestId: number): Promise<MediaEmbeddings | undefined> {
    if (isComposite(media)) return this.lookupComposite(media, requestId);
    const sizeBytes = this.sizeOf(media);
    if (this.memory.has(media.key)) {
      const r = await this.memory.getOrProduce(media.key, requestId, sizeBytes, () =>
        Promise.reject(new InternalError('lookup: stored value vanished')),
      );
      this.forget(media);
      return { data: r.value, source: 'memory' };
    }
    if (this.memory.isInFlight(media.key)) return undefined;
    const stored = await this.fromPersistent(media.key);
    if (!stored) return undefined;
    // Another request may have stored or started it meanwhile: then this joins that value instead.
    const r = await this.memory.getOrProduce(media.key, requestId, sizeBytes, async () => stored);
    this.forget(media);
    return { data: r.value, source: r.source === 'produced' ? 'persistent' : r.source };
  }

  /**
   * Embeddings the request carried (an image_embeds part): kept in the memory tier under media.key and
   * referenced for requestId, so a later part naming the same key finds them. A key already held keeps
   * its value (the key names the embeddings).
   */
  async adopt(media: PreparedMedia, data: Float32Array, requestId: number): Promise<MediaEmbeddings> {
    const r = await this.memory.getOrProduce(media.key, requestId, data.byteLength, async () => data);
    return { data: r.value, source: r.source === 'produced' ? 'given' : r.source };
  }

  /** A pruned video whose frames are all cached: pruned now, on this thread (a few ms), and kept in memory. */
  private async lookupComposite(media: CompositeMedia, requestId: number): Promise<MediaEmbeddings | undefined> {
    if (!this.memory.has(media.key)) {
      if (this.memory.isInFlight(media.key)) return undefined;
      const parts = await Promise.all(media.parts.map((p) => this.lookup(p, requestId)));
      if (parts.some((p) => p === undefined)) return undefined; // the found frames stay referenced; encodeBatch finds them
      const r = await this.memory.getOrProduce(media.key, requestId, this.sizeOf(media), async () =>
        this.prune(
          media,
          parts.map((p) => p!.data),
        ),
      );
      return { data: r.value, source: r.source === 'produced' ? 'memory' : r.source };
    }
    const r = await this.memory.getOrProduce(media.key, requestId, this.sizeOf(media), () =>
      Promise.reject(new InternalError('lookup: stored value vanished')),
    );
    this.forget(media);
    return { data: r.value, source: 'memory' };
  }

  private prune(media: CompositeMedia, frames: Float32Array[]): Float32Array {
    const out = evsPrune(frames, this.info.hiddenSize, media.pruneRate);
    if (out.length !== media.numTokens * this.info.hiddenSize) {
      throw new InternalError(
        `EVS kept ${out.length / this.info.hiddenSize} tokens but the prompt has ${media.numTokens} placeholders for them`,
      );
    }
    return out;
  }

  /**
   * Embeddings for several items (of one or more requests), encoding what no tier holds as ONE backend
   * batch. Each promise settles on its own (a timeout or an abort fails only its item).
   */
  encodeBatch(items: ReadonlyArray<EncodeItem>): Array<Promise<MediaEmbeddings>> {
    const pending: PendingEncode[] = [];
    const out = items.map((item) => {
      const media = item.media;
      if (isComposite(media)) {
        // The frames go through encodeBatch themselves (one batch for this video), then EVS picks the rows.
        const work = this.memory.getOrProduce(media.key, item.requestId, this.sizeOf(media), async () => {
          const frames = await Promise.all(this.encodeBatch(media.parts.map((p) => ({ ...item, media: p }))));
          return this.prune(
            media,
            frames.map((f) => f.data),
          );
        });
        return abortable(work, item.signal).then((r) => {
          if (r.source !== 'produced') this.forget(media); // answered without its frames: their pixels are unused
          return { data: r.value, source: r.source === 'produced' ? ('encoded' as const) : r.source };
        });
      }
      const origin: { source: EmbeddingSource } = { source: 'encoded' };
      const work = this.memory.getOrProduce(item.media.key, item.requestId, this.sizeOf(item.media), () => {
        const job = deferred<Float32Array>();
        pending.push({ media: item.media, job, origin, timeoutMs: item.timeoutMs });
        return job.promise;
      });
      return abortable(work, item.signal).then((r) => {
        if (r.source !== 'produced') this.forget(item.media); // answered from memory or another job: these pixels are unused
        return { data: r.value, source: r.source === 'produced' ? origin.source : r.source };
      });
    });
    if (pending.length > 0) void this.runBatch(pending);
    return out;
  }

  /** One item, looked up first and encoded if no tier has it (tests and tools; the engine goes through the scheduler). */
  async embeddings(
    media: PreparedMedia,
    requestId: number,
    options: { signal?: AbortSignal; timeoutMs?: number } = {},
  ): Promise<MediaEmbeddings> {
    return (await this.lookup(media, requestId)) ?? (await this.encodeBatch([{ media, requestId, ...options }])[0]);
  }

  private sizeOf(media: PreparedMedia): number {
    return media.numTokens * (1 + this.info.deepstackLevels) * this.info.hiddenSize * 4;
  }

  /** Encode a batch under the keys' locks (other tabs), after a last look in the persistent tier. */
  private async runBatch(batch: PendingEncode[]): Promise<void> {
    const run = async () => {
      const toEncode: PendingEncode[] = [];
      for (const p of batch) {
        const stored = await this.fromPersistent(p.media.key);
        if (stored) {
          p.origin.source = 'persistent';
          this.forget(p.media);
          p.job.resolve(stored);
        } else {
          toEncode.push(p);
        }
      }
      if (toEncode.length === 0) return;
      this.counts.misses += toEncode.length;
      this.options.lifecycle.encoding += toEncode.length;
      const t0 = performance.now();
      const all = this.backend.encodeBatch(toEncode.map((p) => p.media.key));
      for (const p of toEncode) this.holds.delete(p.media.key); // consumed by the encode, for every holder
      this.encodesRunning += toEncode.length;
      void all.then(
        () => (this.encodesRunning -= toEncode.length),
        () => (this.encodesRunning -= toEncode.length),
      );
      await Promise.all(
        toEncode.map(async (p, i) => {
          try {
            const encoded = (await withTimeout(all, p.timeoutMs))[i];
            this.counts.encodes++;
            if (toEncode.length > 1 || encoded.batchImages > 1) this.counts.batchedEncodes++;
            this.encodeTimes.push(performance.now() - t0);
            this.options.lifecycle.ready++;
            p.origin.source = 'encoded';
            p.job.resolve(encoded.embeddings);
            await this.options.persistent?.put(p.media.key, encoded.embeddings, [
              encoded.embeddings.length / encoded.hiddenSize,
              encoded.hiddenSize,
            ]);
          } catch (e) {
            p.job.reject(e);
          }
        }),
      );
    };
    try {
      const locks = this.options.locks;
      if (!locks) return await run();
      // Keys in sorted order: two tabs locking overlapping sets never wait on each other in a cycle.
      const keys = [...new Set(batch.map((p) => p.media.key))].sort();
      const lockAll = (i: number): Promise<void> =>
        i === keys.length ? run() : locks.request(`tessera-encode:${keys[i]}`, () => lockAll(i + 1));
      await lockAll(0);
    } catch (e) {
      for (const p of batch) p.job.reject(e);
    }
  }

  private async fromPersistent(key: string): Promise<Float32Array | undefined> {
    const hit = await this.options.persistent?.get(key);
    if (hit) {
      this.counts.persistentHits++;
      return hit.data;
    }
    return undefined;
  }

  /**
   * Swap the backend (an in-process encoder whose GPU device was lost and recreated); the cache tiers
   * stay. The old backend is destroyed.
   */
  replaceBackend(backend: EncodeBackend): void {
    const old = this.backend;
    this.backend = backend;
    if (this.paced) backend.setPaced(true);
    old.destroy();
  }

  /** Decode priority (piece-gate.ts): pace the encoder's GPU work, or let it run freely. */
  setPaced(paced: boolean): void {
    if (paced === this.paced) return;
    this.paced = paced;
    this.backend.setPaced(paced);
  }

  /** What the encoder holds and waits on now (a stall report's view). */
  state(): Record<string, unknown> {
    return {
      mode: this.backend.kind,
      paced: this.paced,
      encodesRunning: this.encodesRunning,
      callsInFlight: this.backend.queueDepth(),
      ...this.backend.state?.(),
    };
  }

  /** Let a paced encoder work for about budgetMs; resolves with the time it spent (0: nothing to do). */
  grant(budgetMs: number): Promise<number> {
    return this.backend.grant(budgetMs);
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
      video: { ...this.videoCounts },
      audio: { ...this.audioCounts },
      ...this.workerMemory(),
    };
  }

  private workerMemory(): { gpuMemory?: EncoderDeviceMemory } {
    const m = this.backend.deviceMemory?.();
    return m ? { gpuMemory: m } : {};
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
