// Scatter media embeddings into their placeholder rows of the token-embedding buffer (docs/design.md:
// "splice"): dst[rows[i]] = src[srcRowOffset + i]. Bad rows are skipped and counted in `errors`.
// With `add`, dst[rows[i]] += src[srcRowOffset + i] (Qwen3-VL's DeepStack).
//   src: [numSrcRows, dim] f32   rows: [numRows] u32   dst: [numDstRows, dim] f32   errors: [2] u32

import source from '../../shaders/splice.wgsl?raw';
import { ShapeMismatchError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { DEFAULT_WORKGROUP_SIZE, expectPositiveInt, expectTensor, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, packParams, type DispatchCost, type KernelDispatch } from './dispatch';

export interface SpliceShape {
  numRows: number;
  dim: number;
  numDstRows: number;
  /** Rows in src (default numRows). */
  numSrcRows?: number;
  /** First src row to copy (default 0). */
  srcRowOffset?: number;
}

export function spliceReference(
  src: Float32Array,
  rows: Uint32Array,
  dst: Float32Array,
  shape: SpliceShape,
  options: { add?: boolean } = {},
): Float32Array {
  const out = Float32Array.from(dst);
  const o = shape.srcRowOffset ?? 0;
  for (let i = 0; i < shape.numRows; i++) {
    if (rows[i] >= shape.numDstRows) continue;
    for (let c = 0; c < shape.dim; c++) {
      const v = src[(o + i) * shape.dim + c];
      out[rows[i] * shape.dim + c] = options.add ? out[rows[i] * shape.dim + c] + v : v;
    }
  }
  return out;
}

/** Rows copied (read and written) and their row indices; a step that splices fewer rows costs less. */
export function spliceCost(numRows: number, dim: number): DispatchCost {
  return { flops: 0, bytes: 4 * numRows * (2 * dim + 1) };
}

export async function prepareSplice(
  gpu: GpuContext,
  io: { src: Tensor; rows: Tensor; dst: Tensor; errors: Tensor },
  shape: SpliceShape,
  /** add: dst rows += src rows (DeepStack) instead of being replaced. */
  options: { workgroupSize?: number; add?: boolean } = {},
): Promise<KernelDispatch> {
  const kernel = 'splice';
  const { numRows, dim, numDstRows } = shape;
  const srcRowOffset = shape.srcRowOffset ?? 0;
  const numSrcRows = shape.numSrcRows ?? numRows;
  for (const [name, value] of Object.entries({ numRows, dim, numDstRows, numSrcRows })) expectPositiveInt(kernel, name, value);
  if (srcRowOffset + numRows > numSrcRows) throw new ShapeMismatchError(kernel, 'src rows', srcRowOffset + numRows, numSrcRows);
  const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
  expectWorkgroupSize(gpu, kernel, wg);
  expectTensor(gpu, kernel, 'src', io.src, [numSrcRows, dim]);
  expectTensor(gpu, kernel, 'rows', io.rows, [numRows], 'u32');
  expectTensor(gpu, kernel, 'dst', io.dst, [numDstRows, dim]);
  expectTensor(gpu, kernel, 'errors', io.errors, [2], 'u32');
  return createDispatch(gpu, {
    label: options.add ? `${kernel}:add` : kernel,
    code: source,
    constants: { WG: wg, ADD: options.add ? 1 : 0 },
    resources: [io.src, io.rows, io.dst, io.errors],
    params: packParams([
      ['u32', numRows],
      ['u32', dim],
      ['u32', numDstRows],
      ['u32', srcRowOffset],
    ]),
    grid: linearGrid(gpu, kernel, Math.ceil((numRows * dim) / wg)),
    cost: spliceCost(numRows, dim),
  });
}
