// The storage check a browser engine runs before its load downloads anything:
//
//   storage.persist?  ─► navigator.storage.persist() (once; not when persisted() already says so)
//   URL checkpoint    ─► the weight files the load reads (a GGUF pair: its two files), their sizes,
//                        which are stored already (download-plan.ts)
//                     ─► estimate(): fits with headroom? ─ yes ─► storing: downloads go into the Cache API
//                                                       └ no ──► storage.requireCache: StorageQuotaError,
//                                                                before any weight byte is downloaded;
//                                                                else one warning, and the load downloads
//                                                                without storing (storing: false)
//
// The answer is engine.stats().storage and the 'storage' progress event, so an app can say before the
// download what it costs and whether it will be kept. Files whose size is unknown are listed, not guessed;
// UrlSource still checks each file against the quota as it downloads it (the quota can shrink meanwhile).

import { StorageQuotaError } from '../errors';
import { type ModelSource, UrlSource } from '../io/model-source';
import { isGgufSource } from '../model/weights/gguf/gguf-plan';
import { type PlannedFile, planDownload } from './download-plan';
import { askToPersist, estimateQuota, hasRoom, QUOTA_HEADROOM, type StorageManagerLike } from './quota';

/** The engine option `storage` (browser). */
export interface StorageOptions {
  /**
   * Ask the browser to keep this site's storage under storage pressure (navigator.storage.persist()) before
   * the download, so stored models are not evicted to make room for other sites (default false). Chrome
   * grants it by itself or not (site engagement, an installed app); Firefox asks the user.
   */
  persist?: boolean;
  /**
   * true: a checkpoint the storage quota has no room for fails with StorageQuotaError before anything is
   * downloaded. false (default): it is downloaded without being stored (one console warning, and
   * engine.stats().storage.storing is false), so every later load downloads it again.
   */
  requireCache?: boolean;
}

/** What the storage check found before the load (engine.stats().storage, the 'storage' progress event). */
export interface StorageCheck {
  /** Whether this load keeps its downloads in the Cache API (the next load then reads them there). */
  storing: boolean;
  /** Why not, when storing is false. */
  reason?: string;
  /** Bytes still to download: the weight files not stored yet whose size is known. */
  neededBytes: number;
  /** The weight files this load reads, each with its size when known and whether it is stored already. */
  files: PlannedFile[];
  /** Files not stored yet whose size neither the listing nor a HEAD request gave (not in neededBytes). */
  unknownSizeFiles: string[];
  /** navigator.storage.estimate() before the download (undefined where the browser does not say). */
  quotaBytes?: number;
  usageBytes?: number;
  /** The browser's answer to persist() (true: already persisted); undefined when storage.persist was not set. */
  persisted?: boolean;
}

export interface StorageCheckDeps {
  /** navigator.storage (quota.ts browserStorageManager()); undefined: no quota to check. */
  storage: StorageManagerLike | undefined;
  /** The weight files a load of the source reads (download-plan.ts weightFilesOf); asked only for a URL. */
  weightFiles: () => Promise<string[]>;
  /** Where the one warning goes (default console.warn). */
  warn?: (message: string) => void;
}

export async function checkStorage(source: ModelSource, options: StorageOptions, deps: StorageCheckDeps): Promise<StorageCheck> {
  const persisted = options.persist ? await askToPersist(deps.storage) : undefined;
  const asked = persisted === undefined ? {} : { persisted };
  const quota = await estimateQuota(deps.storage);
  const numbers = { ...(quota ? { quotaBytes: quota.quotaBytes, usageBytes: quota.usageBytes } : {}), ...asked };
  // A GGUF pair's files are downloaded from its container (a URL's folder) like a checkpoint's weights.
  const from = isGgufSource(source) ? source.container : source;
  if (!(from instanceof UrlSource)) {
    const reason = `${source.where} is read where it is: nothing is downloaded`;
    return { storing: false, reason, neededBytes: 0, files: [], unknownSizeFiles: [], ...numbers };
  }
  const plan = await planDownload(from, await deps.weightFiles());
  const found = { neededBytes: plan.neededBytes, files: plan.files, unknownSizeFiles: plan.unknownSizeFiles, ...numbers };
  if (!from.storesDownloads) {
    return { storing: false, reason: 'this page has no Cache API (it needs a secure context: https or localhost)', ...found };
  }
  if (!quota || plan.neededBytes === 0 || hasRoom(plan.neededBytes, quota)) return { storing: true, ...found };
  const error = new StorageQuotaError(source.where, plan.neededBytes, quota.quotaBytes, quota.usageBytes, QUOTA_HEADROOM);
  if (options.requireCache) throw error;
  (deps.warn ?? console.warn)(
    `tessera: ${error.detail}; loading it without storing, so every load downloads it again. To keep it, free disk space ` +
      'or delete models stored earlier (deleteStoredModel(url), clearStorage()); engine.stats().storage has the numbers.',
  );
  return { storing: false, reason: error.detail, ...found };
}
