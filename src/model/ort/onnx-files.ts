// The ONNX graphs of a checkpoint, where Hugging Face's exports keep them (the layout transformers.js loads):
//   onnx/<graph><suffix>.onnx        and, for graphs over 2 GB, their weights in onnx/<graph><suffix>.onnx_data
//                                    (and _data_1, _data_2, ... when the export splits them into several files)
// with the suffix naming the weights' dtype: '' f32, '_fp16', '_quantized' (int8), '_q4'.

import { BackendUnsupportedError, OnnxFilesMissingError } from '../../errors';
import type { ModelSource } from '../../io/model-source';
import type { ModelConfig } from '../config';
import type { ProgressCallback } from '../weights';
import type { WeightDtype } from '../weights/dtype';

/** Graph names of an image-text checkpoint (Idefics3 / SmolVLM). */
const IMAGE_TEXT_GRAPHS = ['vision_encoder', 'embed_tokens', 'decoder_model_merged'] as const;

const SUFFIX: Record<WeightDtype, string> = { f32: '', f16: '_fp16', q8: '_quantized', q4: '_q4' };

function onnxFileName(graph: string, dtype: WeightDtype = 'f32'): string {
  return `onnx/${graph}${SUFFIX[dtype]}.onnx`;
}

export interface OnnxGraphBytes {
  file: string;
  model: Uint8Array;
  /** The graph's external weights, when it keeps them beside it. */
  externalData?: Array<{ path: string; data: Uint8Array }>;
}

/**
 * A file's bytes whole (onnxruntime takes a graph as one buffer). Filled in place when the source knows the
 * size, so a 500 MB graph is held once while it loads, not as chunks and then a copy.
 */
async function readAll(source: ModelSource, name: string, onProgress?: ProgressCallback): Promise<Uint8Array | undefined> {
  const opened = await source.openBytes(
    name,
    onProgress && ((loadedBytes, totalBytes) => onProgress({ phase: 'download', file: name, loadedBytes, totalBytes })),
  );
  if (!opened) return undefined;
  const parts: Uint8Array[] = [];
  let out = opened.sizeBytes !== undefined ? new Uint8Array(opened.sizeBytes) : undefined;
  let total = 0;
  for await (const chunk of opened.stream) {
    if (out && total + chunk.byteLength <= out.byteLength) out.set(chunk, total);
    else {
      // No size, or more bytes than it said: collect them and join at the end.
      if (out) parts.push(out.subarray(0, total));
      out = undefined;
      parts.push(chunk);
    }
    total += chunk.byteLength;
    onProgress?.({ phase: 'upload', file: name, loadedBytes: total, totalBytes: opened.sizeBytes });
  }
  if (out) return total === out.byteLength ? out : out.subarray(0, total);
  const joined = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    joined.set(p, at);
    at += p.byteLength;
  }
  return joined;
}

/** The graph files the CPU backend reads at this dtype (each may keep its weights beside it in `<file>_data`). */
export function cpuBackendGraphFiles(dtype: WeightDtype): string[] {
  return IMAGE_TEXT_GRAPHS.map((g) => onnxFileName(g, dtype));
}

/** The files of `graphs` (at the dtype) that `source` lacks, found without reading or downloading them. */
async function missingOnnxFiles(source: ModelSource, graphs: readonly string[], dtype: WeightDtype = 'f32'): Promise<string[]> {
  const missing: string[] = [];
  for (const g of graphs) {
    const file = onnxFileName(g, dtype);
    if (source.exists) {
      if (!(await source.exists(file))) missing.push(file);
      continue;
    }
    const opened = await source.openBytes(file).catch(() => undefined);
    if (!opened) missing.push(file);
    else await (opened.stream as AsyncGenerator).return?.(undefined);
  }
  return missing;
}

/** What the CPU backend would lack for this checkpoint: its ONNX graphs (an audio checkpoint is not run there). */
export async function missingForCpuBackend(source: ModelSource, config: ModelConfig, dtype: WeightDtype): Promise<string[]> {
  if (config.audio) return [`graphs for a ${config.modelType} (audio) checkpoint, which the CPU backend does not run`];
  if (dtype === 'f16') return ["float16 graphs (dtype 'f16'), which the CPU backend does not run"];
  return missingOnnxFiles(source, IMAGE_TEXT_GRAPHS, dtype);
}

/**
 * The CPU backend feeds float32 inputs and K/V; the `_fp16` exports take float16 ones (transformers.js's
 * kv_cache_dtype), so dtype 'f16' is refused by name there rather than failing inside onnxruntime.
 */
function checkCpuDtype(dtype: WeightDtype, backend: string): void {
  if (dtype === 'f16') {
    throw new BackendUnsupportedError(
      backend,
      "dtype 'f16' (its ONNX graphs take float16 inputs and K/V)",
      "use dtype 'f32', 'q8' or 'q4' there",
    );
  }
}

/** The most external-data files a graph is looked for in (transformers.js loads at most as many). */
const MAX_DATA_FILES = 100;

/** A graph's k-th external-data file: `<file>_data`, then `<file>_data_1`, `<file>_data_2`, ... */
function externalDataFile(file: string, k: number): string {
  return `${file}_data${k === 0 ? '' : `_${k}`}`;
}

/**
 * The external-data files of `file` the source says it has, in order (they are numbered without gaps). A
 * source that cannot tell (no `exists`) is taken to have none.
 */
export async function externalDataFiles(source: Pick<ModelSource, 'exists'>, file: string): Promise<string[]> {
  const names: string[] = [];
  for (let k = 0; k < MAX_DATA_FILES; k++) {
    const name = externalDataFile(file, k);
    if (!(await source.exists?.(name))) break;
    names.push(name);
  }
  return names;
}

/** Reads one graph (and its external weights), reporting bytes read ('upload') and downloaded ('download'). */
export async function readOnnxGraph(
  source: ModelSource,
  graph: string,
  dtype: WeightDtype,
  why: string,
  onProgress?: ProgressCallback,
): Promise<OnnxGraphBytes> {
  checkCpuDtype(dtype, 'cpu');
  const file = onnxFileName(graph, dtype);
  const model = await readAll(source, file, onProgress);
  if (!model) throw new OnnxFilesMissingError(source.where, [file], why);
  // Each data file in turn until one is missing (a source without `exists` is asked by reading).
  const externalData: Array<{ path: string; data: Uint8Array }> = [];
  for (let k = 0; k < MAX_DATA_FILES; k++) {
    const name = externalDataFile(file, k);
    const data = (await source.exists?.(name)) === false ? undefined : await readAll(source, name, onProgress);
    if (!data) break;
    // The graph names each file by its path beside it.
    externalData.push({ path: name.slice('onnx/'.length), data });
  }
  return { file, model, ...(externalData.length > 0 ? { externalData } : {}) };
}

/** A graph's bytes with its external weights. */
export function graphBytes(g: OnnxGraphBytes): number {
  return g.model.byteLength + (g.externalData ?? []).reduce((a, d) => a + d.data.byteLength, 0);
}
