// An in-memory KeyValueStore: for tests, and for a memory-only persistent tier. Values are structured
// clones on the way in and on the way out, as IndexedDB does, so a caller that transfers or mutates an
// array after set() (or after get()) never changes or detaches the stored copy.

import type { KeyValueStore } from './store';

export function memoryStore(): KeyValueStore {
  const map = new Map<string, unknown>();
  return {
    async get(key) {
      return map.has(key) ? structuredClone(map.get(key)) : undefined;
    },
    async set(key, value) {
      map.set(key, structuredClone(value));
    },
    async del(key) {
      map.delete(key);
    },
    async keys() {
      return [...map.keys()];
    },
    async clear() {
      map.clear();
    },
  };
}
