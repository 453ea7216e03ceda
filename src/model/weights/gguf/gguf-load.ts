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
// A fused weight the layout reads by parts (GpuWeightSpec.formatParts: the decoder's qkv) whose tensors
// differ in format is held as parts of rows instead, each tensor in its own format (Q4_K_M's Q4_K q and k
// beside a Q6_K v: a q4k part and a q6k part), when every part starts at a storage-binding offset of its
// bias; otherwise it is f32 as other mixed fusions are.
//
// Rows the converter reordered (Llama q/k: GgufTensorRef.unpermuteHeads) are put back in HF order first.

import { MissingTensorError, NonFiniteWeightError, TensorShapeError } from '../../../errors';
import type { GpuContext } from '../../../gpu/context';
import { isKQuant, K_BLOCK, K_BLOCK_WORDS, type KQuantFormat } from '../../../kernels/k-quants';
import type { Weight, WeightFormat } from '../../../kernels/weight-format';
import type { ModelSource } from '../../../io/model-source';
import type { CheckpointTensorSpec, GpuWeightSpec, WeightLayout } from '../../weight-layout';
import { type DtypePlan, storageFormatFor } from '../dtype';
import { allocateLoadedWeight, entryFor, WeightWriter } from '../gpu-weights';
import { aliasAbsent } from '../layout-names';
import type { LoadedWeight, RowPart } from '../row-split';
import type { TensorInfo } from '../safetensors-header';
import type { StoredEntry } from '../stored-copy';
import { dequantizeGgml } from './gguf-blocks';
import type { GgufTensorInfo } from './gguf-format';
import type { GgufCheckpointPlan, GgufTensorRef } from './gguf-plan';
import { unpermutedRow } from './gguf-plan';
import { openGguf } from './gguf-reader';
import { ReadArena } from '../read-arena';
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
  buffers: GPUBuffer[];
  sizeBytes: number;
  /** GPU weights held as f32 because their GGUF blocks have no exact packed format (for the load report). */
  widened: string[];
}

interface Piece {
  file: string;
  info: GgufTensorInfo;
  ref: GgufTensorRef;
}

interface Found extends Piece {
  spec: CheckpointTensorSpec;
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
function formatOf(dtype: DtypePlan, w: GpuWeightSpec, parts: readonly Piece[]): WeightFormat {
  // Slices are put together as f32 values on the host.
  const floats = parts.map((p) => (p.ref.slice ? 'F32' : floatDtypeOf(p.info.type)));
  if (floats.every((d) => d !== undefined)) return storageFormatFor(dtype, w, floats);
  // Blocks are rows of the weight only when the tensor's innermost dimension is the weight's K.
  const exact = new Set(parts.map((p) => (w.shape.length === 2 && p.info.ne[0] === w.shape[1] ? exactFormatOf(p.info.type) : undefined)));
  return exact.size === 1 && !exact.has(undefined) ? [...exact][0]! : 'f32';
}

/** A weight's formats: each checkpoint tensor's, and the parts of rows of one format each (one: whole). */
interface WeightFormats {
  ofTensor: Map<string, WeightFormat>;
  parts: Array<{ first: number; rows: number; format: WeightFormat }>;
}

/**
 * One format for the weight (formatOf), or, for a formatParts weight whose tensors differ, each tensor its
 * own, adjacent tensors of one format sharing a part. `alignment`: a part's first row times 4 bytes must be a
 * multiple of it (the bias of a part is a view at that offset), else the weight is whole.
 */
function formatsOf(dtype: DtypePlan, w: GpuWeightSpec, pieces: readonly Found[], alignment: number): WeightFormats {
  const specs = [...new Map(pieces.map((p) => [p.spec.name, p.spec])).values()].sort((a, b) => a.offsetElems - b.offsetElems);
  const whole = formatOf(dtype, w, pieces);
  const single: WeightFormats = {
    ofTensor: new Map(specs.map((s) => [s.name, whole])),
    parts: [{ first: 0, rows: w.shape[0], format: whole }],
  };
  if (!w.formatParts || w.shape.length !== 2 || specs.length < 2) return single;
  const K = w.shape[1];
  const own = specs.map((spec) => ({
    spec,
    format: formatOf(
      dtype,
      w,
      pieces.filter((p) => p.spec.name === spec.name),
    ),
  }));
  if (own.every((o) => o.format === whole)) return single;
  const parts: WeightFormats['parts'] = [];
  for (const { spec, format } of own) {
    const first = spec.offsetElems / K;
    const last = parts.at(-1);
    if (last && last.format === format && last.first + last.rows === first) last.rows += numelOf(spec.shape) / K;
    else parts.push({ first, rows: numelOf(spec.shape) / K, format });
  }
  if (parts.some((p) => (p.first * 4) % alignment !== 0)) return single;
  return { ofTensor: new Map(own.map((o) => [o.spec.name, o.format])), parts };
}

/** Non-finite scales among packed rows: the first bad one's value index and how many values they scale. */
interface BadScales {
  first: number;
  count: number;
}

/** q8 / q4 groups of 32 whose scale (or minimum) is NaN or infinite. */
function badScales(format: 'q8' | 'q4', scales: Uint8Array): BadScales {
  const words = new Uint32Array(scales.buffer, scales.byteOffset, scales.byteLength / 4);
  const floats = new Float32Array(words.buffer, words.byteOffset, words.length);
  const bad = (i: number) =>
    format === 'q8' ? !Number.isFinite(floats[i]) : (words[i] & 0x7c00) === 0x7c00 || ((words[i] >>> 16) & 0x7c00) === 0x7c00;
  const found = { first: -1, count: 0 };
  for (let i = 0; i < words.length; i++) {
    if (!bad(i)) continue;
    if (found.first < 0) found.first = i * 32;
    found.count += 32;
  }
  return found;
}

/** K-quant blocks whose d (or dmin) is NaN or infinite. */
function badBlockScales(format: KQuantFormat, data: Uint8Array): BadScales {
  const words = new Uint32Array(data.buffer, data.byteOffset, data.byteLength / 4);
  const floats = new Float32Array(words.buffer, words.byteOffset, words.length);
  const per = K_BLOCK_WORDS[format];
  const found = { first: -1, count: 0 };
  for (let b = 0; b < words.length / per; b++) {
    const bad =
      format === 'q6k'
        ? !Number.isFinite(floats[b * per + 52])
        : (words[b * per] & 0x7c00) === 0x7c00 || ((words[b * per] >>> 16) & 0x7c00) === 0x7c00;
    if (!bad) continue;
    if (found.first < 0) found.first = b * K_BLOCK;
    found.count += K_BLOCK;
  }
  return found;
}

/** GGUF block bytes repacked per chunk of rows: a 330 MB Q6_K head is never held twice, nor written in one call. */
const REPACK_CHUNK_BYTES = 8 * 2 ** 20;

/**
 * Rows of GGUF blocks into their packed target (gguf-repack.ts), a chunk of rows at a time. Non-finite block
 * scales anywhere in the tensor are one NonFiniteWeightError naming the first and counting all, as a NaN
 * value in any checkpoint is.
 */
function writeBlocks(
  writer: WeightWriter,
  target: LoadedWeight,
  entry: StoredEntry,
  type: GgufTensorInfo['type'],
  bytes: Uint8Array,
  where: { name: string; file: string },
): void {
  const rowBytes = bytes.byteLength / entry.rows;
  const rowsPerChunk = Math.max(1, Math.floor(REPACK_CHUNK_BYTES / rowBytes));
  const bad: BadScales = { first: -1, count: 0 };
  for (let r = 0; r < entry.rows; r += rowsPerChunk) {
    const rows = Math.min(rowsPerChunk, entry.rows - r);
    const packed = repackBlocks(type, bytes.subarray(r * rowBytes, (r + rows) * rowBytes), rows, entry.K);
    const found = isKQuant(entry.format)
      ? badBlockScales(entry.format, packed.data)
      : badScales(entry.format as 'q8' | 'q4', packed.scales);
    if (found.count > 0 && bad.first < 0) bad.first = r * entry.K + found.first;
    bad.count += found.count;
    if (bad.count > 0) continue; // the load fails: nothing more is written
    const part = {
      ...entry,
      rowOffset: entry.rowOffset + r,
      rows,
      dataBytes: packed.data.byteLength,
      scaleBytes: packed.scales.byteLength,
    };
    writer.writeBytes(target, part, packed.data, packed.scales);
  }
  if (bad.count > 0) throw new NonFiniteWeightError(where.name, where.file, bad.first, Number.NaN, bad.count);
}

const numelOf = (shape: readonly number[]) => shape.reduce((a, b) => a * b, 1);

/** Every piece the HF tensor needs, each checked against its shape, or a named error. */
function piecesFor(spec: CheckpointTensorSpec, pieces: Piece[] | undefined, where: string): Found[] {
  if (!pieces || pieces.length === 0) throw new MissingTensorError(spec.name, spec.shape, where);
  const bad = (p: Piece, want: readonly number[]): never => {
    throw new TensorShapeError(`${spec.name} (${p.info.name})`, want, p.info.shape, p.file);
  };
  const rowNumel = numelOf(spec.shape.slice(1));
  const slice = pieces[0].ref.slice;
  if (slice) {
    const want = spec.shape.map((d, i) => (i === slice.axis ? d / slice.count : d));
    // A slice one thick may be stored without that axis (the converter's data[:, :, 0]).
    const squeezed = want[slice.axis] === 1 ? want.filter((_, i) => i !== slice.axis) : want;
    const indexes = new Set(pieces.map((p) => p.ref.slice?.index));
    if (pieces.length !== slice.count || indexes.size !== slice.count)
      throw new MissingTensorError(`${spec.name} (${slice.count} slices)`, spec.shape, where);
    for (const p of pieces)
      if (!(sameShape(p.info.shape, want) || sameShape(p.info.shape, squeezed)) || !floatDtypeOf(p.info.type)) bad(p, want);
  } else if (pieces[0].ref.rows) {
    const { count } = pieces[0].ref.rows;
    const want = [spec.shape[0] / count, ...spec.shape.slice(1)];
    const indexes = new Set(pieces.map((p) => p.ref.rows?.index));
    if (pieces.length !== count || indexes.size !== count)
      throw new MissingTensorError(`${spec.name} (${count} parts of its rows)`, spec.shape, where);
    for (const p of pieces) if (p.info.shape[0] !== want[0] || numelOf(p.info.shape.slice(1)) !== rowNumel) bad(p, want);
  } else {
    const p = pieces[0];
    if (pieces.length > 1 || (p.ref.reshape ? numelOf(p.info.shape) !== numelOf(spec.shape) : !sameShape(p.info.shape, spec.shape)))
      bad(p, spec.shape);
  }
  return pieces.map((p) => ({ ...p, spec }));
}

/** Slices of an HF tensor (GgufTensorRef.slice), put together along their axis. */
function joinSlices(shape: readonly number[], axis: number, slices: readonly Float32Array[]): Float32Array {
  const outer = numelOf(shape.slice(0, axis));
  const inner = numelOf(shape.slice(axis + 1));
  const part = (shape[axis] / slices.length) * inner;
  const out = new Float32Array(numelOf(shape));
  for (let o = 0; o < outer; o++) {
    slices.forEach((s, i) => {
      out.set(s.subarray(o * part, (o + 1) * part), o * shape[axis] * inner + i * part);
    });
  }
  return out;
}

export async function loadGgufTensors(ctx: GgufLoadContext): Promise<GgufLoaded> {
  const { gpu, plan, layout } = ctx;
  const byHf = new Map<string, Piece[]>();
  for (const f of plan.files) {
    for (const [ggufName, ref] of f.tensors) {
      const info = f.header.tensors.get(ggufName);
      if (info) byHf.set(ref.hfName, [...(byHf.get(ref.hfName) ?? []), { file: f.file, info, ref }]);
    }
  }
  aliasAbsent(layout, (name) => byHf.has(name));
  const where = plan.files.map((f) => f.file).join(' + ');
  const found: Found[] = layout.checkpoint.flatMap((spec) => piecesFor(spec, byHf.get(spec.name), where));

  const weights = new Map<string, LoadedWeight>();
  /** The format each checkpoint tensor is written in (its weight's, or its part's). */
  const formats = new Map<string, WeightFormat>();
  const buffers: GPUBuffer[] = [];
  const widened: string[] = [];
  let sizeBytes = 0;
  const writer = new WeightWriter(gpu);
  // Each tensor is written to the GPU (or copied) before the next is read: all are read into one buffer.
  const arena = new ReadArena();
  const maxBinding = gpu.limits.maxStorageBufferBindingSize;
  try {
    for (const w of layout.gpu) {
      const pieces = found.filter((f) => f.spec.target === w.key);
      const { ofTensor, parts } = formatsOf(ctx.dtype, w, pieces, gpu.limits.minStorageBufferOffsetAlignment);
      for (const [name, format] of ofTensor) formats.set(name, format);
      if (pieces.some((p) => ofTensor.get(p.spec.name) === 'f32' && !floatDtypeOf(p.info.type))) widened.push(w.key);
      const common = { f16Math: ctx.f16Math, rowSplit: w.rowSplit };
      if (parts.length === 1) {
        const a = allocateLoadedWeight(gpu, { ...common, key: w.key, shape: w.shape, format: parts[0].format }, maxBinding);
        weights.set(w.key, a.weight);
        buffers.push(...a.buffers);
        sizeBytes += a.sizeBytes;
        continue;
      }
      const held: RowPart[] = [];
      for (const p of parts) {
        const key = `${w.key}[${p.first}:${p.first + p.rows}]`;
        const a = allocateLoadedWeight(gpu, { ...common, key, shape: [p.rows, w.shape[1]], format: p.format, rowSplit: false }, maxBinding);
        held.push({ first: p.first, rows: p.rows, weight: a.weight as Weight });
        buffers.push(...a.buffers);
        sizeBytes += a.sizeBytes;
      }
      weights.set(w.key, { rowSplit: true, key: w.key, shape: [w.shape[0], w.shape[1]], parts: held });
    }
    const shapes = new Map(layout.gpu.map((w) => [w.key, w.shape]));
    // Slices of one HF tensor wait here until all have arrived (GgufTensorRef.slice).
    const slices = new Map<string, Float32Array[]>();
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
      arena.reserve(Math.max(...[...wanted.values()].map((x) => x.info.sizeBytes)));
      const gguf = await openGguf(
        opened.stream,
        f.file,
        (loaded) => ctx.onUpload?.(f.file, loaded, opened.sizeBytes),
        opened.sizeBytes,
        arena.options((name) => !wanted.has(name)),
      );
      try {
        for await (const { info, bytes: stored } of gguf.tensors) {
          const hit = wanted.get(info.name);
          if (!hit) continue;
          const { spec, ref } = hit;
          const target = weights.get(spec.target)!;
          const format = formats.get(spec.name)!;
          // Rows of the stored order: a matrix's rows, a 1-D tensor's elements (a Llama q/k bias is reordered too).
          const rows = info.ne.length === 1 ? info.ne[0] : numelOf(info.ne.slice(1));
          const bytes = ref.unpermuteHeads ? unpermuteRows(stored, rows, ref.unpermuteHeads) : stored;
          if (ref.slice) {
            const got = slices.get(spec.name) ?? [];
            got[ref.slice.index] = Float32Array.from(dequantizeGgml(info.type, bytes, numelOf(info.shape)));
            slices.set(spec.name, got);
            if (got.filter(Boolean).length < ref.slice.count) continue;
            slices.delete(spec.name);
            const values = joinSlices(spec.shape, ref.slice.axis, got);
            const entry = entryFor(spec.name, spec.target, shapes.get(spec.target)!, spec.offsetElems, values.length, format);
            const asF32: TensorInfo = { name: spec.name, dtype: 'F32', shape: spec.shape, begin: 0, end: values.byteLength };
            await writer.writeTensor(target, entry, asF32, new Uint8Array(values.buffer), f.file);
            continue;
          }
          const numel = numelOf(info.shape);
          // Part i of equal parts of the rows starts i parts in.
          const offset = spec.offsetElems + (ref.rows ? ref.rows.index * numel : 0);
          const entry = entryFor(spec.name, spec.target, shapes.get(spec.target)!, offset, numel, format);
          const float = floatDtypeOf(info.type);
          if (float) {
            const asSafetensors: TensorInfo = { name: spec.name, dtype: float, shape: info.shape, begin: 0, end: bytes.byteLength };
            await writer.writeTensor(target, entry, asSafetensors, bytes, f.file);
          } else if (format === 'q8' || format === 'q4' || isKQuant(format)) {
            writeBlocks(writer, target, entry, info.type, bytes, { name: spec.name, file: f.file });
          } else {
            const values = Float32Array.from(dequantizeGgml(info.type, bytes, numel));
            const asF32: TensorInfo = { name: spec.name, dtype: 'F32', shape: info.shape, begin: 0, end: values.byteLength };
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
    arena.release();
  }
  return { weights, buffers, sizeBytes, widened };
}
