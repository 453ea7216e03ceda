// Row softmax with max subtraction. One workgroup per row.
//   x: [rows, cols] f32   y: [rows, cols] f32

import source from '../../shaders/softmax.wgsl?raw';
import reduceSource from '../../shaders/lib/workgroup-reduce.wgsl?raw';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { DEFAULT_WORKGROUP_SIZE, expectPositiveInt, expectTensor, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';

export interface SoftmaxShape {
  rows: number;
  cols: number;
}

export function softmaxReference(x: Float32Array, shape: SoftmaxShape): Float32Array {
  const { rows, cols } = shape;
  const y = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    const o = r * cols;
    let m = -Infinity;
    for (let i = 0; i < cols; i++) m = Math.max(m, x[o + i]);
    let s = 0;
    for (let i = 0; i < cols; i++) s += Math.exp(x[o + i] - m);
    for (let i = 0; i < cols; i++) y[o + i] = Math.exp(x[o + i] - m) / s;
  }
  return y;
}

export async function prepareSoftmax(
  gpu: GpuContext,
  io: { x: Tensor; y: Tensor },
  shape: SoftmaxShape,
  options: { workgroupSize?: number } = {},
): Promise<KernelDispatch> {
  const kernel = 'softmax';
  const { rows, cols } = shape;
  const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
  expectPositiveInt(kernel, 'rows', rows);
  expectPositiveInt(kernel, 'cols', cols);
  expectWorkgroupSize(gpu, kernel, wg);
  expectTensor(gpu, kernel, 'x', io.x, [rows, cols]);
  expectTensor(gpu, kernel, 'y', io.y, [rows, cols]);
  return createDispatch(gpu, {
    label: kernel,
    code: [reduceSource, source].join('\n'),
    constants: { WG: wg },
    resources: [io.x, io.y],
    params: packParams([
      ['u32', rows],
      ['u32', cols],
    ]),
    grid: linearGrid(gpu, kernel, rows),
    cost: { flops: 0, bytes: 8 * rows * cols },
  });
}
