// Rotary position embedding, Llama rotate-half convention, in place on q or k; with `mrope`, Qwen-VL's
// M-RoPE: three position rows (t, h, w), each frequency turned by the row of its axis (mropeAxes).
//   x: [numTokens, numHeads, headDim] f32   positions: [numTokens] u32, or [3, numTokens] with mrope
//   cosSin: [maxPositions, headDim] f32 from ropeCosSinTable()   errors: [2] u32 (see rope.wgsl)

import mropeAxisSource from '../../shaders/lib/mrope-axis.wgsl?raw';
import source from '../../shaders/rope.wgsl?raw';
import { UnsupportedShapeError } from '../errors';
import { mropeAxes } from './rope-tables';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { DEFAULT_WORKGROUP_SIZE, expectPositiveInt, expectTensor, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';

export interface RopeShape {
  numTokens: number;
  numHeads: number;
  headDim: number;
  maxPositions: number;
  /** Rotate only the first rotaryHeads heads of each token (default: all). */
  rotaryHeads?: number;
  /** M-RoPE: the frequencies of each axis (t, h, w), summing to headDim / 2, contiguous or interleaved. */
  mrope?: { section: readonly [number, number, number]; interleaved: boolean };
}

/** The kernel's mode and bounds (rope.wgsl axis_of). */
export function mropeParams(shape: Pick<RopeShape, 'mrope'>): [mode: number, a: number, b: number] {
  const m = shape.mrope;
  if (!m) return [0, 0, 0];
  const [t, h, w] = m.section;
  return m.interleaved ? [2, 3 * h, 3 * w] : [1, t, t + h];
}

/** Returns the rotated copy of x. Positions >= maxPositions leave their token unrotated. */
export function ropeReference(x: Float32Array, positions: Uint32Array, cosSin: Float32Array, shape: RopeShape): Float32Array {
  const { numTokens, numHeads, headDim, maxPositions } = shape;
  const half = headDim / 2;
  const axes = mropeAxes(shape);
  const y = Float32Array.from(x);
  for (let t = 0; t < numTokens; t++) {
    for (let h = 0; h < (shape.rotaryHeads ?? numHeads); h++) {
      const base = (t * numHeads + h) * headDim;
      for (let i = 0; i < half; i++) {
        const pos = positions[axes[i]! * numTokens + t]!;
        if (pos >= maxPositions) continue;
        const c = cosSin[pos * headDim + i];
        const s = cosSin[pos * headDim + half + i];
        const a = x[base + i];
        const b = x[base + half + i];
        y[base + i] = a * c - b * s;
        y[base + half + i] = b * c + a * s;
      }
    }
  }
  return y;
}

export async function prepareRope(
  gpu: GpuContext,
  io: { x: Tensor; positions: Tensor; cosSin: Tensor; errors: Tensor },
  shape: RopeShape,
  options: { workgroupSize?: number } = {},
): Promise<KernelDispatch> {
  const kernel = 'rope';
  const { numTokens, numHeads, headDim, maxPositions } = shape;
  const rotaryHeads = shape.rotaryHeads ?? numHeads;
  const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
  if (!Number.isInteger(rotaryHeads) || rotaryHeads < 1 || rotaryHeads > numHeads) {
    throw new UnsupportedShapeError(`rope: rotaryHeads must be in [1, ${numHeads}], got ${rotaryHeads}`);
  }
  expectPositiveInt(kernel, 'numTokens', numTokens);
  expectPositiveInt(kernel, 'numHeads', numHeads);
  expectPositiveInt(kernel, 'headDim', headDim);
  expectPositiveInt(kernel, 'maxPositions', maxPositions);
  if (headDim % 2 !== 0) throw new UnsupportedShapeError(`rope: headDim must be even, got ${headDim}`);
  const section = shape.mrope?.section;
  if (section && !(section.every((s) => Number.isInteger(s) && s >= 0) && section[0] + section[1] + section[2] === headDim / 2)) {
    throw new UnsupportedShapeError(
      `rope: mrope section [${section.join(', ')}] must be whole numbers summing to headDim / 2 = ${headDim / 2}`,
    );
  }
  expectWorkgroupSize(gpu, kernel, wg);
  expectTensor(gpu, kernel, 'x', io.x, [numTokens, numHeads, headDim]);
  expectTensor(gpu, kernel, 'positions', io.positions, section ? [3, numTokens] : [numTokens], 'u32');
  expectTensor(gpu, kernel, 'cosSin', io.cosSin, [maxPositions, headDim]);
  expectTensor(gpu, kernel, 'errors', io.errors, [2], 'u32');
  return createDispatch(gpu, {
    label: kernel,
    code: `${mropeAxisSource}\n${source}`,
    constants: { WG: wg },
    resources: [io.x, io.positions, io.cosSin, io.errors],
    params: packParams([
      ['u32', numTokens],
      ['u32', numHeads],
      ['u32', headDim],
      ['u32', maxPositions],
      ['u32', rotaryHeads],
      ...mropeParams(shape).map((v) => ['u32', v] as const),
    ]),
    grid: linearGrid(gpu, kernel, Math.ceil((numTokens * rotaryHeads * (headDim / 2)) / wg)),
    // The rotated heads read and written in place, each token's position and cos|sin row.
    cost: { flops: 0, bytes: 4 * numTokens * (2 * rotaryHeads * headDim + headDim + 1) },
  });
}
