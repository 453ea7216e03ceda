// Errors of the encoder and its caches: out of memory, worker crashes and load failures, timeouts, cache
// keys and budgets, the persistent tier.

import { TesseraError } from './base';

/** The GPU ran out of memory while encoding media. */
export class EncoderOutOfMemoryError extends TesseraError {
  override readonly name = 'EncoderOutOfMemoryError';
  readonly code = 'ENCODER_OUT_OF_MEMORY';
  constructor(
    readonly numTiles: number,
    detail: string,
    /** What was being encoded (default: `numTiles` image tiles). */
    what = `${numTiles} image tiles`,
  ) {
    super(
      `the GPU ran out of memory encoding ${what} (${detail}); send a smaller image, set the ` +
        'request option tessera.allowReducedResolution to retry once at a lower resolution, or lower the engine ' +
        'option encoder.maxBatchTiles.',
    );
  }
}

/** encode() was asked for media that was never prepared (or was already encoded or forgotten). */
export class MediaNotPreparedError extends TesseraError {
  override readonly name = 'MediaNotPreparedError';
  readonly code = 'MEDIA_NOT_PREPARED';
  constructor(readonly key: string) {
    super(`no prepared media with key ${key.slice(0, 16)}…; call prepare() with its bytes first`);
  }
}

/** An encoder worker crashed or was terminated while it held this request's media. */
export class EncoderWorkerCrashedError extends TesseraError {
  override readonly name = 'EncoderWorkerCrashedError';
  readonly code = 'ENCODER_WORKER_CRASHED';
  constructor(
    readonly workerIndex: number,
    detail: string,
  ) {
    super(
      `encoder worker ${workerIndex} stopped (${detail}); this request failed, the worker is being restarted — send the request again.`,
    );
  }
}

/** Encoding one media item took longer than its timeout. */
export class EncodeTimeoutError extends TesseraError {
  override readonly name = 'EncodeTimeoutError';
  readonly code = 'ENCODE_TIMEOUT';
  constructor(readonly timeoutMs: number) {
    super(`encoding the image took longer than ${timeoutMs} ms; raise the request option tessera.encodeTimeoutMs or send a smaller image.`);
  }
}

/** The encoder cache cannot make room for an entry: too many of its bytes are referenced by running requests. */
export class EncoderCacheFullError extends TesseraError {
  override readonly name = 'EncoderCacheFullError';
  readonly code = 'ENCODER_CACHE_FULL';
  constructor(
    readonly sizeBytes: number,
    readonly capacityBytes: number,
    readonly referencedBytes: number,
    readonly freeableBytes: number,
  ) {
    super(
      `the encoder cache needs ${sizeBytes} bytes for one entry but only ${capacityBytes - referencedBytes} of its ` +
        `${capacityBytes} bytes can be made free (${referencedBytes} are referenced by running requests, ` +
        `${freeableBytes} of them freeable); wait for requests to finish, send fewer images at once, ` +
        'or raise the engine option encoder.memoryCacheBytes.',
    );
  }
}

/** A value given to a cache key (a config, an identity string) cannot be hashed canonically. */
export class CacheKeyError extends TesseraError {
  override readonly name = 'CacheKeyError';
  readonly code = 'CACHE_KEY';
}

/**
 * The persistent encoder cache (IndexedDB or a directory) failed and was switched off for this session.
 * Not thrown: handed to the cache's onWarning callback once; requests go on with the memory cache only.
 */
export class PersistentCacheUnavailableError extends TesseraError {
  override readonly name = 'PersistentCacheUnavailableError';
  readonly code = 'PERSISTENT_CACHE_UNAVAILABLE';
  constructor(
    readonly operation: string,
    readonly numEntries: number,
    readonly totalBytes: number,
    cause: unknown,
  ) {
    const why = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    super(
      `the persistent encoder cache failed during ${operation} (${why}) while holding ${numEntries} entries ` +
        `(${totalBytes} bytes); it is off until the page or process restarts, so encoded images are kept in ` +
        'memory only. Free disk space or site storage (or lower the engine option encoder.persistentCacheBytes) ' +
        'to keep them across reloads.',
      { cause },
    );
  }
}

/**
 * An encoder worker's script did not load (not found, served as something other than JavaScript, or it
 * threw while loading). Not retried: a restart would load the same script.
 */
export class EncoderWorkerLoadError extends TesseraError {
  override readonly name = 'EncoderWorkerLoadError';
  readonly code = 'ENCODER_WORKER_LOAD';
  constructor(
    readonly url: string,
    detail: string,
    hint: string,
  ) {
    super(`the encoder worker script ${url} did not load (${detail}); ${hint}`);
  }
}
