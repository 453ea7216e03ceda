// Rows of a table interpolated bilinearly and added to out: out[n] += Σ_k w[k, n] · table[idx[k, n]] over
// the four corners (Qwen3-VL's learned positions resampled to an image's patch grid). The corners and
// weights come from the host (src/model/qwen-positions.ts).
//   table: [tableRows, dim] f32   idx: [4, rows] u32   w: [4, rows] f32   out: [rows, dim] f32

import source from '../../shaders/bilinear-rows.wgsl?raw';
import { UnsupportedShapeError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { DEFAULT_WORKGROUP_SIZE, expectPositiveInt, expectTensor, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';

export interface BilinearRowsShape {
  rows: number;
  dim: number;
  tableRows: number;
}

export function bilinearRowsReference(
  table: Float32Array,
  idx: Uint32Array,
  w: Float32Array,
  out: Float32Array,
  shape: BilinearRowsShape,
): Float32Array {
  const { rows, dim } = shape;
  const y = Float32Array.from(out);
  for (let n = 0; n < rows; n++) {
    for (let d = 0; d < dim; d++) {
      let acc = 0;
      for (let k = 0; k < 4; k++) acc += w[k * rows + n] * table[idx[k * rows + n] * dim + d];
      y[n * dim + d] += acc;
    }
  }
  return y;
}

export async function prepareBilinearRows(
  gpu: GpuContext,
  io: { table: Tensor; idx: Tensor; w: Tensor; out: Tensor },
  shape: BilinearRowsShape,
  options: { workgroupSize?: number } = {},
): Promise<KernelDispatch> {
  const kernel = 'bilinear-rows';
  const { rows, dim, tableRows } = shape;
  for (const [name, v] of Object.entries({ rows, dim, tableRows })) expectPositiveInt(kernel, name, v);
  const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
  expectWorkgroupSize(gpu, kernel, wg);
  expectTensor(gpu, kernel, 'table', io.table, [tableRows, dim]);
  expectTensor(gpu, kernel, 'idx', io.idx, [4, rows], 'u32');
  expectTensor(gpu, kernel, 'w', io.w, [4, rows]);
  expectTensor(gpu, kernel, 'out', io.out, [rows, dim]);
  if (rows * dim >= 2 ** 32) throw new UnsupportedShapeError(`${kernel}: ${rows} x ${dim} elements overflow a u32 index`);
  return createDispatch(gpu, {
    label: kernel,
    code: source,
    constants: { WG: wg },
    resources: [io.table, io.idx, io.w, io.out],
    params: packParams([
      ['u32', rows],
      ['u32', dim],
      ['u32', 0],
      ['u32', 0],
    ]),
    grid: linearGrid(gpu, kernel, Math.ceil((rows * dim) / wg)),
    cost: { flops: 8 * rows * dim, bytes: 4 * (2 * rows * dim + 4 * rows * dim + 8 * rows) },
  });
}
