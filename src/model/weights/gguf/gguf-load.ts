// Load a GGUF checkpoint's tensors into the model's GPU weights (weights.ts calls this for a GgufModelSource).
// Every expected tensor is found and its shape checked in the headers BEFORE anything is uploaded; then
// each file streams through once, a tensor at a time:
//
//   GGUF tensor                 GPU weight format                 written as
//   F32 / F16 / BF16            the load's dtype (as safetensors)  WeightWriter.writeTensor
//   Q8_0 / Q4_0 / Q4_1          q8 / q4 (exact, gguf-repack.ts)    repacked blocks, WeightWriter.writeBytes
//   Q4_K / Q5_K / Q6_K          q4k / q5k / q6k (the blocks)       WeightWriter.writeBytes
//   other block types, mixed    f32 (exact, 8 bytes per 1 of Q4)   dequantized, WeightWriter.writeTensor
//   fusions, or rows that are
//   not the weight's rows
//
// Rows the converter reordered (Llama q/k: GgufTensorRef.unpermuteHeads) are put back in HF order first.

import { MissingTensorError, NonFiniteWeightError, TensorShapeError } from '../../../errors';
import type { GpuContext } from '../../../gpu/context';
import { isKQuant, K_BLOCK, K_BLOCK_WORDS, type KQuantFormat } from '../../../kernels/k-quants';
import type { WeightFormat } from '../../../kernels/weight-format';
import type { ModelSource } from '../../../io/model-source';
import type { CheckpointTensorSpec, GpuWeightSpec, WeightLayout } from '../../weight-layout';
import { type DtypePlan, storageFormatFor } from '../dtype';
import { allocateLoadedWeight, entryFor, WeightWriter } from '../gpu-weights';
import { aliasAbsent } from '../layout-names';
import type { LoadedWeight } from '../row-split';
import type { TensorInfo } from '../safetensors-header';
import { dequantizeGgml } from './gguf-blocks';
import type { GgufTensorInfo } from './gguf-format';
import type { GgufCheckpointPlan, GgufTensorRef } from './gguf-plan';
import { unpermutedRow } from './gguf-plan';
import { openGguf } from './gguf-reader';
import { exactFormatOf, floatDtypeOf, repackBlocks } from './gguf-repack';

export interface GgufLoadContext {
  gpu: GpuContext;
  source: ModelSource;
  plan: GgufCheckpointPlan;
  layout: WeightLayout;
  dtype: DtypePlan;
  f16Math: boolean;
  onDownload?: (file: string, loadedBytes: number, totalBytes: number | undefined) => void;
  onUpload?: (file: string, loadedBytes: number, totalBytes: number | undefined) => void;
}

export interface GgufLoaded {
  weights: Map<string, LoadedWeight>;
  formats: Map<string, WeightFormat>;
  buffers: GPUBuffer[];
  sizeBytes: number;
  /** GPU weights held as f32 because their GGUF blocks have no exact packed format (for the load report). */
  widened: string[];
}

interface Found {
  spec: CheckpointTensorSpec;
  file: string;
  info: GgufTensorInfo;
  ref: GgufTensorRef;
}

const sameShape = (a: readonly number[], b: readonly number[]) => a.length === b.length && a.every((d, i) => d === b[i]);

/** The tensor's bytes with its rows back in HF order. */
function unpermuteRows(bytes: Uint8Array, rows: number, heads: number): Uint8Array {
  const rowBytes = bytes.byteLength / rows;
  const out = new Uint8Array(bytes.byteLength);
  for (let r = 0; r < rows; r++) out.set(bytes.subarray(r * rowBytes, (r + 1) * rowBytes), unpermutedRow(r, rows, heads) * rowBytes);
  return out;
}

/** The GPU format of a weight filled from these GGUF tensors. */
function formatOf(dtype: DtypePlan, w: GpuWeightSpec, parts: readonly GgufTensorInfo[]): WeightFormat {
  const floats = parts.map((p) => floatDtypeOf(p.type));
  if (floats.every((d) => d !== undefined)) return storageFormatFor(dtype, w, floats);
  // Blocks are rows of the weight only when the tensor's innermost dimension is the weight's K.
  const exact = new Set(parts.map((p) => (w.shape.length === 2 && p.ne[0] === w.shape[1] ? exactFormatOf(p.type) : undefined)));
  return exact.size === 1 && !exact.has(undefined) ? [...exact][0]! : 'f32';
}

/** A NaN or infinite block scale is a NonFiniteWeightError, as a NaN value in any checkpoint is. */
function checkFiniteScales(format: 'q8' | 'q4', scales: Uint8Array, name: string, file: string): void {
  const words = new Uint32Array(scales.buffer, scales.byteOffset, scales.byteLength / 4);
  const floats = new Float32Array(words.buffer, words.byteOffset, words.length);
  const bad = (i: number) =>
    format === 'q8' ? !Number.isFinite(floats[i]) : (words[i] & 0x7c00) === 0x7c00 || ((words[i] >>> 16) & 0x7c00) === 0x7c00;
  let first = -1;
  let count = 0;
  for (let i = 0; i < words.length; i++) {
    if (!bad(i)) continue;
    if (first < 0) first = i;
    count++;
  }
  if (count > 0) throw new NonFiniteWeightError(name, file, first * 32, Number.NaN, count * 32);
}

/** A K-quant block whose d (or dmin) is NaN or infinite is a NonFiniteWeightError. */
function checkFiniteBlockScales(format: KQuantFormat, data: Uint8Array, name: string, file: string): void {
  const words = new Uint32Array(data.buffer, data.byteOffset, data.byteLength / 4);
  const floats = new Float32Array(words.buffer, words.byteOffset, words.length);
  const per = K_BLOCK_WORDS[format];
  let first = -1;
  let count = 0;
  for (let b = 0; b < words.length / per; b++) {
    const bad =
      format === 'q6k'
        ? !Number.isFinite(floats[b * per + 52])
        : (words[b * per] & 0x7c00) === 0x7c00 || ((words[b * per] >>> 16) & 0x7c00) === 0x7c00;
    if (!bad) continue;
    if (first < 0) first = b;
    count++;
  }
  if (count > 0) throw new NonFiniteWeightError(name, file, first * K_BLOCK, Number.NaN, count * K_BLOCK);
}

export async function loadGgufTensors(ctx: GgufLoadContext): Promise<GgufLoaded> {
  const { gpu, plan, layout } = ctx;
  const byHf = new Map<string, { file: string; info: GgufTensorInfo; ref: GgufTensorRef }>();
  for (const f of plan.files) {
    for (const [ggufName, ref] of f.tensors) {
      const info = f.header.tensors.get(ggufName);
      if (info) byHf.set(ref.hfName, { file: f.file, info, ref });
    }
  }
  aliasAbsent(layout, (name) => byHf.has(name));
  const where = plan.files.map((f) => f.file).join(' + ');
  const found: Found[] = layout.checkpoint.map((spec) => {
    const hit = byHf.get(spec.name);
    if (!hit) throw new MissingTensorError(spec.name, spec.shape, where);
    if (!sameShape(hit.info.shape, spec.shape))
      throw new TensorShapeError(`${spec.name} (${hit.info.name})`, spec.shape, hit.info.shape, hit.file);
    return { spec, ...hit };
  });

  const weights = new Map<string, LoadedWeight>();
  const formats = new Map<string, WeightFormat>();
  const buffers: GPUBuffer[] = [];
  const widened: string[] = [];
  let sizeBytes = 0;
  const writer = new WeightWriter(gpu);
  try {
    for (const w of layout.gpu) {
      const parts = found.filter((f) => f.spec.target === w.key).map((f) => f.info);
      const format = formatOf(ctx.dtype, w, parts);
      if (format === 'f32' && parts.some((p) => !floatDtypeOf(p.type))) widened.push(w.key);
      const a = allocateLoadedWeight(
        gpu,
        { key: w.key, shape: w.shape, format, f16Math: ctx.f16Math, rowSplit: w.rowSplit },
        gpu.limits.maxStorageBufferBindingSize,
      );
      weights.set(w.key, a.weight);
      formats.set(w.key, format);
      buffers.push(...a.buffers);
      sizeBytes += a.sizeBytes;
    }
    const shapes = new Map(layout.gpu.map((w) => [w.key, w.shape]));
    for (const f of plan.files) {
      const wanted = new Map(found.filter((x) => x.file === f.file).map((x) => [x.info.name, x]));
      if (wanted.size === 0) continue;
      const opened = await ctx.source.openBytes(f.file, (loaded, total) => ctx.onDownload?.(f.file, loaded, total));
      if (!opened)
        throw new MissingTensorError(
          [...wanted.values()][0].spec.name,
          [...wanted.values()][0].spec.shape,
          `${ctx.source.where} (the file ${f.file} does not exist)`,
        );
      const gguf = await openGguf(opened.stream, f.file, (loaded) => ctx.onUpload?.(f.file, loaded, opened.sizeBytes), opened.sizeBytes);
      try {
        for await (const { info, bytes: stored } of gguf.tensors) {
          const hit = wanted.get(info.name);
          if (!hit) continue;
          const { spec } = hit;
          const target = weights.get(spec.target)!;
          const format = formats.get(spec.target)!;
          const numel = spec.shape.reduce((a, b) => a * b, 1);
          const entry = entryFor(spec.name, spec.target, shapes.get(spec.target)!, spec.offsetElems, numel, format);
          // Rows of the stored order: a matrix's rows, a 1-D tensor's elements (a Llama q/k bias is reordered too).
          const rows = info.ne.length === 1 ? info.ne[0] : info.ne.slice(1).reduce((a, b) => a * b, 1);
          const bytes = hit.ref.unpermuteHeads ? unpermuteRows(stored, rows, hit.ref.unpermuteHeads) : stored;
          const float = floatDtypeOf(info.type);
          if (float) {
            const asSafetensors: TensorInfo = { name: spec.name, dtype: float, shape: spec.shape, begin: 0, end: bytes.byteLength };
            await writer.writeTensor(target, entry, asSafetensors, bytes, f.file);
          } else if (format === 'q8' || format === 'q4') {
            const packed = repackBlocks(info.type, bytes, entry.rows, entry.K);
            checkFiniteScales(format, packed.scales, spec.name, f.file);
            writer.writeBytes(target, entry, packed.data, packed.scales);
          } else if (isKQuant(format)) {
            const packed = repackBlocks(info.type, bytes, entry.rows, entry.K);
            checkFiniteBlockScales(format, packed.data, spec.name, f.file);
            writer.writeBytes(target, entry, packed.data);
          } else {
            const values = Float32Array.from(dequantizeGgml(info.type, bytes, numel));
            const asF32: TensorInfo = { name: spec.name, dtype: 'F32', shape: spec.shape, begin: 0, end: values.byteLength };
            await writer.writeTensor(target, entry, asF32, new Uint8Array(values.buffer), f.file);
          }
        }
      } finally {
        await gguf.close();
      }
    }
  } catch (e) {
    for (const b of buffers) gpu.memory.destroyBuffer(b);
    throw e;
  } finally {
    writer.release();
  }
  return { weights, formats, buffers, sizeBytes, widened };
}
