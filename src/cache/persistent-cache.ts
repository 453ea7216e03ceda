// The persistent encoder cache tier (docs/design.md invariant 4): embeddings that survive reloads and restarts, in
// IndexedDB (idb-store.ts) or a directory (fs-store.ts), behind the KeyValueStore interface.
//
//   get(key)  store.get ─► verifyEntry ─ ok ──────► hit: move to the LRU tail, lastUsedAt = now (in memory)
//                                      └ corrupt / foreign ─► store.del, count it, miss (caller re-encodes)
//   put(key)  evict least-recently-used entries until it fits the budget ─► store.set({ meta, data })
//             ─► write the manifest
//
// LRU by last use without a write per hit: an in-memory index (key -> EntryMeta, Map order = LRU order) is
// loaded once, on first use, from the manifest: one small record holding every entry's meta. Hits update
// lastUsedAt only in the index; the manifest is rewritten on every put (which writes anyway), on flush(),
// and on a hit at most once per manifestFlushMs. Loading thus reads keys() and the manifest, not the data
// (hundreds of MB); only entries missing from the manifest (written by another tab or process, or a lost
// manifest write) are read once to learn their meta. A stale manifest costs at worst a slightly wrong
// eviction order, never a wrong embedding: every get() verifies what it reads.
//
// One budget per store: every entry in the store counts, whatever its identity (two models sharing a store
// share the budget and evict each other's least-recently-used entries), and clear() empties the store. Each
// instance keeps its own index, so instances writing one store at once (tabs) may together exceed the budget
// until one of them loads again; route writes through one owner to avoid that.
//
// Failure policy: the cache never fails its caller because of the store. The first store error of any kind
// (QuotaExceededError, a closed database, no IndexedDB at all) switches this instance to `degraded`: one
// PersistentCacheUnavailableError goes to onWarning, and from then on get() misses and put() is a no-op
// without touching the store. Operations run one at a time, in call order, so the index never races itself.

import { InternalError, PersistentCacheUnavailableError } from '../errors';
import { checksum } from './content-key';
import { isEntryMeta, makeManifest, MANIFEST_KEY, readManifest, verifyEntry, type EntryMeta } from './entry';
import type { KeyValueStore } from './store';

export interface PersistentEncoderCacheOptions {
  store: KeyValueStore;
  /** encoderIdentity() of the model this cache serves; entries of any other identity read as foreign. */
  identity: string;
  budgetBytes: number;
  /** Receives the one warning when the store fails and the cache turns memory-only. Default: console.warn. */
  onWarning?: (warning: PersistentCacheUnavailableError) => void;
  /** Clock in ms (tests). Default: Date.now. */
  now?: () => number;
  /** Longest a hit's lastUsedAt waits (in memory) before a hit rewrites the manifest. Default 30 s. */
  manifestFlushMs?: number;
}

export interface PersistentHit {
  data: Float32Array; // [shape...] f32
  shape: number[];
  meta: EntryMeta;
}

export interface PersistentCacheStats {
  hits: number;
  /** Misses, including corrupt and foreign entries and every get() while degraded. */
  misses: number;
  corrupt: number;
  foreign: number;
  /** Entries written (manifest writes not counted). */
  writes: number;
  /** Store writes (set, del, clear) that threw; the first one degrades the cache. */
  writeFailures: number;
  /** Entries deleted to fit the budget. */
  evictions: number;
  /** Bytes of entry data in the index. */
  bytes: number;
  numEntries: number;
  degraded: boolean;
}

/** Thrown inside this module only, after degrade(): unwinds an operation to its public method. */
const STORE_OFF = Symbol('store off');

export class PersistentEncoderCache {
  private readonly store: KeyValueStore;
  private readonly identity: string;
  private readonly budgetBytes: number;
  private readonly onWarning: (warning: PersistentCacheUnavailableError) => void;
  private readonly now: () => number;
  private readonly manifestFlushMs: number;
  /** key -> meta, least recently used first. */
  private readonly index = new Map<string, EntryMeta>();
  private bytes = 0;
  private loaded = false;
  private degraded = false;
  private dirty = false;
  private lastManifestAt = 0;
  private queue: Promise<unknown> = Promise.resolve();
  private readonly counts = { hits: 0, misses: 0, corrupt: 0, foreign: 0, writes: 0, writeFailures: 0, evictions: 0 };

  constructor(options: PersistentEncoderCacheOptions) {
    if (!Number.isSafeInteger(options.budgetBytes) || options.budgetBytes < 0) {
      throw new InternalError(`PersistentEncoderCache: budgetBytes must be an integer >= 0, got ${options.budgetBytes}`);
    }
    this.store = options.store;
    this.identity = options.identity;
    this.budgetBytes = options.budgetBytes;
    this.onWarning = options.onWarning ?? ((w) => console.warn(w.message));
    this.now = options.now ?? Date.now;
    this.manifestFlushMs = options.manifestFlushMs ?? 30_000;
  }

  /** The verified entry under key, or undefined (absent, corrupt, foreign, or the cache is degraded). */
  get(key: string): Promise<PersistentHit | undefined> {
    return this.serial(
      undefined,
      async () => {
        await this.load();
        const value = await this.call('get', false, (s) => s.get(key));
        if (value === undefined) {
          if (this.drop(key)) this.dirty = true;
          this.counts.misses++;
          return undefined;
        }
        const verdict = await verifyEntry(key, value, this.identity);
        if (verdict.kind !== 'ok') {
          this.counts[verdict.kind]++;
          this.drop(key);
          this.dirty = true;
          await this.call('delete a bad entry', true, (s) => s.del(key)); // on failure: degraded, counted once below
          this.counts.misses++;
          return undefined;
        }
        const { meta, data } = verdict.entry;
        const live = { ...meta, shape: [...meta.shape] }; // the store's meta is the truth; lastUsedAt set next
        this.touch(key, live);
        this.counts.hits++;
        if (this.now() - this.lastManifestAt >= this.manifestFlushMs) await this.writeManifest().catch(swallowStoreOff);
        return { data, shape: [...meta.shape], meta: { ...live, shape: [...live.shape] } };
      },
      () => this.counts.misses++,
    );
  }

  /**
   * Store data (shape [..], f32) under key, evicting least-recently-used entries to fit the budget. Resolves
   * true when written; false when degraded, or when the entry alone is larger than the whole budget.
   */
  put(key: string, data: Float32Array, shape: readonly number[]): Promise<boolean> {
    const length = shape.reduce((a, b) => a * b, 1);
    if (!shape.every((d) => Number.isSafeInteger(d) && d >= 0) || length !== data.length) {
      return Promise.reject(
        new InternalError(`PersistentEncoderCache.put: shape [${shape.join(', ')}] holds ${length} floats but data has ${data.length}`),
      );
    }
    return this.serial(false, async () => {
      await this.load();
      if (data.byteLength > this.budgetBytes) return false;
      await this.evictUntil(this.budgetBytes - data.byteLength, key);
      const at = this.now();
      const meta: EntryMeta = {
        key,
        identity: this.identity,
        shape: [...shape],
        dtype: 'f32',
        length,
        checksum: await checksum(data),
        sizeBytes: data.byteLength,
        createdAt: at,
        lastUsedAt: at,
      };
      await this.call('write an entry', true, (s) => s.set(key, { meta, data }));
      this.touch(key, { ...meta });
      this.counts.writes++;
      await this.writeManifest();
      return true;
    });
  }

  /** Every indexed entry's meta, least recently used first, and their total bytes. Degraded: the last known. */
  inspect(): Promise<{ entries: EntryMeta[]; totalBytes: number }> {
    const snapshot = () => ({ entries: [...this.index.values()].map((m) => ({ ...m, shape: [...m.shape] })), totalBytes: this.bytes });
    return this.serial(undefined, async () => {
      await this.load();
      return snapshot();
    }).then((r) => r ?? snapshot());
  }

  /** Delete every entry in the store (all identities) and the manifest. */
  clear(): Promise<void> {
    return this.serial(undefined, async () => {
      await this.call('clear', true, (s) => s.clear());
      this.index.clear();
      this.bytes = 0;
      this.loaded = true;
      this.dirty = false;
    });
  }

  /** Persist lastUsedAt updates still held in memory (call before a page unloads or a process exits). */
  flush(): Promise<void> {
    return this.serial(undefined, async () => {
      if (this.loaded && this.dirty) await this.writeManifest();
    });
  }

  stats(): PersistentCacheStats {
    return { ...this.counts, bytes: this.bytes, numEntries: this.index.size, degraded: this.degraded };
  }

  /** Run op after every earlier one; when degraded (before or during it), resolve to `off` instead. */
  private serial<R, D>(off: D, op: () => Promise<R>, onOff?: () => void): Promise<R | D> {
    const run = async (): Promise<R | D> => {
      if (this.degraded) {
        onOff?.();
        return off;
      }
      try {
        return await op();
      } catch (error) {
        if (error !== STORE_OFF) throw error;
        onOff?.();
        return off;
      }
    };
    const result = this.queue.then(run);
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** One store call; its failure degrades the cache (once) and unwinds with STORE_OFF. */
  private async call<R>(operation: string, isWrite: boolean, fn: (store: KeyValueStore) => Promise<R>): Promise<R> {
    if (this.degraded) throw STORE_OFF;
    try {
      return await fn(this.store);
    } catch (error) {
      if (isWrite) this.counts.writeFailures++;
      this.degraded = true;
      const warning = new PersistentCacheUnavailableError(operation, this.index.size, this.bytes, error);
      try {
        this.onWarning(warning);
      } catch {
        // A throwing warning handler must not fail the request either.
      }
      throw STORE_OFF;
    }
  }

  /** Build the index once: the manifest's metas, plus the metas of entries the manifest does not list. */
  private async load(): Promise<void> {
    if (this.loaded) return;
    const keys = (await this.call('load the index', false, (s) => s.keys())).filter((k) => k !== MANIFEST_KEY);
    const listed = readManifest(await this.call('load the index', false, (s) => s.get(MANIFEST_KEY)));
    const present = new Set(keys);
    const metas = listed.filter((m) => present.delete(m.key));
    let changed = metas.length !== listed.length;
    for (const key of present) {
      changed = true;
      const value = (await this.call('load the index', false, (s) => s.get(key))) as { meta?: unknown } | undefined;
      if (value !== undefined && isEntryMeta(value.meta) && value.meta.key === key) {
        metas.push({ ...value.meta, shape: [...value.meta.shape] });
      } else if (value !== undefined) {
        this.counts.corrupt++;
        await this.call('delete a bad entry', true, (s) => s.del(key));
      }
    }
    metas.sort((a, b) => a.lastUsedAt - b.lastUsedAt); // stable: ties keep the manifest's order
    for (const meta of metas) this.touch(meta.key, meta);
    this.loaded = true;
    this.lastManifestAt = this.now();
    if (this.bytes > this.budgetBytes) await this.evictUntil(this.budgetBytes, undefined);
    else if (changed) await this.writeManifest();
  }

  /** Evict from the LRU head until at most maxBytes remain (the entry `replacing` does not count). */
  private async evictUntil(maxBytes: number, replacing: string | undefined): Promise<void> {
    const replacedBytes = replacing === undefined ? 0 : (this.index.get(replacing)?.sizeBytes ?? 0);
    for (const key of [...this.index.keys()]) {
      if (this.bytes - replacedBytes <= maxBytes) break;
      if (key === replacing) continue;
      await this.call('evict an entry', true, (s) => s.del(key));
      this.drop(key);
      this.counts.evictions++;
      this.dirty = true;
    }
    if (this.dirty && replacing === undefined) await this.writeManifest();
  }

  private async writeManifest(): Promise<void> {
    const manifest = makeManifest([...this.index.values()]);
    await this.call('write the manifest', true, (s) => s.set(MANIFEST_KEY, manifest));
    this.dirty = false;
    this.lastManifestAt = this.now();
  }

  /** Put key at the LRU tail with lastUsedAt = now (or the meta's own time while loading). */
  private touch(key: string, meta: EntryMeta): void {
    if (this.loaded) {
      meta.lastUsedAt = this.now();
      this.dirty = true;
    }
    this.drop(key);
    this.index.set(key, meta);
    this.bytes += meta.sizeBytes;
  }

  /** Remove key from the index. Returns whether it was there. */
  private drop(key: string): boolean {
    const meta = this.index.get(key);
    if (!meta) return false;
    this.index.delete(key);
    this.bytes -= meta.sizeBytes;
    return true;
  }
}

function swallowStoreOff(error: unknown): void {
  if (error !== STORE_OFF) throw error;
}
