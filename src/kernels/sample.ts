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
import type { SampleShape, SamplingParams } from './sample-reference';

export { sampleReference, type SampleShape, type SamplingParams } from './sample-reference';

/** Bytes of one row's parameters in the rowParams buffer (sample.wgsl `RowParams`). */
export const ROW_PARAMS_BYTES = 32;

/** Histogram bins of one radix digit (sample.wgsl BINS). */
const BINS = wgslConstant(source, 'BINS');

/** Candidate slots held in workgroup memory by default (sample.wgsl CAP). */
const SAMPLE_CANDIDATES = 512;

/**
 * Workgroup memory sample.wgsl declares, bytes: three u32 histograms, 16 bytes per candidate, a 64-bit
 * partial sum per invocation, and under 256 bytes of scalars and structs.
 */
function sampleWorkgroupBytes(workgroupSize: number, candidates: number): number {
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
