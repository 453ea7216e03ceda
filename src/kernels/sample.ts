// GPU sampling: temperature, top-k, top-p, then one draw per row from a hash of (seed, step, row), so
// the same seed gives the same tokens. One workgroup per row; see sample.wgsl for the exact semantics.
//   logits: [rows, vocab] f32   out: [rows] u32

import source from '../../shaders/sample.wgsl?raw';
import { UnsupportedShapeError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { expectPositiveInt, expectTensor, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';

export interface SampleShape {
  rows: number;
  vocab: number;
}

export interface SamplingParams {
  /** > 0; greedy decoding uses argmax instead of this kernel. */
  temperature: number;
  /** 0 (or >= vocab) disables top-k. */
  topK: number;
  /** 1 disables top-p. */
  topP: number;
  /** Any u32: the same seed and step give the same draw. */
  seed: number;
  /** Decode step (token index), mixed into the draw. */
  step: number;
}

/** PCG hash, u32 -> u32 (the same integer arithmetic as sample.wgsl). */
export function pcgHash(v: number): number {
  const s = (Math.imul(v >>> 0, 747796405) + 2891336453) >>> 0;
  const w = Math.imul(((s >>> ((s >>> 28) + 4)) ^ s) >>> 0, 277803737) >>> 0;
  return ((w >>> 22) ^ w) >>> 0;
}

/** The uniform in [0, 1) a row draws. */
export function sampleUniform(seed: number, step: number, row: number): number {
  return (pcgHash((pcgHash((seed ^ pcgHash(step)) >>> 0) ^ row) >>> 0) >>> 8) / 16777216;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** Order-preserving u32 key of an f32 value (sample.wgsl key_of). */
export function sortKey(v: number): number {
  f32[0] = v;
  const b = u32[0];
  return (b & 0x80000000 ? ~b : b | 0x80000000) >>> 0;
}

export function sampleReference(logits: Float32Array, shape: SampleShape, params: SamplingParams): Uint32Array {
  const { rows, vocab } = shape;
  const out = new Uint32Array(rows);
  for (let r = 0; r < rows; r++) {
    // z rounded to f32 as on the GPU, so keys compare identically.
    const z = Float32Array.from(logits.subarray(r * vocab, (r + 1) * vocab), (v) => v * (1 / params.temperature));
    const keys = Uint32Array.from(z, sortKey);
    const zMax = Math.max(...z);
    let threshold = 0;
    if (params.topK > 0 && params.topK < vocab) threshold = [...keys].sort((a, b) => b - a)[params.topK - 1];
    if (params.topP < 1) {
      const kept = [...keys.keys()].filter((i) => keys[i] >= threshold).sort((a, b) => keys[b] - keys[a]);
      const total = kept.reduce((a, i) => a + Math.exp(z[i] - zMax), 0);
      let mass = 0;
      for (const i of kept) {
        mass += Math.exp(z[i] - zMax);
        if (mass >= params.topP * total) {
          threshold = Math.max(threshold, keys[i]);
          break;
        }
      }
    }
    let total = 0;
    for (let i = 0; i < vocab; i++) if (keys[i] >= threshold) total += Math.exp(z[i] - zMax);
    const target = sampleUniform(params.seed, params.step, r) * total;
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
  io: { logits: Tensor; out: Tensor },
  shape: SampleShape,
  params: SamplingParams,
  options: { workgroupSize?: number } = {},
): Promise<KernelDispatch> {
  const kernel = 'sample';
  expectPositiveInt(kernel, 'rows', shape.rows);
  expectPositiveInt(kernel, 'vocab', shape.vocab);
  if (!(params.temperature > 0)) {
    throw new UnsupportedShapeError(`sample: temperature must be > 0 (got ${params.temperature}); use argmax for greedy decoding`);
  }
  if (!(params.topP > 0 && params.topP <= 1)) throw new UnsupportedShapeError(`sample: top_p must be in (0, 1], got ${params.topP}`);
  if (!Number.isInteger(params.topK) || params.topK < 0) throw new UnsupportedShapeError(`sample: top_k must be an integer >= 0, got ${params.topK}`);
  const wg = options.workgroupSize ?? 256;
  expectWorkgroupSize(gpu, kernel, wg);
  expectTensor(gpu, kernel, 'logits', io.logits, [shape.rows, shape.vocab]);
  expectTensor(gpu, kernel, 'out', io.out, [shape.rows], 'u32');
  return createDispatch(gpu, {
    label: kernel,
    code: source,
    constants: { WG: wg },
    resources: [io.logits, io.out],
    params: samplingParamsBytes(shape, params),
    grid: linearGrid(gpu, kernel, shape.rows),
  });
}

/** The uniform block for a step (rewrite it with KernelDispatch.writeParams each decode step). */
export function samplingParamsBytes(shape: SampleShape, params: SamplingParams): ArrayBuffer {
  return packParams([
    ['u32', shape.rows],
    ['u32', shape.vocab],
    ['u32', params.topK],
    ['u32', params.seed >>> 0],
    ['f32', params.temperature],
    ['f32', params.topP],
    ['u32', params.step >>> 0],
  ]);
}
