// A pool of encoder workers driven through comlink. Each worker owns a GPUDevice and the vision weights.
// prepare() goes to the least-busy worker, and the image's pixels stay there, so encode() of that key
// goes to the same worker. A worker that crashes (or is killed) fails only the calls it held, with
// EncoderWorkerCrashedError, and is replaced by a fresh one; the other workers carry on. A worker whose
// script did not load is not replaced (a new one would load the same script): its calls, and later calls
// to its slot, fail with the spawner's error (EncoderWorkerLoadError).
//
//   slot 0: worker ─ pending {prepare k1, encode k0}     keys: k0 -> {0}, k1 -> {0, 1}
//   slot 1: worker ─ pending {encode k2}                 keys: k2 -> {1}
// (the same image prepared by two requests on two workers is held by both until one encodes it).

import * as Comlink from 'comlink';
import { EncoderWorkerCrashedError, InternalError, MediaNotPreparedError } from '../errors';
import type {
  AudioPcm,
  AudioSource,
  EncodedMedia,
  EncoderDeviceMemory,
  EncoderWorkerApi,
  EncoderWorkerInfo,
  EncoderWorkerInit,
  PrepareAudioOptions,
  PreparedAudio,
  PrepareOptions,
  PreparedMedia,
  PreparedVideo,
  PrepareVideoOptions,
  VideoFramesSource,
  VideoSource,
} from '../protocol/encoder';
import { installErrorTransfer } from '../protocol/errors';

/** A started worker: its comlink endpoint, a way to stop it, and a way to hear that it died. */
export interface WorkerHandle {
  endpoint: Comlink.Endpoint;
  terminate(): void;
  /** `loadError`: the worker's script never loaded; calls fail with it and the worker is not restarted. */
  onExit(listener: (reason: string, loadError?: Error) => void): void;
}

export type SpawnWorker = (index: number) => WorkerHandle;

interface Slot {
  index: number;
  handle: WorkerHandle;
  api: Comlink.Remote<EncoderWorkerApi>;
  ready: Promise<EncoderWorkerInfo>;
  pending: Set<(e: Error) => void>;
  alive: boolean;
  /** Set when the worker's script did not load. */
  loadError?: Error;
  /** Its encoder's GPU device as its last encode left it (its own device: not the engine's). */
  deviceMemory?: EncoderDeviceMemory;
}

export interface WorkerPoolStats {
  workers: number;
  restarts: number;
  /** Calls sent to workers and not yet answered. */
  queueDepth: number;
}

export class EncoderWorkerPool {
  readonly kind = 'workers';
  private readonly slots: Slot[] = [];
  private readonly keyOwners = new Map<string, Set<Slot>>();
  private restarts = 0;
  private closed = false;

  private constructor(
    private readonly spawn: SpawnWorker,
    private readonly init: EncoderWorkerInit,
    readonly info: EncoderWorkerInfo,
  ) {}

  static async start(spawn: SpawnWorker, init: EncoderWorkerInit, size: number): Promise<EncoderWorkerPool> {
    if (!Number.isInteger(size) || size < 1) throw new InternalError(`encoder pool size must be >= 1, got ${size}`);
    installErrorTransfer();
    const pool = new EncoderWorkerPool(spawn, init, undefined as unknown as EncoderWorkerInfo);
    for (let i = 0; i < size; i++) pool.slots.push(pool.startSlot(i));
    try {
      const infos = await Promise.all(pool.slots.map((s) => s.ready));
      (pool as { info: EncoderWorkerInfo }).info = infos[0];
    } catch (e) {
      pool.terminate();
      throw e;
    }
    return pool;
  }

  private startSlot(index: number): Slot {
    const handle = this.spawn(index);
    const slot: Slot = {
      index,
      handle,
      api: Comlink.wrap<EncoderWorkerApi>(handle.endpoint),
      ready: Promise.resolve(undefined as unknown as EncoderWorkerInfo),
      pending: new Set(),
      alive: true,
    };
    handle.onExit((reason, loadError) => this.onExit(slot, reason, loadError));
    slot.ready = this.track(slot, slot.api.init(this.init)).then((info) => {
      if (info.deviceMemory) slot.deviceMemory = info.deviceMemory;
      return info;
    });
    return slot;
  }

  private onExit(slot: Slot, reason: string, loadError?: Error): void {
    if (!slot.alive) return;
    slot.alive = false;
    slot.loadError = loadError;
    const error = loadError ?? new EncoderWorkerCrashedError(slot.index, reason);
    for (const reject of slot.pending) reject(error);
    slot.pending.clear();
    for (const [key, owners] of this.keyOwners) {
      owners.delete(slot);
      if (owners.size === 0) this.keyOwners.delete(key);
    }
    if (this.closed || loadError) return;
    this.restarts++;
    const fresh = this.startSlot(slot.index);
    fresh.ready.catch(() => undefined); // a failing restart surfaces on the next call to that slot
    this.slots[slot.index] = fresh;
  }

  /** Settle `call` normally, or reject it at once if its worker dies first. */
  private track<T>(slot: Slot, call: Promise<T>): Promise<T> {
    if (!slot.alive) return Promise.reject(slot.loadError ?? new EncoderWorkerCrashedError(slot.index, 'already stopped'));
    return new Promise<T>((resolve, reject) => {
      const fail = (e: Error) => reject(e);
      slot.pending.add(fail);
      call.then(
        (v) => {
          slot.pending.delete(fail);
          resolve(v);
        },
        (e: unknown) => {
          slot.pending.delete(fail);
          reject(e);
        },
      );
    });
  }

  private leastBusy(): Slot {
    return this.slots.reduce((best, s) => (s.alive && s.pending.size < best.pending.size ? s : best), this.slots[0]);
  }

  async prepare(bytes: Uint8Array, options?: PrepareOptions): Promise<PreparedMedia> {
    const slot = this.leastBusy();
    await this.track(slot, slot.ready);
    // Transfer only a buffer made here: `bytes` is the caller's (a Node Buffer's slice() is a view of the
    // same memory, often a pooled ArrayBuffer shared with unrelated Buffers), and the caller also keeps it
    // for a retry at another resolution. new Uint8Array(view) copies into a fresh, exactly sized buffer.
    const copy = new Uint8Array(bytes);
    const prepared = await this.track(slot, slot.api.prepare(Comlink.transfer(copy, [copy.buffer]), options));
    let owners = this.keyOwners.get(prepared.key);
    if (!owners) this.keyOwners.set(prepared.key, (owners = new Set()));
    owners.add(slot);
    return prepared;
  }

  /**
   * A video goes to the least-busy worker, which demuxes, decodes and keeps its sampled frames: their keys
   * are owned by that worker, so the frames' encodes run there, in batches of maxBatchTiles.
   */
  async prepareVideo(source: VideoSource, options?: PrepareVideoOptions): Promise<PreparedVideo> {
    const slot = this.leastBusy();
    await this.track(slot, slot.ready);
    const send = (s: VideoSource) => {
      const sent = copyForTransfer(s);
      return this.track(slot, slot.api.prepareVideo(Comlink.transfer(sent.source, sent.buffers), options));
    };
    let prepared: PreparedVideo;
    try {
      prepared = await send(source);
    } catch (e) {
      // Node cannot post a file-backed Blob (fs.openAsBlob) to a worker thread: send its bytes instead.
      if (!(source instanceof Blob) || !/clone/i.test(String((e as Error)?.message ?? e))) throw e;
      prepared = await send(new Uint8Array(await source.arrayBuffer()));
    }
    for (const f of prepared.frames) {
      let owners = this.keyOwners.get(f.media.key);
      if (!owners) this.keyOwners.set(f.media.key, (owners = new Set()));
      owners.add(slot);
    }
    return prepared;
  }

  /** An audio part goes to the least-busy worker, which decodes it and keeps its chunks' features (it owns their keys). */
  async prepareAudio(source: AudioSource, options: PrepareAudioOptions): Promise<PreparedAudio> {
    const slot = this.leastBusy();
    await this.track(slot, slot.ready);
    // Transfer copies made here (the caller keeps its own); a Blob is posted as it is.
    const send = (s: AudioSource) => {
      if (s instanceof Uint8Array) {
        const copy = s.slice();
        return this.track(slot, slot.api.prepareAudio(Comlink.transfer(copy, [copy.buffer]), options));
      }
      if (typeof Blob !== 'undefined' && s instanceof Blob) return this.track(slot, slot.api.prepareAudio(s, options));
      const pcm = (s as AudioPcm).pcm.slice();
      return this.track(slot, slot.api.prepareAudio(Comlink.transfer({ ...(s as AudioPcm), pcm }, [pcm.buffer]), options));
    };
    let prepared: PreparedAudio;
    try {
      prepared = await send(source);
    } catch (e) {
      // Node cannot post a file-backed Blob (fs.openAsBlob) to a worker thread: send its bytes instead.
      if (!(source instanceof Blob) || !/clone/i.test(String((e as Error)?.message ?? e))) throw e;
      prepared = await send(new Uint8Array(await source.arrayBuffer()));
    }
    for (const c of prepared.chunks) {
      let owners = this.keyOwners.get(c.media.key);
      if (!owners) this.keyOwners.set(c.media.key, (owners = new Set()));
      owners.add(slot);
    }
    return prepared;
  }

  /** Encode on a worker that holds the key's pixels; the other holders drop theirs. */
  async encode(key: string): Promise<EncodedMedia> {
    const owners = [...(this.keyOwners.get(key) ?? [])].filter((s) => s.alive);
    if (owners.length === 0) throw new MediaNotPreparedError(key);
    this.keyOwners.delete(key);
    const [slot, ...others] = owners;
    for (const o of others) void this.track(o, o.api.forget(key)).catch(() => undefined);
    const out = await this.track(slot, slot.api.encode(key));
    if (out.deviceMemory) slot.deviceMemory = out.deviceMemory;
    return out;
  }

  /** Encode keys together: one batch per worker holding some of them. Results in key order. */
  async encodeBatch(keys: readonly string[]): Promise<EncodedMedia[]> {
    const bySlot = new Map<Slot, string[]>();
    for (const key of keys) {
      const owners = [...(this.keyOwners.get(key) ?? [])].filter((s) => s.alive);
      if (owners.length === 0) throw new MediaNotPreparedError(key);
      this.keyOwners.delete(key);
      const [slot, ...others] = owners;
      for (const o of others) void this.track(o, o.api.forget(key)).catch(() => undefined);
      if (!bySlot.has(slot)) bySlot.set(slot, []);
      bySlot.get(slot)!.push(key);
    }
    const results = new Map<string, EncodedMedia>();
    await Promise.all(
      [...bySlot].map(async ([slot, ks]) => {
        const out = await this.track(slot, slot.api.encodeBatch(ks));
        for (const m of out) {
          results.set(m.key, m);
          if (m.deviceMemory) slot.deviceMemory = m.deviceMemory;
        }
      }),
    );
    return keys.map((k) => results.get(k)!);
  }

  setPaced(paced: boolean): void {
    for (const s of this.slots) if (s.alive) void this.track(s, s.api.setPaced(paced)).catch(() => undefined);
  }

  /** Grant every worker the budget (they run side by side); resolves with the longest time spent. */
  async grant(budgetMs: number): Promise<number> {
    const spent = await Promise.all(this.slots.filter((s) => s.alive).map((s) => this.track(s, s.api.grant(budgetMs)).catch(() => 0)));
    return Math.max(0, ...spent);
  }

  async forget(key: string): Promise<void> {
    const owners = this.keyOwners.get(key);
    if (!owners) return;
    this.keyOwners.delete(key);
    await Promise.all([...owners].map((o) => this.track(o, o.api.forget(key)).catch(() => undefined)));
  }

  /**
   * GPU memory on the workers' own devices, as their last encodes left it: live bytes and high-water marks,
   * summed over the workers (each worker's peak may fall at another time, so the sum bounds theirs together
   * from above). Undefined until a worker on WebGPU has encoded (a worker on the CPU backend holds none).
   */
  deviceMemory(): EncoderDeviceMemory | undefined {
    const seen = this.slots.flatMap((s) => (s.deviceMemory ? [s.deviceMemory] : []));
    if (seen.length === 0) return undefined;
    return { bytesLive: seen.reduce((a, m) => a + m.bytesLive, 0), peakBytes: seen.reduce((a, m) => a + m.peakBytes, 0) };
  }

  /** Each worker's calls not yet answered, and whether it is alive (a stall report's view). */
  state(): Record<string, unknown> {
    return { workers: this.slots.map((s) => ({ index: s.index, alive: s.alive, callsInFlight: s.pending.size })) };
  }

  queueDepth(): number {
    return this.slots.reduce((a, s) => a + s.pending.size, 0);
  }

  destroy(): void {
    this.terminate();
  }

  /** Stop worker `index` as if it had crashed (its calls fail; a fresh worker replaces it). */
  killWorker(index: number): void {
    const slot = this.slots[index];
    if (!slot) throw new InternalError(`no encoder worker ${index}`);
    slot.handle.terminate();
    this.onExit(slot, 'terminated');
  }

  stats(): WorkerPoolStats {
    return {
      workers: this.slots.length,
      restarts: this.restarts,
      queueDepth: this.queueDepth(),
    };
  }

  terminate(): void {
    this.closed = true;
    for (const s of this.slots) {
      s.alive = false;
      for (const reject of s.pending) reject(new EncoderWorkerCrashedError(s.index, 'the engine was destroyed'));
      s.pending.clear();
      s.api[Comlink.releaseProxy]();
      s.handle.terminate();
    }
  }
}

/**
 * What a video costs to send: a clip's bytes are copied and transferred (the caller keeps its own; a Blob
 * or File is cloned by reference, never read here); a frame list's encoded images likewise.
 */
function copyForTransfer(source: VideoSource): { source: VideoSource; buffers: ArrayBuffer[] } {
  if (source instanceof Uint8Array) {
    const copy = source.slice();
    return { source: copy, buffers: [copy.buffer] };
  }
  if (typeof Blob !== 'undefined' && source instanceof Blob) return { source, buffers: [] };
  const list = source as VideoFramesSource;
  const buffers: ArrayBuffer[] = [];
  const frames = list.frames.map((f) => {
    if (!(f.image instanceof Uint8Array)) return f;
    const copy = f.image.slice();
    buffers.push(copy.buffer);
    return { ...f, image: copy };
  });
  return { source: { ...list, frames }, buffers };
}
