// A packed checkpoint (`tessera pack`): the checkpoint's folder with each safetensors file replaced by its
// GPU-ready bytes in one dtype (the stored-copy format of stored-copy.ts: data and scales per tensor, a
// blake3 trailer), so a web app can host a 4-bit model and its users download 4-bit bytes, never the bf16
// ones. Beside config.json, the tokenizer and the rest, `tessera-pack.json` says which dtype and which file
// stands for which:
//
//   { "format": "tessera-pack", "version": 1, "dtype": { "vision": "q4", "audio": "q4", "text": "q4" },
//     "files": { "model.safetensors": "model.q4.tsqw" } }
//
// A load reads the manifest when the folder has one; a packed file's header is checked against what the
// model's layout needs from that file (every tensor there, each target in one format, rows and bytes as
// the layout computes them) before any byte goes to the GPU, and its checksum at the end. A packed
// checkpoint loads only in its own dtype.

import { CheckpointFormatError, PackedDtypeError } from '../../errors';
import type { ModelSource } from '../../io/model-source';
import type { WeightFormat } from '../../kernels/weight-format';
import type { CheckpointTensorSpec } from '../weight-layout';
import type { DtypePlan } from './dtype';
import { entryFor } from './gpu-weights';
import type { StoredEntry, StoredHeader } from './stored-copy';

export const PACK_MANIFEST = 'tessera-pack.json';

export interface PackManifest {
  format: 'tessera-pack';
  version: 1;
  dtype: DtypePlan;
  /** Checkpoint file (as the index names it) -> its packed file in the same folder. */
  files: Record<string, string>;
}

/** The packed file's name for a checkpoint file: model-00001-of-00002.safetensors -> model-00001-of-00002.q4.tsqw. */
export function packedFileName(file: string, dtype: DtypePlan): string {
  const parts = [...new Set([dtype.vision, dtype.audio, dtype.text])].join('-');
  return `${file.replace(/\.safetensors$/, '')}.${parts}.tsqw`;
}

/** The folder's pack manifest, or undefined when it is an ordinary checkpoint. */
export async function readPackManifest(source: ModelSource): Promise<PackManifest | undefined> {
  const text = await source.readText(PACK_MANIFEST);
  if (text === undefined) return undefined;
  let m: PackManifest;
  try {
    m = JSON.parse(text) as PackManifest;
  } catch (e) {
    throw new CheckpointFormatError(`${PACK_MANIFEST} in ${source.where} is not JSON: ${(e as Error).message}`);
  }
  if (m?.format !== 'tessera-pack' || m.version !== 1 || !m.dtype || !m.files || typeof m.files !== 'object') {
    throw new CheckpointFormatError(
      `${PACK_MANIFEST} in ${source.where} is not a version 1 tessera pack manifest (format, version, dtype, files); ` +
        'pack the checkpoint again with this version of tessera',
    );
  }
  return m;
}

/** A packed checkpoint's dtype, refusing another one asked for (its weights exist only in the packed dtype). */
export function packedDtype(pack: PackManifest, asked: DtypePlan | undefined, where: string): DtypePlan {
  const parts = ['vision', 'audio', 'text'] as const;
  if (asked && parts.some((p) => asked[p] !== pack.dtype[p])) {
    const show = (d: DtypePlan) => parts.map((p) => `${p}=${d[p]}`).join(',');
    throw new PackedDtypeError(where, show(asked), show(pack.dtype));
  }
  return pack.dtype;
}

/**
 * Whether a packed file's header holds what `specs` (the layout's tensors in that file) need: each
 * tensor, in one format per target, with the rows and bytes the layout computes. Returns each target's
 * format, or why the file cannot be used.
 */
export function matchPacked(
  header: StoredHeader,
  file: string,
  specs: readonly CheckpointTensorSpec[],
  shapes: ReadonlyMap<string, readonly number[]>,
): Map<string, WeightFormat> | string {
  if (header.file !== file) return `it packs ${header.file}, not ${file}`;
  const byName = new Map(header.entries.map((e) => [e.name, e]));
  const formats = new Map<string, WeightFormat>();
  for (const spec of specs) {
    const e = byName.get(spec.name);
    if (!e) return `it lacks tensor ${spec.name}`;
    const format = formats.get(spec.target) ?? e.format;
    if (e.format !== format) return `tensor ${spec.name} is ${e.format} but its weight's other tensors are ${format}`;
    formats.set(spec.target, format);
    const want: StoredEntry = entryFor(
      spec.name,
      spec.target,
      shapes.get(spec.target)!,
      spec.offsetElems,
      spec.shape.reduce((a, b) => a * b, 1),
      format,
    );
    const got = {
      name: e.name,
      target: e.target,
      format: e.format,
      rowOffset: e.rowOffset,
      rows: e.rows,
      K: e.K,
      dataBytes: e.dataBytes,
      scaleBytes: e.scaleBytes,
    };
    if (JSON.stringify(got) !== JSON.stringify(want)) {
      return `tensor ${spec.name} is packed as ${JSON.stringify(got)}, but this model's config needs ${JSON.stringify(want)}`;
    }
  }
  return formats;
}
