// RMSNorm over the last dimension (HF LlamaRMSNorm). One workgroup per row.
//   x: [rows, dim] f32   weight: [dim] f32   y: [rows, dim] f32

import source from '../../shaders/rms-norm.wgsl?raw';
import reduceSource from '../../shaders/lib/workgroup-reduce.wgsl?raw';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { DEFAULT_WORKGROUP_SIZE, expectPositiveInt, expectTensor, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';

export interface RmsNormShape {
  rows: number;
  dim: number;
}

export interface RmsNormOptions {
  eps: number;
  workgroupSize?: number;
}

export function rmsNormReference(x: Float32Array, w: Float32Array, shape: RmsNormShape, eps: number): Float32Array {
  const { rows, dim } = shape;
  const y = new Float32Array(rows * dim);
  for (let r = 0; r < rows; r++) {
    let sq = 0;
    for (let i = 0; i < dim; i++) sq += x[r * dim + i] * x[r * dim + i];
    const inv = 1 / Math.sqrt(sq / dim + eps);
    for (let i = 0; i < dim; i++) y[r * dim + i] = w[i] * (x[r * dim + i] * inv);
  }
  return y;
}

export async function prepareRmsNorm(
  gpu: GpuContext,
  io: { x: Tensor; weight: Tensor; y: Tensor },
  shape: RmsNormShape,
  options: RmsNormOptions,
): Promise<KernelDispatch> {
  const kernel = 'rms-norm';
  const { rows, dim } = shape;
  const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
  expectPositiveInt(kernel, 'rows', rows);
  expectPositiveInt(kernel, 'dim', dim);
  expectWorkgroupSize(gpu, kernel, wg);
  expectTensor(gpu, kernel, 'x', io.x, [rows, dim]);
  expectTensor(gpu, kernel, 'weight', io.weight, [dim]);
  expectTensor(gpu, kernel, 'y', io.y, [rows, dim]);
  return createDispatch(gpu, {
    label: kernel,
    code: [reduceSource, source].join('\n'),
    constants: { WG: wg },
    resources: [io.x, io.weight, io.y],
    params: packParams([
      ['u32', rows],
      ['u32', dim],
      ['f32', options.eps],
    ]),
    grid: linearGrid(gpu, kernel, rows),
    cost: { flops: 0, bytes: 4 * (2 * rows * dim + dim) },
  });
}
