// `tessera pack --model <dir> --dtype q4 --out <dir>`: the checkpoint's weights written in one dtype as files
// an app can host and load as they are (src/model/weights/packed-checkpoint.ts): the weights are loaded and
// packed on the GPU as a load with that dtype packs them, and each checkpoint file's packed bytes (the
// stored-copy format, with the checksums of the source tensors for the encoder's weights digest) go to the
// output folder under packedFileName; every other file of the folder is copied; tessera-pack.json names them.

import { copyFileSync, createWriteStream, existsSync, mkdirSync, readdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { finished } from 'node:stream/promises';
import { checksum } from '../cache/content-key';
import { ModelFileError } from '../errors';
import { readModelConfig } from '../families/read-config';
import type { GpuContext } from '../gpu/context';
import { createNodeGpuContext } from '../gpu/node';
import type { KernelVariant } from '../gpu/adapter-info';
import { NodeDirSource } from '../io/model-source-node';
import { loadWeights } from '../model/weights';
import { resolveDtype, type DtypeOption, type DtypePlan } from '../model/weights/dtype';
import { PACK_MANIFEST, type PackManifest, packedFileName, readPackManifest } from '../model/weights/packed-checkpoint';
import type { StoredHeader } from '../model/weights/stored-copy';
import type { WeightStore } from '../model/weights/store';
import { UsageError } from './args';

export interface PackOptions {
  model: string;
  out: string;
  dtype: DtypeOption;
  variant?: KernelVariant;
  err: (text: string) => void;
}

/** A WeightStore that keeps every copy written to it as a packed file in `dir`, named by the file it packs. */
class PackFolderStore implements WeightStore {
  readonly written = new Map<string, string>();
  constructor(
    readonly where: string,
    private readonly dtype: DtypePlan,
  ) {}

  async read(): Promise<undefined> {
    return undefined; // never reuse: every file is packed from its checkpoint
  }

  async delete(): Promise<void> {}

  async write(_key: string, chunks: AsyncIterable<Uint8Array>): Promise<void> {
    const tmp = join(this.where, `.packing-${process.pid}`);
    const out = createWriteStream(tmp);
    let head: Uint8Array = new Uint8Array(0);
    let header: StoredHeader | undefined;
    for await (const c of chunks) {
      if (!header) {
        head = concat(head, c);
        const size = head.byteLength >= 12 ? new DataView(head.buffer, head.byteOffset).getUint32(8, true) : Number.POSITIVE_INFINITY;
        if (head.byteLength >= 12 + size)
          header = JSON.parse(new TextDecoder().decode(head.subarray(12, 12 + size)).trimEnd()) as StoredHeader;
      }
      if (!out.write(c)) await new Promise((r) => out.once('drain', r));
    }
    out.end();
    await finished(out);
    if (!header) throw new ModelFileError(`packing wrote no header into ${tmp}`);
    const name = packedFileName(header.file, this.dtype);
    renameSync(tmp, join(this.where, name));
    this.written.set(header.file, name);
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.byteLength + b.byteLength);
  out.set(a);
  out.set(b, a.byteLength);
  return out;
}

/** `tessera pack`: packCheckpoint on a device of its own. */
export async function pack(o: PackOptions): Promise<number> {
  const gpu = await createNodeGpuContext({ kernelVariant: o.variant });
  try {
    await packCheckpoint(gpu, o);
    return 0;
  } finally {
    gpu.destroy();
  }
}

/** Pack `o.model` into `o.out` in `o.dtype` on `gpu`; returns the manifest written. */
export async function packCheckpoint(gpu: GpuContext, o: Omit<PackOptions, 'variant'>): Promise<PackManifest> {
  const plan = resolveDtype(o.dtype, '--dtype');
  if (!Object.values(plan).some((d) => d === 'f16' || d === 'q8' || d === 'q4')) {
    throw new UsageError(`--dtype ${Object.values(plan).join('/')}: f32 and bf16 weights are the checkpoint's own; pack to f16, q8 or q4`);
  }
  const source = new NodeDirSource(o.model);
  if (await readPackManifest(source))
    throw new UsageError(`${o.model} is already packed (it has ${PACK_MANIFEST}): pack the original checkpoint`);
  if (existsSync(o.out) && readdirSync(o.out).length > 0) throw new UsageError(`--out ${o.out} exists and is not empty: give a new folder`);
  mkdirSync(o.out, { recursive: true });
  const config = await readModelConfig(source);
  const store = new PackFolderStore(o.out, plan);
  const t0 = performance.now();
  const weights = await loadWeights(gpu, source, config, {
    dtype: plan,
    store,
    // The source tensors' checksums go into each packed file: an encoder loading the packed checkpoint
    // computes the same weights digest (its cache keys) as from the original.
    tensorDigest: { addBytes: (_info, bytes) => checksum(bytes), addSum: () => {} },
    onProgress: (p) => {
      if (p.phase === 'quantize' && p.totalBytes && p.loadedBytes === p.totalBytes) o.err(`packed ${p.file}\n`);
    },
  });
  const failed = Object.entries(weights.storedCopies).filter(([, s]) => s === 'store failed');
  weights.destroy();
  if (failed.length > 0) throw new ModelFileError(`could not write the packed ${failed.map(([f]) => f).join(', ')} into ${o.out}`);
  // Everything else as it is: config, tokenizer, templates, the index (the packed files keep its file names),
  // and any checkpoint file with nothing to pack (no weight matrix in it).
  for (const name of readdirSync(o.model)) {
    const from = join(o.model, name);
    if (!statSync(from).isFile() || store.written.has(name)) continue;
    copyFileSync(from, join(o.out, name));
  }
  const manifest: PackManifest = { format: 'tessera-pack', version: 1, dtype: plan, files: Object.fromEntries(store.written) };
  writeFileSync(join(o.out, PACK_MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
  const bytes = (dir: string, names: Iterable<string>) => [...names].reduce((a, n) => a + statSync(join(dir, n)).size, 0);
  const mib = (b: number) => (b / 2 ** 20).toFixed(1);
  o.err(
    `packed ${store.written.size} file(s) in ${((performance.now() - t0) / 1000).toFixed(1)} s: ` +
      `${mib(bytes(o.model, store.written.keys()))} MiB of safetensors -> ${mib(bytes(o.out, store.written.values()))} MiB in ${o.out}\n`,
  );
  return manifest;
}
