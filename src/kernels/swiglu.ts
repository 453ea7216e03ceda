// SwiGLU: y = silu(gate) * up, gate and up side by side in each row of a fused gate_up projection.
//   x: [rows, 2 * dim] f32 (gate | up)   y: [rows, dim] f32

import activation from '../../shaders/lib/activation.wgsl?raw';
import source from '../../shaders/swiglu.wgsl?raw';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { silu } from './activations';
import { DEFAULT_WORKGROUP_SIZE, expectPositiveInt, expectTensor, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';

export interface SwigluShape {
  rows: number;
  /** Width of the output (the MLP's intermediate size); the input rows are twice as wide. */
  dim: number;
}

export function swigluReference(x: Float32Array, shape: SwigluShape): Float32Array {
  const { rows, dim } = shape;
  const y = new Float32Array(rows * dim);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < dim; c++) y[r * dim + c] = silu(x[r * 2 * dim + c]) * x[r * 2 * dim + dim + c];
  }
  return y;
}

export async function prepareSwiglu(
  gpu: GpuContext,
  io: { x: Tensor; y: Tensor },
  shape: SwigluShape,
  options: { workgroupSize?: number } = {},
): Promise<KernelDispatch> {
  const kernel = 'swiglu';
  const { rows, dim } = shape;
  const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
  expectPositiveInt(kernel, 'rows', rows);
  expectPositiveInt(kernel, 'dim', dim);
  expectWorkgroupSize(gpu, kernel, wg);
  expectTensor(gpu, kernel, 'x', io.x, [rows, 2 * dim]);
  expectTensor(gpu, kernel, 'y', io.y, [rows, dim]);
  return createDispatch(gpu, {
    label: kernel,
    code: `${activation}\n${source}`,
    constants: { WG: wg },
    resources: [io.x, io.y],
    params: packParams([
      ['u32', rows],
      ['u32', dim],
    ]),
    grid: linearGrid(gpu, kernel, Math.ceil((rows * dim) / wg)),
    cost: { flops: 0, bytes: 12 * rows * dim },
  });
}
