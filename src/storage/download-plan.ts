// Which checkpoint files a load will download and store, and what that costs in bytes, found before any of
// them is downloaded, so the storage check (check-storage.ts) can hold it against the origin's quota:
//
//   checkpoint                               files a load downloads (whole, into the Cache API)
//   packed (tessera-pack.json)               the packed files the manifest names
//   sharded (model.safetensors.index.json)   every file its weight_map names, once
//   one file                                 model.safetensors
//   on the CPU backend                       onnx/<graph><suffix>.onnx, and its .onnx_data (_data_1, ...) when present
//   a GGUF pair                              the model .gguf and its mmproj .gguf
//
// Everything else (config, tokenizer, templates) is read as text and never stored. Sizes come from the
// source (the Hub listing's, or a HEAD request's Content-Length); a file already stored costs nothing.
// A checkpoint in another layout gives no files here: its load is not checked before, only file by file.

import type { ModelSource, UrlSource } from '../io/model-source';
import { cpuBackendGraphFiles, externalDataFiles } from '../model/ort/onnx-files';
import type { WeightDtype } from '../model/weights/dtype';
import { isGgufSource } from '../model/weights/gguf/gguf-plan';
import { readPackManifest } from '../model/weights/packed-checkpoint';

export interface PlannedFile {
  name: string;
  /** Bytes its download costs; undefined when neither the listing nor a HEAD request said. */
  sizeBytes?: number;
  /** Already in the Cache API: the load reads it there and downloads nothing. */
  stored: boolean;
}

export interface DownloadPlan {
  files: PlannedFile[];
  /** Bytes of the files not stored yet whose size is known. */
  neededBytes: number;
  /** Files not stored yet whose size is unknown (not in neededBytes). */
  unknownSizeFiles: string[];
}

/** The sharded checkpoint's files (weight_map's values, in order, once each); undefined when it is not sharded. */
async function shardFiles(source: ModelSource): Promise<string[] | undefined> {
  const text = await source.readText('model.safetensors.index.json');
  if (text === undefined) return undefined;
  try {
    const map = (JSON.parse(text) as { weight_map?: unknown }).weight_map;
    if (!map || typeof map !== 'object') return [];
    return [...new Set(Object.values(map).filter((f): f is string => typeof f === 'string'))];
  } catch {
    return []; // the load itself reports the malformed index by name
  }
}

/** The weight files a load of `source` reads on this backend (dtype: the CPU backend's graphs are per dtype). */
export async function weightFilesOf(source: ModelSource, backend: 'webgpu' | 'cpu', dtype: WeightDtype): Promise<string[]> {
  if (isGgufSource(source)) return source.gguf.files.map((f) => f.file);
  if (backend === 'cpu') {
    const graphs = cpuBackendGraphFiles(dtype);
    const data = await Promise.all(graphs.map((g) => externalDataFiles(source, g)));
    return graphs.flatMap((g, i) => [g, ...data[i]]);
  }
  const pack = await readPackManifest(source);
  if (pack) return [...new Set(Object.values(pack.files))];
  const shards = await shardFiles(source);
  if (shards) return shards;
  // Absent (a folder in another layout): nothing to plan, rather than a file of unknown size.
  return (await source.exists?.('model.safetensors')) === false ? [] : ['model.safetensors'];
}

/** What downloading `files` from `source` costs now: each file's size, and whether it is stored already. */
export async function planDownload(source: UrlSource, files: readonly string[]): Promise<DownloadPlan> {
  const planned = await Promise.all(
    files.map(async (name): Promise<PlannedFile> => {
      if (await source.isStored(name)) return { name, stored: true };
      const sizeBytes = await source.downloadSize(name);
      return sizeBytes === undefined ? { name, stored: false } : { name, sizeBytes, stored: false };
    }),
  );
  const missing = planned.filter((f) => !f.stored);
  return {
    files: planned,
    neededBytes: missing.reduce((a, f) => a + (f.sizeBytes ?? 0), 0),
    unknownSizeFiles: missing.filter((f) => f.sizeBytes === undefined).map((f) => f.name),
  };
}
