// LayerNorm over the last dimension (torch.nn.LayerNorm, biased variance).
//   x: [rows, dim] f32   weight, bias: [dim] f32   y: [rows, dim] f32
// Two plans, chosen per kernel variant like the matmuls:
//   workgroup  layer-norm.wgsl: one workgroup per row, reductions through workgroup memory (GPUs, and
//              few rows, where one invocation per row would leave the device idle)
//   rows       layer-norm-rows.wgsl: one invocation per row, vec4 along the row, no barrier (CPU adapters,
//              at least ROWS_PLAN_MIN_ROWS rows, dim % 4 == 0 and 16-byte aligned bindings)

import rowsSource from '../../shaders/layer-norm-rows.wgsl?raw';
import source from '../../shaders/layer-norm.wgsl?raw';
import reduceSource from '../../shaders/lib/workgroup-reduce.wgsl?raw';
import { InternalError } from '../errors';
import type { KernelVariant } from '../gpu/adapter-info';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { DEFAULT_WORKGROUP_SIZE, expectPositiveInt, expectTensor, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';

export interface LayerNormShape {
  rows: number;
  dim: number;
}

export type LayerNormPlan = 'workgroup' | 'rows';

export interface LayerNormOptions {
  eps: number;
  workgroupSize?: number;
  /** Force a plan (tests, benchmarks); default: chooseLayerNormPlan. */
  plan?: LayerNormPlan;
  /** Kernel variant to choose for (default: the device's). */
  variant?: KernelVariant;
}

/** Rows from which the register variant runs one invocation per row. */
export const ROWS_PLAN_MIN_ROWS = 64;

export function chooseLayerNormPlan(
  gpu: GpuContext,
  io: { x: Tensor; weight: Tensor; bias: Tensor; y: Tensor },
  shape: LayerNormShape,
  options: Pick<LayerNormOptions, 'plan' | 'variant'> = {},
): LayerNormPlan {
  const aligned = shape.dim % 4 === 0 && [io.x, io.weight, io.bias, io.y].every((t) => t.offsetBytes % 16 === 0);
  if (options.plan) {
    if (options.plan === 'rows' && !aligned)
      throw new InternalError(`layer-norm: the rows plan needs dim % 4 == 0 and 16-byte aligned bindings (dim ${shape.dim})`);
    return options.plan;
  }
  const variant = options.variant ?? gpu.kernelVariant;
  return variant === 'register' && aligned && shape.rows >= ROWS_PLAN_MIN_ROWS ? 'rows' : 'workgroup';
}

export function layerNormReference(x: Float32Array, w: Float32Array, b: Float32Array, shape: LayerNormShape, eps: number): Float32Array {
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
  const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
  expectPositiveInt(kernel, 'rows', rows);
  expectPositiveInt(kernel, 'dim', dim);
  expectWorkgroupSize(gpu, kernel, wg);
  expectTensor(gpu, kernel, 'x', io.x, [rows, dim]);
  expectTensor(gpu, kernel, 'weight', io.weight, [dim]);
  expectTensor(gpu, kernel, 'bias', io.bias, [dim]);
  expectTensor(gpu, kernel, 'y', io.y, [rows, dim]);
  const rowsPlan = chooseLayerNormPlan(gpu, io, shape, options) === 'rows';
  return createDispatch(gpu, {
    label: rowsPlan ? `${kernel}:rows` : kernel,
    code: rowsPlan ? rowsSource : [reduceSource, source].join('\n'),
    constants: { WG: wg },
    resources: [io.x, io.weight, io.bias, io.y],
    params: packParams([
      ['u32', rows],
      ['u32', rowsPlan ? dim / 4 : dim],
      ['f32', options.eps],
    ]),
    grid: linearGrid(gpu, kernel, rowsPlan ? Math.ceil(rows / wg) : rows),
    cost: { flops: 0, bytes: 4 * (2 * rows * dim + 2 * dim) },
  });
}
