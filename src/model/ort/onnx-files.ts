// The ONNX graphs of a checkpoint, where Hugging Face's exports keep them (the layout transformers.js loads):
//   onnx/<graph><suffix>.onnx        and, for graphs over 2 GB, their weights in onnx/<graph><suffix>.onnx_data
// with the suffix naming the weights' dtype: '' f32, '_fp16', '_quantized' (int8), '_q4'.

import { OnnxFilesMissingError } from '../../errors';
import type { ModelSource } from '../../io/model-source';
import type { WeightDtype } from '../weights/dtype';

/** Graph names of an image-text checkpoint (Idefics3 / SmolVLM). */
export const IMAGE_TEXT_GRAPHS = ['vision_encoder', 'embed_tokens', 'decoder_model_merged'] as const;
export type GraphName = (typeof IMAGE_TEXT_GRAPHS)[number];

const SUFFIX: Record<WeightDtype, string> = { f32: '', f16: '_fp16', q8: '_quantized', q4: '_q4' };

export function onnxFileName(graph: string, dtype: WeightDtype = 'f32'): string {
  return `onnx/${graph}${SUFFIX[dtype]}.onnx`;
}

export interface OnnxGraphBytes {
  file: string;
  model: Uint8Array;
  /** The graph's external weights, when it keeps them beside it. */
  externalData?: Array<{ path: string; data: Uint8Array }>;
}

async function readAll(source: ModelSource, name: string): Promise<Uint8Array | undefined> {
  const opened = await source.openBytes(name);
  if (!opened) return undefined;
  const parts: Uint8Array[] = [];
  let total = 0;
  for await (const chunk of opened.stream) {
    parts.push(chunk);
    total += chunk.byteLength;
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/** Whether `source` has every graph in `graphs` (at the dtype), without reading them. */
export async function hasOnnxGraphs(source: ModelSource, graphs: readonly string[], dtype: WeightDtype = 'f32'): Promise<string[]> {
  const missing: string[] = [];
  for (const g of graphs) {
    const opened = await source.openBytes(onnxFileName(g, dtype)).catch(() => undefined);
    if (!opened) missing.push(onnxFileName(g, dtype));
    else if ('return' in opened.stream && typeof opened.stream.return === 'function')
      await (opened.stream as AsyncGenerator).return(undefined);
  }
  return missing;
}

/** Reads one graph (and its external weights). Throws OnnxFilesMissingError naming what is missing. */
export async function readOnnxGraph(source: ModelSource, graph: string, dtype: WeightDtype, why: string): Promise<OnnxGraphBytes> {
  const file = onnxFileName(graph, dtype);
  const model = await readAll(source, file);
  if (!model) throw new OnnxFilesMissingError(source.where, [file], why);
  const data = await readAll(source, `${file}_data`);
  const base = file.slice('onnx/'.length);
  return { file, model, ...(data ? { externalData: [{ path: `${base}_data`, data }] } : {}) };
}
