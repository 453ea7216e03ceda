// IndexedDB KeyValueStore (browser and worker only) on idb-keyval. Use a database of its own: idb-keyval
// creates the object store only when it creates the database, so a dbName that already exists without
// storeName fails on first use.
//
// Nothing is opened until the first call, and every failure (no indexedDB at all, as in Node or some private
// modes; a blocked open; quota) comes back as a rejected promise, never a synchronous throw, so
// PersistentEncoderCache can degrade to memory-only with one warning.

import { clear, createStore, del, get, keys, set, type UseStore } from 'idb-keyval';
import type { KeyValueStore } from './store';

export function idbStore(dbName = 'tessera-encoder-cache', storeName = 'entries'): KeyValueStore {
  let handle: UseStore | undefined;
  const open = (): UseStore => (handle ??= createStore(dbName, storeName));
  return {
    async get(key) {
      return get(key, open());
    },
    async set(key, value) {
      await set(key, value, open());
    },
    async del(key) {
      await del(key, open());
    },
    async keys() {
      return (await keys(open())).filter((k): k is string => typeof k === 'string');
    },
    async clear() {
      await clear(open());
    },
  };
}
