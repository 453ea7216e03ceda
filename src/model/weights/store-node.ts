// Stored quantized weights in a directory (Node only: node:fs; browser bundles never import this file).
// One file per key, `<key>.tqw`; writes go to a temp file in the same directory and rename() over the
// target, so a reader (another process, a crash mid-write) sees the old copy or the new one, never half.

import { randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { Readable } from 'node:stream';
import type { WeightCacheRef } from '../../protocol/encoder';
import type { WeightStore } from './store';

/** $TESSERA_CACHE_DIR, else $XDG_CACHE_HOME/tessera, else ~/.cache/tessera; copies go in its weights/. */
export function defaultWeightCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base = env.TESSERA_CACHE_DIR ?? join(env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'tessera');
  return join(base, 'weights');
}

export class DirWeightStore implements WeightStore {
  readonly where: string;

  constructor(private readonly dir: string) {
    this.where = dir;
  }

  private path(key: string): string {
    if (!/^[A-Za-z0-9_-]+$/.test(key)) throw new RangeError(`weight store key '${key}' is not [A-Za-z0-9_-]+`);
    return join(this.dir, `${key}.tqw`);
  }

  async read(key: string): Promise<AsyncIterable<Uint8Array> | undefined> {
    const path = this.path(key);
    try {
      if (!(await stat(path)).isFile()) return undefined;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
    return createReadStream(path, { highWaterMark: 1 << 20 }) as AsyncIterable<Uint8Array>;
  }

  async write(key: string, chunks: AsyncIterable<Uint8Array>): Promise<void> {
    const target = this.path(key);
    await mkdir(this.dir, { recursive: true });
    const temp = join(this.dir, `.tmp-${randomUUID()}`);
    try {
      await pipeline(Readable.from(chunks), createWriteStream(temp));
      await rename(temp, target);
    } catch (e) {
      await rm(temp, { force: true }).catch(() => undefined);
      throw e;
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }
}

/** The store a worker init names, in Node (a directory; the Cache API does not exist here). */
export function openWeightStoreNode(ref: WeightCacheRef): WeightStore | undefined {
  return ref.kind === 'dir' ? new DirWeightStore(ref.dir) : undefined;
}
