// The encoder-output cache, browser-safe parts: content keys, the in-memory tier (accounting + values +
// in-flight deduplication) and the persistent tier behind KeyValueStore (IndexedDB or memory).
// The Node filesystem store is not here (it imports node:fs): import it from './fs-store' in Node code.
//
//   contentKey(identity, bytes) ─► MemoryEncoderCache.getOrProduce ─ miss ─► PersistentEncoderCache.get
//                                                                           ─ miss ─► encode, put

export { canonicalJson, checksum, contentKey, encoderIdentity, type EncoderIdentityInput } from './content-key';
export { EncoderCacheAccounting, type EncoderCacheStats, type RequestId } from './accounting';
export {
  MemoryEncoderCache,
  type CacheSource,
  type EntrySize,
  type MemoryEncoderCacheOptions,
  type MemoryEncoderCacheStats,
} from './memory-cache';
export type { KeyValueStore } from './store';
export { idbStore } from './idb-store';
export { memoryStore } from './memory-store';
export { MANIFEST_KEY, verifyEntry, type EntryMeta, type StoredEntry, type Verdict } from './entry';
export {
  PersistentEncoderCache,
  type PersistentCacheStats,
  type PersistentEncoderCacheOptions,
  type PersistentHit,
} from './persistent-cache';
