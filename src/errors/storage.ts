// Errors of the browser storage Tessera keeps downloads in (the Cache API under the origin's quota).

import { TesseraError } from './base';

/** Bytes as a person reads them (decimal units, as browsers and the Hub show sizes): 4697620480 -> "4.70 GB". */
function readableBytes(bytes: number): string {
  const units = ['bytes', 'kB', 'MB', 'GB', 'TB'];
  let v = bytes;
  let u = 0;
  while (Math.abs(v) >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return u === 0 ? `${v} bytes` : `${v.toFixed(2)} ${units[u]}`;
}

/**
 * The origin's storage quota has no room for the checkpoint files a load would download and store
 * (navigator.storage.estimate() before the download). Thrown before any weight byte is downloaded, and only
 * when the caller asked for storing (the engine option storage.requireCache); otherwise the load goes on
 * without storing and engine.stats().storage says so.
 */
export class StorageQuotaError extends TesseraError {
  override readonly name = 'StorageQuotaError';
  readonly code = 'STORAGE_QUOTA';
  /** What this site may still store: quotaBytes - usageBytes. */
  readonly availableBytes: number;
  /** What happened, with the numbers, without the advice (for a warning when the load goes on unstored). */
  readonly detail: string;
  constructor(
    readonly where: string,
    /** Bytes of the files still to download (files already stored are not counted). */
    readonly neededBytes: number,
    readonly quotaBytes: number,
    readonly usageBytes: number,
    /** The margin kept above neededBytes (estimate() is approximate): 0.1 is 10%. */
    readonly headroom: number,
  ) {
    const available = Math.max(0, quotaBytes - usageBytes);
    const detail =
      `downloading ${where} needs ${readableBytes(neededBytes)} of browser storage (plus ${Math.round(headroom * 100)}% headroom), ` +
      `but this site may store only ${readableBytes(available)} more (quota ${readableBytes(quotaBytes)}, ${readableBytes(usageBytes)} in use)`;
    super(
      `${detail}. Free disk space, delete models stored earlier (deleteStoredModel(url) or clearStorage()), or load it without ` +
        'storing (the engine option storage.requireCache: false; every later load then downloads it again).',
    );
    this.availableBytes = available;
    this.detail = detail;
  }
}
