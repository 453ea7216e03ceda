// How an engine encodes media: where (worker pool or in-process), how much it batches, and its caches.
// Shared by the browser and Node factories.

import { PersistentEncoderCache } from '../cache/persistent-cache';
import type { KeyValueStore } from '../cache/store';
import { MediaEncoder, type EncodeBackend, type LifecycleCounters, type LockManagerLike } from '../encoder/media-encoder';
import type { EncoderWorkerInit } from '../protocol/encoder';

export interface EncoderOptions {
  /** 'workers' (default where available): encoder workers with their own devices; 'in-process': this thread. */
  mode?: 'workers' | 'in-process';
  /** Encoder workers (default 1). */
  poolSize?: number;
  /**
   * Most tiles in one encoder batch, across requests (default 32: room for the engine's default encoder
   * budget, so images the scheduler starts in the same step are encoded together).
   */
  maxBatchTiles?: number;
  /** Tiles per vision forward pass; a batch runs as passes of this many tiles (default 8; GPU memory grows with it). */
  visionBatch?: number;
  /**
   * Split each encode into GPU submissions of this many dispatches (about 12 are one ViT layer), waiting
   * for each to finish; 0 (default) submits a whole forward pass at once. Measured with bench:overlap on
   * SwiftShader: no change to the decode slowdown (p50 4.43 s vs 4.43 s), which there comes from both
   * devices sharing two CPU cores, not from queueing; kept as a knob for real GPUs.
   */
  dispatchesPerSubmit?: number;
  /**
   * Cut the vision matmuls into row blocks of this many rows (a multiple of 64; default 64), and
   * attention run as matmuls into one piece per head (0 turns both off), so that under decode priority
   * the encoder's pieces are short enough to fit between decode steps. Free-running encodes still submit
   * a whole forward pass at once, every step whole.
   */
  rowsPerPiece?: number;
  /** Memory tier capacity in bytes (default 256 MiB). */
  memoryCacheBytes?: number;
  /** Persistent tier budget in bytes (default 1 GiB; 0 turns it off). */
  persistentCacheBytes?: number;
  /** Where the persistent tier lives (default: IndexedDB in browsers; Node: files under cacheDir). */
  store?: KeyValueStore;
  /** Node: the ffmpeg program that decodes MP4/WebM video (default 'ffmpeg', found on PATH). */
  ffmpegPath?: string;
}

const DEFAULT_MEMORY_CACHE_BYTES = 256 * 2 ** 20;
const DEFAULT_PERSISTENT_CACHE_BYTES = 2 ** 30;
const DEFAULT_MAX_BATCH_TILES = 32;
const DEFAULT_VISION_BATCH = 8;
const DEFAULT_DISPATCHES_PER_SUBMIT = 0;
const DEFAULT_ROWS_PER_PIECE = 64;

/** What the engine's options say about the encoder's weights (dtype, compute, stored copies) and which backend runs them. */
export type EncoderWeightOptions = Pick<
  EncoderWorkerInit,
  'dtype' | 'compute' | 'weightCache' | 'backend' | 'why' | 'wasm' | 'partialFiles'
>;

export function workerInit(
  modelRef: EncoderWorkerInit['model'],
  modelId: string,
  o: EncoderOptions,
  weights: EncoderWeightOptions = {},
): EncoderWorkerInit {
  return {
    ...weights,
    model: modelRef,
    modelId,
    maxBatchTiles: o.maxBatchTiles ?? DEFAULT_MAX_BATCH_TILES,
    visionBatch: o.visionBatch ?? Math.min(DEFAULT_VISION_BATCH, o.maxBatchTiles ?? DEFAULT_MAX_BATCH_TILES),
    dispatchesPerSubmit: o.dispatchesPerSubmit ?? DEFAULT_DISPATCHES_PER_SUBMIT,
    rowsPerPiece: o.rowsPerPiece ?? DEFAULT_ROWS_PER_PIECE,
    ...(o.ffmpegPath !== undefined ? { ffmpegPath: o.ffmpegPath } : {}),
  };
}

/** Wrap a started backend with the two cache tiers (and cross-tab locks when given). */
export function mediaEncoderFor(
  backend: EncodeBackend,
  lifecycle: LifecycleCounters,
  o: EncoderOptions,
  store: KeyValueStore | undefined,
  locks: LockManagerLike | undefined,
): MediaEncoder {
  const budget = o.persistentCacheBytes ?? DEFAULT_PERSISTENT_CACHE_BYTES;
  const persistent =
    store && budget > 0
      ? new PersistentEncoderCache({
          store,
          identity: backend.info.identity,
          budgetBytes: budget,
          onWarning: (w) => console.warn(`tessera: ${w.message}`),
        })
      : undefined;
  return new MediaEncoder(backend, {
    memoryCacheBytes: o.memoryCacheBytes ?? DEFAULT_MEMORY_CACHE_BYTES,
    persistent,
    locks,
    lifecycle,
  });
}
