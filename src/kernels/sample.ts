// GPU sampling: temperature, top-k, top-p, then one draw per row from a hash of (seed, step), so the
// same seed gives the same tokens wherever a request sits in a batch. Per-row parameters (each row of a
// batched step belongs to its own request). One workgroup per row; see sample.wgsl for the semantics
// and the radix select that finds the thresholds.
//   logits: [rows, vocab] f32   rowParams: [rows, 8] u32 (RowParams)   out: [rows] u32 (argmax ids in)

import source from '../../shaders/sample.wgsl?raw';
import { DeviceLimitError, InternalError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { DEFAULT_WORKGROUP_SIZE, expectPositiveInt, expectTensor, expectWorkgroupSize, linearGrid, wgslConstant } from './checks';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';

export interface SampleShape {
  rows: number;
  vocab: number;
}

export interface SamplingParams {
  /** > 0 samples; 0 keeps the row's greedy (argmax) id. */
  temperature: number;
  /** 0 (or >= vocab) disables top-k. */
  topK: number;
  /** 1 disables top-p. */
  topP: number;
  /** Any u32: the same seed and step give the same draw. */
  seed: number;
  /** Index of the token being drawn in its request's output (0 for the first), mixed into the draw. */
  step: number;
}

/** Bytes of one row's parameters in the rowParams buffer (sample.wgsl `RowParams`). */
export const ROW_PARAMS_BYTES = 32;

/** Histogram bins of one radix digit (sample.wgsl BINS). */
const BINS = wgslConstant(source, 'BINS');

/** Candidate slots held in workgroup memory by default (sample.wgsl CAP). */
export const SAMPLE_CANDIDATES = 512;

/**
 * Workgroup memory sample.wgsl declares, bytes: three u32 histograms, 16 bytes per candidate, a 64-bit
 * partial sum per invocation, and under 256 bytes of scalars and structs.
 */
export function sampleWorkgroupBytes(workgroupSize: number, candidates: number): number {
  return 3 * 4 * BINS + 16 * candidates + 8 * workgroupSize + 256;
}

/** Pack per-row parameters into `out` (rows * ROW_PARAMS_BYTES bytes) in sample.wgsl's RowParams layout. */
export function packRowParams(
  rows: readonly SamplingParams[],
  out = new ArrayBuffer(Math.max(1, rows.length) * ROW_PARAMS_BYTES),
): ArrayBuffer {
  const view = new DataView(out);
  rows.forEach((r, i) => {
    const o = i * ROW_PARAMS_BYTES;
    if (!(r.temperature >= 0) || !(r.topP > 0 && r.topP <= 1) || !Number.isInteger(r.topK) || r.topK < 0) {
      throw new InternalError(
        `sample: row ${i} has invalid parameters ${JSON.stringify(r)} (validate requests before they reach the kernel)`,
      );
    }
    view.setFloat32(o, r.temperature, true);
    view.setUint32(o + 4, Math.min(r.topK, 0xffffffff), true);
    view.setFloat32(o + 8, r.topP, true);
    view.setUint32(o + 12, r.seed >>> 0, true);
    view.setUint32(o + 16, r.step >>> 0, true);
  });
  return out;
}

/** PCG hash, u32 -> u32 (the same integer arithmetic as sample.wgsl). */
export function pcgHash(v: number): number {
  const s = (Math.imul(v >>> 0, 747796405) + 2891336453) >>> 0;
  const w = Math.imul(((s >>> ((s >>> 28) + 4)) ^ s) >>> 0, 277803737) >>> 0;
  return ((w >>> 22) ^ w) >>> 0;
}

/** The uniform in [0, 1) drawn for (seed, step); the row plays no part. */
export function sampleUniform(seed: number, step: number): number {
  return (pcgHash(pcgHash((seed ^ pcgHash(step)) >>> 0)) >>> 8) / 16777216;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** Order-preserving u32 key of an f32 value (sample.wgsl key_of). */
export function sortKey(v: number): number {
  f32[0] = v;
  const b = u32[0];
  return (b & 0x80000000 ? ~b : b | 0x80000000) >>> 0;
}

/**
 * The kernel's semantics in plain TS. `greedy` is what argmax wrote for each row (rows with
 * temperature 0, or marked non-finite, keep it). Sums are float64 here, in the order written below; the
 * kernel sums exactly in 2^-40 fixed point (order-free), so the two differ only where a draw or a top-p
 * cut sits within rounding of an edge.
 */
export function sampleReference(
  logits: Float32Array,
  shape: SampleShape,
  params: readonly SamplingParams[],
  greedy: Uint32Array,
): Uint32Array {
  const { rows, vocab } = shape;
  const out = Uint32Array.from(greedy);
  for (let r = 0; r < rows; r++) {
    const p = params[r];
    if (!(p.temperature > 0) || greedy[r] === 0xffffffff) continue;
    // z rounded to f32 as on the GPU, so keys compare identically.
    const z = Float32Array.from(logits.subarray(r * vocab, (r + 1) * vocab), (v) => v * Math.fround(1 / p.temperature));
    const keys = Uint32Array.from(z, sortKey);
    let zMax = -Infinity;
    for (const v of z) zMax = Math.max(zMax, v);
    let threshold = 0;
    if (p.topK > 0 && p.topK < vocab) threshold = [...keys].sort((a, b) => b - a)[p.topK - 1];
    if (p.topP < 1) {
      const kept = [...keys.keys()].filter((i) => keys[i] >= threshold).sort((a, b) => keys[b] - keys[a]);
      const total = kept.reduce((a, i) => a + Math.exp(z[i] - zMax), 0);
      let mass = 0;
      for (const i of kept) {
        mass += Math.exp(z[i] - zMax);
        if (mass >= p.topP * total) {
          threshold = Math.max(threshold, keys[i]);
          break;
        }
      }
    }
    let total = 0;
    for (let i = 0; i < vocab; i++) if (keys[i] >= threshold) total += Math.exp(z[i] - zMax);
    const target = sampleUniform(p.seed, p.step) * total;
    let acc = 0;
    let pick = 0;
    for (let i = 0; i < vocab; i++) {
      if (keys[i] < threshold) continue;
      pick = i;
      acc += Math.exp(z[i] - zMax);
      if (acc > target) break;
    }
    out[r] = pick;
  }
  return out;
}

export async function prepareSample(
  gpu: GpuContext,
  io: { logits: Tensor; rowParams: Tensor; out: Tensor },
  shape: SampleShape,
  options: { workgroupSize?: number; candidates?: number } = {},
): Promise<KernelDispatch> {
  const kernel = 'sample';
  expectPositiveInt(kernel, 'rows', shape.rows);
  expectPositiveInt(kernel, 'vocab', shape.vocab);
  const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
  const candidates = options.candidates ?? SAMPLE_CANDIDATES;
  expectWorkgroupSize(gpu, kernel, wg);
  expectPositiveInt(kernel, 'candidates', candidates);
  const bytes = sampleWorkgroupBytes(wg, candidates);
  if (bytes > gpu.limits.maxComputeWorkgroupStorageSize) {
    throw new DeviceLimitError(kernel, 'maxComputeWorkgroupStorageSize', bytes, gpu.limits.maxComputeWorkgroupStorageSize);
  }
  // Fixed-point masses: vocab * 2^40 must fit in 64 bits (sample.wgsl).
  if (shape.vocab >= 2 ** 24) throw new DeviceLimitError(kernel, 'vocab (64-bit fixed-point mass)', shape.vocab, 2 ** 24 - 1);
  expectTensor(gpu, kernel, 'logits', io.logits, [shape.rows, shape.vocab]);
  expectTensor(gpu, kernel, 'rowParams', io.rowParams, [shape.rows, ROW_PARAMS_BYTES / 4], 'u32');
  expectTensor(gpu, kernel, 'out', io.out, [shape.rows], 'u32');
  return createDispatch(gpu, {
    label: kernel,
    code: source,
    constants: { WG: wg, CAP: candidates },
    resources: [io.logits, io.rowParams, io.out],
    params: packParams([
      ['u32', shape.rows],
      ['u32', shape.vocab],
    ]),
    grid: linearGrid(gpu, kernel, shape.rows),
    // Logits, row parameters and the greedy id read, the id written (the kernel reads a row several times).
    cost: { flops: 0, bytes: shape.rows * (4 * shape.vocab + ROW_PARAMS_BYTES + 8) },
  });
}
