// A browser's storage for node tests: the Cache API (CacheStorage of named caches, keyed by URL, bodies
// kept as bytes) and navigator.storage (estimate, persist, persisted) with the numbers a test sets.

import type { StorageManagerLike } from '../../src/storage/quota';

class FakeCache {
  readonly entries = new Map<string, { body: Uint8Array; headers: Headers }>();
  puts = 0;

  /** The URL an entry is matched by: without its fragment, as the Cache API matches. */
  private static key(req: RequestInfo | URL): string {
    return (req instanceof Request ? req.url : String(req)).split('#')[0];
  }

  async match(req: RequestInfo | URL): Promise<Response | undefined> {
    const e = this.entries.get(FakeCache.key(req));
    return e ? new Response(e.body.slice(), { headers: e.headers }) : undefined;
  }

  async put(req: RequestInfo | URL, r: Response): Promise<void> {
    this.puts++;
    const body = new Uint8Array(await r.arrayBuffer());
    this.entries.set(FakeCache.key(req), { body, headers: new Headers(r.headers) });
  }

  async keys(): Promise<Request[]> {
    return [...this.entries.keys()].map((url) => new Request(url));
  }

  async delete(req: RequestInfo | URL): Promise<boolean> {
    return this.entries.delete(FakeCache.key(req));
  }
}

export class FakeCacheStorage {
  readonly caches = new Map<string, FakeCache>();

  async open(name: string): Promise<FakeCache> {
    let c = this.caches.get(name);
    if (!c) this.caches.set(name, (c = new FakeCache()));
    return c;
  }

  async has(name: string): Promise<boolean> {
    return this.caches.has(name);
  }

  async delete(name: string): Promise<boolean> {
    return this.caches.delete(name);
  }

  /** Store `bytes` under `url` in cache `name` with these headers (content-length added). */
  async store(name: string, url: string, bytes: number, headers: Record<string, string> = {}): Promise<void> {
    const c = await this.open(name);
    c.entries.set(url, { body: new Uint8Array(bytes), headers: new Headers({ 'content-length': String(bytes), ...headers }) });
  }

  get api(): CacheStorage {
    return this as unknown as CacheStorage;
  }
}

/** navigator.storage with a set quota and usage; counts persist() calls. */
export function fakeStorageManager(quota: number, usage: number, opts: { persisted?: boolean; grant?: boolean } = {}) {
  const calls = { persist: 0, persisted: 0 };
  let persisted = opts.persisted ?? false;
  const manager: StorageManagerLike = {
    estimate: async () => ({ quota, usage }),
    persisted: async () => {
      calls.persisted++;
      return persisted;
    },
    persist: async () => {
      calls.persist++;
      persisted = opts.grant ?? false;
      return persisted;
    },
  };
  return { manager, calls };
}
