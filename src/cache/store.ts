// The one storage interface behind the persistent encoder cache: idb-keyval's shape, so IndexedDB (browser,
// worker), a directory (Node) and a Map (tests, memory-only mode) are interchangeable.
//
//   persistent-cache.ts ──► KeyValueStore ─┬─ idb-store.ts     IndexedDB via idb-keyval (browser/worker)
//                                          ├─ fs-store.ts      one file per key (Node only; never imported
//                                          │                   by browser code, not exported from index.ts)
//                                          └─ memory-store.ts  a Map of structured clones
//
// Values are structured-cloneable data; the cache stores `{ meta, data: Float32Array }` entries and one
// plain-JSON manifest. Any method may reject (quota, permission, a closed database): the cache treats a
// rejection as "the store is unusable" and carries on without it.

export interface KeyValueStore {
  /** The value under key, or undefined if there is none. */
  get(key: string): Promise<unknown>;
  set(key: string, value: unknown): Promise<void>;
  /** Deleting a missing key is not an error. */
  del(key: string): Promise<void>;
  keys(): Promise<string[]>;
  clear(): Promise<void>;
}
