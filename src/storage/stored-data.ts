// What Tessera keeps in this origin's browser storage, and how to delete it. Three stores:
//
//   store                                  holds                                     grouped by
//   Cache API `tessera-weights-v1`         downloaded checkpoint files (model-source.ts)  x-tessera-model header,
//   Cache API `tessera-quantized-v1`       stored quantized copies (weights/store.ts)      else the file's folder
//   IndexedDB `tessera-encoder-cache`      image/audio embeddings (cache/idb-store.ts)     (one store for all)
//
// Each stored file and copy names the checkpoint folder it came from in the x-tessera-model header (files
// stored before it existed are grouped by their URL's folder; copies without it under ''). Everything here
// takes its stores as arguments (defaults: this page's caches, navigator.storage, the IndexedDB store), so a
// page can list and delete without an engine, e.g. after a StorageQuotaError. A running engine keeps
// working after a deletion: a deleted file is downloaded again at its next load, and its encoder cache
// misses (engine.encoderCache.clear() also empties its memory tier).

import { idbStore } from '../cache/idb-store';
import { MANIFEST_KEY, readManifest } from '../cache/entry';
import type { KeyValueStore } from '../cache/store';
import { FILE_BYTES_HEADER, isPart } from '../io/cache-parts';
import { STORED_MODEL_HEADER, WEIGHT_CACHE_NAME } from '../io/model-source';
import { QUANTIZED_CACHE_NAME } from '../model/weights/store';
import { estimateQuota, isPersisted, browserStorageManager, type StorageManagerLike } from './quota';

/** Where the stores are (defaults: this page's). */
export interface StorageEnv {
  caches?: CacheStorage;
  storage?: StorageManagerLike;
  /** The encoder cache's persistent store (default: IndexedDB `tessera-encoder-cache`, where IndexedDB exists). */
  encoderStore?: KeyValueStore;
}

/** One checkpoint's stored bytes. */
export interface StoredModel {
  /**
   * The checkpoint folder's URL (picked files or a folder: the engine's name for them, e.g. "3 selected
   * files"; '' for quantized copies stored before copies named their checkpoint).
   */
  model: string;
  /** Downloaded checkpoint files, by name relative to the folder, with their bytes. */
  files: { name: string; sizeBytes: number }[];
  downloadedBytes: number;
  /** Quantized copies made from it (dtype f16/q8/q4 loads) and their bytes. */
  numQuantizedCopies: number;
  quantizedBytes: number;
}

export interface StorageReport {
  /** navigator.storage.estimate() for the whole origin (Tessera's bytes and everything else it stores). */
  quotaBytes?: number;
  usageBytes?: number;
  /** Whether the browser keeps this origin's storage under pressure (navigator.storage.persisted()). */
  persisted?: boolean;
  models: StoredModel[];
  /** The persistent encoder cache (one store for every model). */
  encoderCache: { numEntries: number; sizeBytes: number };
  /** Everything above: downloaded files, quantized copies and encoder cache entries. */
  totalBytes: number;
}

/** What a deletion removed. */
export interface DeletedEntries {
  numEntries: number;
  freedBytes: number;
}

interface CacheItem {
  request: Request;
  model: string;
  sizeBytes: number;
  /** A part of a file stored in parts (io/cache-parts.ts): deleted with its model, counted in its file's bytes. */
  part: boolean;
}

function storesOf(env: StorageEnv) {
  return {
    caches: env.caches ?? (typeof caches !== 'undefined' ? caches : undefined),
    storage: env.storage ?? browserStorageManager(),
    encoderStore: env.encoderStore ?? (typeof indexedDB !== 'undefined' ? idbStore() : undefined),
  };
}

/** A folder URL: resolved against the page, ending in '/'. */
function folderOf(url: string): string {
  const href = new URL(url, globalThis.location?.href ?? 'http://localhost/').href;
  return href.endsWith('/') ? href : `${href}/`;
}

/**
 * A stored response's bytes: a file in parts, its index's count of them; else its Content-Length when it is
 * the body's (not compressed), else the body's size.
 */
async function sizeOf(r: Response): Promise<number> {
  const inParts = r.headers.get(FILE_BYTES_HEADER);
  if (inParts !== null) return Number(inParts);
  const length = Number(r.headers.get('content-length'));
  if (r.headers.get('content-length') !== null && Number.isSafeInteger(length) && !r.headers.get('content-encoding')) return length;
  return (await r.blob()).size;
}

/** Every entry of a Cache API cache with its model and bytes ([] when the cache does not exist). */
async function itemsOf(storage: CacheStorage | undefined, name: string, byUrlFolder: boolean): Promise<CacheItem[]> {
  if (!storage || !(await storage.has(name))) return [];
  const cache = await storage.open(name);
  const items: CacheItem[] = [];
  for (const request of await cache.keys()) {
    const r = await cache.match(request);
    if (!r) continue;
    const named = r.headers.get(STORED_MODEL_HEADER);
    const model = named ?? (byUrlFolder ? request.url.slice(0, request.url.lastIndexOf('/') + 1) : '');
    const part = isPart(r);
    items.push({ request, model, sizeBytes: part ? 0 : await sizeOf(r), part });
    if (!r.bodyUsed) await r.body?.cancel(); // not left open (io/cache-parts.ts, has())
  }
  return items;
}

async function encoderCacheOf(store: KeyValueStore | undefined): Promise<StorageReport['encoderCache']> {
  if (!store) return { numEntries: 0, sizeBytes: 0 };
  try {
    const keys = new Set((await store.keys()).filter((k) => k !== MANIFEST_KEY));
    // Bytes from the manifest (one small record), not by reading every entry's data.
    const metas = readManifest(await store.get(MANIFEST_KEY)).filter((m) => keys.has(m.key));
    return { numEntries: keys.size, sizeBytes: metas.reduce((a, m) => a + m.sizeBytes, 0) };
  } catch {
    return { numEntries: 0, sizeBytes: 0 }; // no IndexedDB here (private mode): nothing stored
  }
}

/** What Tessera has stored in this origin: per checkpoint, its downloaded files and quantized copies; the encoder cache; the quota. */
export async function inspectStorage(env: StorageEnv = {}): Promise<StorageReport> {
  const s = storesOf(env);
  const [files, copies, encoderCache, quota, persisted] = await Promise.all([
    itemsOf(s.caches, WEIGHT_CACHE_NAME, true),
    itemsOf(s.caches, QUANTIZED_CACHE_NAME, false),
    encoderCacheOf(s.encoderStore),
    estimateQuota(s.storage),
    isPersisted(s.storage),
  ]);
  const models = new Map<string, StoredModel>();
  const modelOf = (model: string) => {
    let m = models.get(model);
    if (!m) models.set(model, (m = { model, files: [], downloadedBytes: 0, numQuantizedCopies: 0, quantizedBytes: 0 }));
    return m;
  };
  for (const f of files.filter((i) => !i.part)) {
    const m = modelOf(f.model);
    m.files.push({ name: f.request.url.startsWith(f.model) ? f.request.url.slice(f.model.length) : f.request.url, sizeBytes: f.sizeBytes });
    m.downloadedBytes += f.sizeBytes;
  }
  for (const c of copies.filter((i) => !i.part)) {
    const m = modelOf(c.model);
    m.numQuantizedCopies++;
    m.quantizedBytes += c.sizeBytes;
  }
  const list = [...models.values()].sort((a, b) => a.model.localeCompare(b.model));
  return {
    ...(quota ? { quotaBytes: quota.quotaBytes, usageBytes: quota.usageBytes } : {}),
    ...(persisted === undefined ? {} : { persisted }),
    models: list,
    encoderCache,
    totalBytes: list.reduce((a, m) => a + m.downloadedBytes + m.quantizedBytes, 0) + encoderCache.sizeBytes,
  };
}

async function deleteItems(storage: CacheStorage | undefined, name: string, items: CacheItem[]): Promise<DeletedEntries> {
  if (!storage || items.length === 0) return { numEntries: 0, freedBytes: 0 };
  const cache = await storage.open(name);
  let freed: DeletedEntries = { numEntries: 0, freedBytes: 0 };
  for (const item of items) {
    if (!(await cache.delete(item.request)) || item.part) continue; // a part is its file's entry
    freed = { numEntries: freed.numEntries + 1, freedBytes: freed.freedBytes + item.sizeBytes };
  }
  return freed;
}

/**
 * Deletes one checkpoint's downloaded files and the quantized copies made from it. `model` is the URL it
 * was loaded from (a folder; relative URLs resolve against the page), or a StoredModel's `model`.
 */
export async function deleteStoredModel(model: string, env: StorageEnv = {}): Promise<DeletedEntries> {
  const s = storesOf(env);
  // As listed (also picked files' names, and ''), or as a folder URL however it was written.
  const folder = model === '' ? '' : folderOf(model);
  const its = (item: CacheItem) => item.model === model || item.model === folder;
  const [files, copies] = await Promise.all([itemsOf(s.caches, WEIGHT_CACHE_NAME, true), itemsOf(s.caches, QUANTIZED_CACHE_NAME, false)]);
  const a = await deleteItems(s.caches, WEIGHT_CACHE_NAME, files.filter(its));
  const b = await deleteItems(s.caches, QUANTIZED_CACHE_NAME, copies.filter(its));
  return { numEntries: a.numEntries + b.numEntries, freedBytes: a.freedBytes + b.freedBytes };
}

/** Deletes everything Tessera stored in this origin: downloaded files, quantized copies and the encoder cache. */
export async function clearStorage(env: StorageEnv = {}): Promise<DeletedEntries> {
  const s = storesOf(env);
  const before = await inspectStorage({ ...env, ...s });
  await Promise.all([s.caches?.delete(WEIGHT_CACHE_NAME), s.caches?.delete(QUANTIZED_CACHE_NAME), s.encoderStore?.clear().catch(() => {})]);
  const numEntries = before.models.reduce((a, m) => a + m.files.length + m.numQuantizedCopies, 0) + before.encoderCache.numEntries;
  return { numEntries, freedBytes: before.totalBytes };
}
