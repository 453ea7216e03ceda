// LayerNorm over the last dimension (torch.nn.LayerNorm, biased variance). One workgroup per row.
//   x: [rows, dim] f32   weight, bias: [dim] f32   y: [rows, dim] f32

import source from '../../shaders/layer-norm.wgsl?raw';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { expectPositiveInt, expectTensor, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';

export interface LayerNormShape {
  rows: number;
  dim: number;
}

export interface LayerNormOptions {
  eps: number;
  workgroupSize?: number;
}

export function layerNormReference(
  x: Float32Array,
  w: Float32Array,
  b: Float32Array,
  shape: LayerNormShape,
  eps: number,
): Float32Array {
  const { rows, dim } = shape;
  const y = new Float32Array(rows * dim);
  for (let r = 0; r < rows; r++) {
    const o = r * dim;
    let s = 0;
    for (let i = 0; i < dim; i++) s += x[o + i];
    const mean = s / dim;
    let sq = 0;
    for (let i = 0; i < dim; i++) sq += (x[o + i] - mean) ** 2;
    const inv = 1 / Math.sqrt(sq / dim + eps);
    for (let i = 0; i < dim; i++) y[o + i] = (x[o + i] - mean) * inv * w[i] + b[i];
  }
  return y;
}

export async function prepareLayerNorm(
  gpu: GpuContext,
  io: { x: Tensor; weight: Tensor; bias: Tensor; y: Tensor },
  shape: LayerNormShape,
  options: LayerNormOptions,
): Promise<KernelDispatch> {
  const kernel = 'layer-norm';
  const { rows, dim } = shape;
  const wg = options.workgroupSize ?? 64;
  expectPositiveInt(kernel, 'rows', rows);
  expectPositiveInt(kernel, 'dim', dim);
  expectWorkgroupSize(gpu, kernel, wg);
  expectTensor(gpu, kernel, 'x', io.x, [rows, dim]);
  expectTensor(gpu, kernel, 'weight', io.weight, [dim]);
  expectTensor(gpu, kernel, 'bias', io.bias, [dim]);
  expectTensor(gpu, kernel, 'y', io.y, [rows, dim]);
  return createDispatch(gpu, {
    label: kernel,
    code: source,
    constants: { WG: wg },
    resources: [io.x, io.weight, io.bias, io.y],
    params: packParams([
      ['u32', rows],
      ['u32', dim],
      ['f32', options.eps],
    ]),
    grid: linearGrid(gpu, kernel, rows),
    cost: { flops: 0, bytes: 4 * (2 * rows * dim + 2 * dim) },
  });
}
