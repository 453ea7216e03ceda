// In-place residual add: acc += x (the residual stream of a transformer layer).
//   acc: [n] f32 (any shape; read and written)   x: same shape

import source from '../../shaders/residual-add.wgsl?raw';
import type { GpuContext } from '../gpu/context';
import { numElements, type Tensor } from '../gpu/tensor';
import { DEFAULT_WORKGROUP_SIZE, expectPositiveInt, expectTensor, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';

/** Returns acc + x (a new array; the kernel updates acc in place). */
export function residualAddReference(acc: Float32Array, x: Float32Array): Float32Array {
  return Float32Array.from(acc, (a, i) => a + x[i]);
}

export async function prepareResidualAdd(
  gpu: GpuContext,
  io: { acc: Tensor; x: Tensor },
  options: { workgroupSize?: number } = {},
): Promise<KernelDispatch> {
  const kernel = 'residual-add';
  const n = numElements(io.acc.shape);
  const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
  expectPositiveInt(kernel, 'elements', n);
  expectWorkgroupSize(gpu, kernel, wg);
  expectTensor(gpu, kernel, 'acc', io.acc, io.acc.shape);
  expectTensor(gpu, kernel, 'x', io.x, io.acc.shape);
  return createDispatch(gpu, {
    label: kernel,
    code: source,
    constants: { WG: wg },
    resources: [io.acc, io.x],
    params: packParams([['u32', n]]),
    grid: linearGrid(gpu, kernel, Math.ceil(n / wg)),
    cost: { flops: 0, bytes: 12 * n },
  });
}
