// Node's stored weights: the quantized copies in the weight cache directory (weights/store-node.ts), listed
// and deleted. Node keeps no downloaded checkpoint files (a URL checkpoint streams from the network each
// load), and the encoder cache lives where encoder.cacheDir says (a folder to delete as a whole).

import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { defaultWeightCacheDir } from '../model/weights/store-node';

export interface WeightCacheReport {
  dir: string;
  /** Stored quantized copies (`<key>.tqw`; one per checkpoint file, dtype and selection of tensors) and their bytes. */
  numCopies: number;
  sizeBytes: number;
}

/** The copies in `dir` (default: the engines' default, $TESSERA_CACHE_DIR/weights or ~/.cache/tessera/weights). */
async function copiesIn(dir: string): Promise<{ path: string; sizeBytes: number }[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const copies = names.filter((n) => n.endsWith('.tqw')).map((n) => join(dir, n));
  return Promise.all(copies.map(async (path) => ({ path, sizeBytes: (await stat(path)).size })));
}

/** What the weight cache directory holds. */
export async function inspectWeightCache(dir: string = defaultWeightCacheDir()): Promise<WeightCacheReport> {
  const copies = await copiesIn(dir);
  return { dir, numCopies: copies.length, sizeBytes: copies.reduce((a, c) => a + c.sizeBytes, 0) };
}

/** Deletes every stored copy in the weight cache directory (later loads quantize again and store anew). */
export async function clearWeightCache(dir: string = defaultWeightCacheDir()): Promise<WeightCacheReport> {
  const copies = await copiesIn(dir);
  await Promise.all(copies.map((c) => rm(c.path, { force: true })));
  return { dir, numCopies: copies.length, sizeBytes: copies.reduce((a, c) => a + c.sizeBytes, 0) };
}
