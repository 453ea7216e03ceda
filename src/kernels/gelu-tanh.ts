// GELU with the tanh approximation, elementwise (SigLIP's MLP activation).
//   x: [n] f32 (any shape, flattened)   y: same shape

import activation from '../../shaders/lib/activation.wgsl?raw';
import source from '../../shaders/gelu-tanh.wgsl?raw';
import type { GpuContext } from '../gpu/context';
import { numElements, type Tensor } from '../gpu/tensor';
import { geluTanh } from './activations';
import { DEFAULT_WORKGROUP_SIZE, expectPositiveInt, expectTensor, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';

export function geluTanhReference(x: Float32Array): Float32Array {
  return Float32Array.from(x, geluTanh);
}

export async function prepareGeluTanh(
  gpu: GpuContext,
  io: { x: Tensor; y: Tensor },
  options: { workgroupSize?: number } = {},
): Promise<KernelDispatch> {
  const kernel = 'gelu-tanh';
  const n = numElements(io.x.shape);
  const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
  expectPositiveInt(kernel, 'elements', n);
  expectWorkgroupSize(gpu, kernel, wg);
  expectTensor(gpu, kernel, 'x', io.x, io.x.shape);
  expectTensor(gpu, kernel, 'y', io.y, io.x.shape);
  return createDispatch(gpu, {
    label: kernel,
    code: `${activation}\n${source}`,
    constants: { WG: wg },
    resources: [io.x, io.y],
    params: packParams([['u32', n]]),
    grid: linearGrid(gpu, kernel, Math.ceil(n / wg)),
    cost: { flops: 0, bytes: 8 * n },
  });
}
