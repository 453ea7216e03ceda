// The GPU side of loading weights: one buffer set per GPU weight in its storage format, and the writes
// that fill it, from checkpoint bytes or from a stored copy. Packing happens here, on the GPU:
//
//   checkpoint tensor (F32/F16/BF16 bytes) ─► f32 target:  widened on the host a chunk at a time, written
//                                          ─► bf16 target: BF16 bytes written as they are (only BF16
//                                                          tensors get one: exact storage)
//                                          ─► f16 target:  F16 bytes written as they are; others are
//                                                          widened, staged, packed by quantize.wgsl
//                                          ─► q8/q4:       widened, staged in chunks of rows, quantized
//
// A checkpoint tensor fills rows [rowOffset, rowOffset + rows) of its (possibly fused) target; packing is
// row-wise, so each tensor's packed bytes are one contiguous range of the target's data and scales.
// The staging buffer holds at most STAGING_BYTES of f32 rows at a time: never a whole f32 copy of a
// packed weight on the GPU; and the host widens a chunk at a time, never the whole tensor beside its bytes.

import { CheckpointFormatError, DeviceLimitError, InternalError } from '../../errors';
import type { GpuContext } from '../../gpu/context';
import { STORAGE_USAGE } from '../../gpu/flags';
import type { Tensor } from '../../gpu/tensor';
import { submitDispatches } from '../../kernels/dispatch';
import { prepareQuantize } from '../../kernels/quantize';
import { packedLayout, type PackedWeight, type Weight, type WeightFormat } from '../../kernels/weight-format';
import { checkFiniteBf16Weights, checkFiniteHalfWeights, checkFiniteStored } from '../weight-checks';
import { toFloat32Into, type TensorInfo } from './safetensors';
import { isRowSplit, type LoadedWeight, type RowSplitWeight, rowPieces, rowsPerPart } from './row-split';
import type { StoredEntry } from './stored-copy';

/** f32 rows staged for packing at a time. */
const STAGING_BYTES = 8 * 2 ** 20;
/** Wait for the GPU after this many bytes of packing work, so queued uploads stay bounded. */
const SYNC_EVERY_BYTES = 64 * 2 ** 20;

export interface GpuWeightPlan {
  key: string;
  shape: number[];
  format: WeightFormat;
  /** f16 weights multiplied in f16 (compute 'f16' on a device with shader-f16). */
  f16Math: boolean;
}

function allocateWeight(gpu: GpuContext, plan: GpuWeightPlan): { weight: Weight; buffers: GPUBuffer[]; sizeBytes: number } {
  const create = (label: string, bytes: number) => {
    const size = Math.max(16, Math.ceil(bytes / 16) * 16);
    if (size > gpu.limits.maxBufferSize) {
      throw new CheckpointFormatError(`weight ${plan.key} needs ${size} bytes but this GPU's maxBufferSize is ${gpu.limits.maxBufferSize}`);
    }
    return { buffer: gpu.memory.createBuffer({ label, size, usage: STORAGE_USAGE }), size };
  };
  if (plan.format === 'f32') {
    const numel = plan.shape.reduce((a, b) => a * b, 1);
    const { buffer, size } = create(`weight:${plan.key}`, numel * 4);
    return { weight: { buffer, shape: plan.shape, dtype: 'f32', offsetBytes: 0, label: plan.key }, buffers: [buffer], sizeBytes: size };
  }
  const [N, K] = plan.shape;
  const layout = packedLayout(plan.format, N, K);
  const data = create(`weight:${plan.key}:${plan.format}`, layout.dataWords * 4);
  const tensor = (buffer: GPUBuffer, words: number, label: string): Tensor => ({
    buffer,
    shape: [words],
    dtype: 'u32',
    offsetBytes: 0,
    label,
  });
  const scales = layout.scaleWords > 0 ? create(`weight:${plan.key}:${plan.format}.scales`, layout.scaleWords * 4) : undefined;
  const weight: PackedWeight = {
    format: plan.format,
    shape: [N, K],
    data: tensor(data.buffer, layout.dataWords, `${plan.key}.data`),
    scales: scales ? tensor(scales.buffer, layout.scaleWords, `${plan.key}.scales`) : undefined,
    label: plan.key,
    f16Math: plan.format === 'f16' && plan.f16Math,
  };
  return { weight, buffers: scales ? [data.buffer, scales.buffer] : [data.buffer], sizeBytes: data.size + (scales?.size ?? 0) };
}

/**
 * allocateWeight, or (`rowSplit` weights larger than one binding of `maxBinding` bytes) parts of whole rows,
 * each its own buffers (weights/row-split.ts).
 */
export function allocateLoadedWeight(
  gpu: GpuContext,
  plan: GpuWeightPlan & { rowSplit?: boolean },
  maxBinding: number,
): { weight: LoadedWeight; buffers: GPUBuffer[]; sizeBytes: number } {
  const rows = plan.rowSplit ? rowsPerPart(plan.key, plan.format, plan.shape, maxBinding) : undefined;
  if (rows === undefined) {
    const a = allocateWeight(gpu, plan);
    const largest = Math.max(...a.buffers.map((b) => b.size));
    if (largest > maxBinding) {
      for (const b of a.buffers) gpu.memory.destroyBuffer(b);
      throw new DeviceLimitError(
        `weight ${plan.key} (${plan.format})`,
        'maxStorageBufferBindingSize (bytes of one buffer)',
        largest,
        maxBinding,
        'load it in a smaller dtype (q8 or q4), or on a GPU that binds more.',
      );
    }
    return a;
  }
  const [N, K] = plan.shape;
  const parts = [];
  const buffers: GPUBuffer[] = [];
  let sizeBytes = 0;
  for (let first = 0; first < N; first += rows) {
    const n = Math.min(rows, N - first);
    const a = allocateWeight(gpu, { ...plan, key: `${plan.key}[${first}:${first + n}]`, shape: [n, K] });
    parts.push({ first, rows: n, weight: a.weight });
    buffers.push(...a.buffers);
    sizeBytes += a.sizeBytes;
  }
  const weight: RowSplitWeight = { rowSplit: true, key: plan.key, shape: [N, K], parts };
  return { weight, buffers, sizeBytes };
}

/** The byte ranges of an entry inside its target's buffers. */
function entryRanges(entry: StoredEntry): { dataOffset: number; scaleOffset: number } {
  if (entry.format === 'f32') return { dataOffset: entry.rowOffset * entry.K * 4, scaleOffset: 0 };
  const rowOffset = entry.rowOffset;
  const layout = packedLayout(entry.format, 1, entry.K);
  return { dataOffset: rowOffset * layout.rowWords * 4, scaleOffset: rowOffset * layout.groupsPerRow * 4 };
}

/** What a checkpoint tensor becomes in its target (rows of K values; 1-D tensors are K = 1 rows). */
export function entryFor(
  name: string,
  target: string,
  targetShape: readonly number[],
  offsetElems: number,
  numel: number,
  format: WeightFormat,
): StoredEntry {
  const K = format === 'f32' ? 1 : targetShape[1];
  if (offsetElems % K !== 0 || numel % K !== 0) {
    throw new InternalError(`weight ${target}: tensor ${name} does not cover whole rows of ${K}`);
  }
  const rows = numel / K;
  const layout = packedLayout(format, rows, K);
  return {
    name,
    target,
    format,
    rowOffset: offsetElems / K,
    rows,
    K,
    dataBytes: layout.dataWords * 4,
    scaleBytes: layout.scaleWords * 4,
  };
}

function targetBuffers(w: Weight): { data: GPUBuffer; scales?: GPUBuffer } {
  return 'format' in w ? { data: w.data.buffer, scales: w.scales?.buffer } : { data: w.buffer };
}

/** Fills weights from checkpoint tensors or stored bytes; one per load (owns the staging buffer). */
export class WeightWriter {
  private staging: GPUBuffer | undefined;
  private widened: Float32Array | undefined;
  private sinceSync = 0;

  constructor(private readonly gpu: GpuContext) {}

  /** Write an entry's stored bytes (a stored copy, or f32 checkpoint values) into its target. */
  writeBytes(target: LoadedWeight, entry: StoredEntry, data: Uint8Array, scales?: Uint8Array): void {
    if (isRowSplit(target)) {
      for (const p of rowPieces(target, entry)) {
        const d = entry.dataBytes / entry.rows;
        const sc = entry.scaleBytes / entry.rows;
        this.writeBytes(
          p.weight,
          p.entry,
          data.subarray(p.from * d, (p.from + p.entry.rows) * d),
          scales?.subarray(p.from * sc, (p.from + p.entry.rows) * sc),
        );
      }
      return;
    }
    const { dataOffset, scaleOffset } = entryRanges(entry);
    const b = targetBuffers(target);
    this.writeInPieces(b.data, dataOffset, data);
    if (scales && scales.byteLength > 0) this.writeInPieces(b.scales!, scaleOffset, scales);
  }

  /**
   * writeBuffer a STAGING_BYTES piece at a time, not a whole entry (a stored copy's can be 300 MB) in one
   * call: with this and GGUF's repacking by rows, a full-depth GGUF load's renderer growth in Chromium went
   * from 1929 to 1534 MiB (docs/benchmarks.md, bench:load).
   */
  private writeInPieces(buffer: GPUBuffer, offset: number, bytes: Uint8Array): void {
    for (let o = 0; o < bytes.byteLength; o += STAGING_BYTES) {
      this.gpu.device.queue.writeBuffer(buffer, offset + o, bytes.subarray(o, Math.min(bytes.byteLength, o + STAGING_BYTES)));
    }
  }

  /**
   * Pack one checkpoint tensor into its target (see the header for the paths); NaN/Inf values are a
   * NonFiniteWeightError naming it.
   */
  async writeTensor(target: LoadedWeight, entry: StoredEntry, info: TensorInfo, bytes: Uint8Array, file: string): Promise<void> {
    if (isRowSplit(target)) {
      const perUnit = bytes.byteLength / entry.rows; // the checkpoint's bytes of one unit (a row, or an f32 entry's element)
      for (const p of rowPieces(target, entry)) {
        await this.writeTensor(p.weight, p.entry, info, bytes.subarray(p.from * perUnit, (p.from + p.entry.rows) * perUnit), file);
      }
      return;
    }
    if (entry.format === 'f16' && info.dtype === 'F16') {
      checkFiniteHalfWeights(bytes, info.name, file);
      this.writeBytes(target, entry, bytes); // already f16, in the packed order (pairs little-endian)
      return;
    }
    if (entry.format === 'bf16') {
      // Chosen only for BF16 tensors (weights/dtype.ts, exact storage): the bytes are the packed order.
      if (info.dtype !== 'BF16')
        throw new InternalError(`weight ${entry.target}: bf16 storage chosen for ${info.name}, which is ${info.dtype}`);
      checkFiniteBf16Weights(bytes, info.name, file);
      this.writeBytes(target, entry, bytes);
      return;
    }
    // Widened a chunk at a time: the host never holds an f32 copy of the whole tensor beside its bytes.
    checkFiniteStored(info.dtype, bytes, info.name, file);
    const { K } = entry;
    const bytesPerUnit = bytes.byteLength / entry.rows; // a row of K values (an element for f32 entries)
    // Each chunk is widened into the writer's one scratch array: writeBuffer copies it before returning.
    const values = (first: number, units: number) =>
      toFloat32Into(info, bytes.subarray(first * bytesPerUnit, (first + units) * bytesPerUnit), this.scratch(units * K));
    if (entry.format === 'f32') {
      const { dataOffset } = entryRanges(entry);
      const data = targetBuffers(target).data;
      const perChunk = STAGING_BYTES / 4;
      for (let e = 0; e < entry.rows; e += perChunk) {
        const n = Math.min(perChunk, entry.rows - e);
        this.gpu.device.queue.writeBuffer(data, dataOffset + e * 4, values(e, n));
      }
      return;
    }
    // Within one binding too: the quantize kernel binds the staging rows whole.
    const stagingBytes = Math.min(STAGING_BYTES, this.gpu.limits.maxStorageBufferBindingSize);
    const rowsPerChunk = Math.max(1, Math.floor(stagingBytes / (K * 4)));
    const staging = this.stagingBuffer(Math.min(entry.rows, rowsPerChunk) * K * 4);
    for (let r = 0; r < entry.rows; r += rowsPerChunk) {
      const rows = Math.min(rowsPerChunk, entry.rows - r);
      this.gpu.device.queue.writeBuffer(staging, 0, values(r, rows));
      const src: Tensor = { buffer: staging, shape: [rows, K], dtype: 'f32', offsetBytes: 0, label: 'weights.staging' };
      const d = await prepareQuantize(this.gpu, { src, dst: target as PackedWeight }, { rows, rowOffset: entry.rowOffset + r });
      submitDispatches(this.gpu, [d], 'quantize');
      d.release();
      this.sinceSync += rows * K * 4;
      if (this.sinceSync >= SYNC_EVERY_BYTES) {
        this.sinceSync = 0;
        await this.gpu.sync();
      }
    }
  }

  /** An entry's bytes as they are on the GPU now (for the stored copy). */
  async readEntry(target: LoadedWeight, entry: StoredEntry): Promise<{ data: Uint8Array; scales?: Uint8Array }> {
    if (isRowSplit(target)) {
      const data = new Uint8Array(entry.dataBytes);
      const scales = entry.scaleBytes > 0 ? new Uint8Array(entry.scaleBytes) : undefined;
      for (const p of rowPieces(target, entry)) {
        const got = await this.readEntry(p.weight, p.entry);
        data.set(got.data, p.from * (entry.dataBytes / entry.rows));
        if (scales && got.scales) scales.set(got.scales, p.from * (entry.scaleBytes / entry.rows));
      }
      return { data, scales };
    }
    const { dataOffset, scaleOffset } = entryRanges(entry);
    const b = targetBuffers(target);
    const data = await this.gpu.readBytes(b.data, dataOffset, entry.dataBytes);
    const scales = entry.scaleBytes > 0 ? await this.gpu.readBytes(b.scales!, scaleOffset, entry.scaleBytes) : undefined;
    return { data, scales };
  }

  /** The host array chunks are widened into (grown as needed, never past one chunk). */
  private scratch(values: number): Float32Array {
    if (!this.widened || this.widened.length < values) this.widened = new Float32Array(values);
    return this.widened;
  }

  private stagingBuffer(bytes: number): GPUBuffer {
    if (!this.staging || this.staging.size < bytes) {
      if (this.staging) this.gpu.pool.release(this.staging);
      this.staging = this.gpu.pool.acquire(Math.max(bytes, Math.min(STAGING_BYTES, 2 ** 20)), STORAGE_USAGE, 'weights.staging');
    }
    return this.staging;
  }

  release(): void {
    if (this.staging) this.gpu.pool.release(this.staging);
    this.staging = undefined;
    this.widened = undefined;
  }
}
