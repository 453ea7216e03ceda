// Plain vec4 buffer copy: the memory-bandwidth roofline on this adapter (bench:kernels reports it).
//   x: [n] f32 (n % 4 == 0)   y: [n] f32

import source from '../../shaders/copy.wgsl?raw';
import { UnsupportedShapeError } from '../errors';
import type { GpuContext } from '../gpu/context';
import { numElements, type Tensor } from '../gpu/tensor';
import { DEFAULT_WORKGROUP_SIZE, expectTensor, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';

export function copyReference(x: Float32Array): Float32Array {
  return Float32Array.from(x);
}

export async function prepareCopy(
  gpu: GpuContext,
  io: { x: Tensor; y: Tensor },
  options: { workgroupSize?: number } = {},
): Promise<KernelDispatch> {
  const kernel = 'copy';
  const n = numElements(io.x.shape);
  if (n % 4 !== 0 || n === 0) throw new UnsupportedShapeError(`copy: element count ${n} must be a positive multiple of 4`);
  const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
  expectWorkgroupSize(gpu, kernel, wg);
  expectTensor(gpu, kernel, 'x', io.x, io.x.shape);
  expectTensor(gpu, kernel, 'y', io.y, io.x.shape);
  return createDispatch(gpu, {
    label: kernel,
    code: source,
    constants: { WG: wg },
    resources: [io.x, io.y],
    params: packParams([['u32', n / 4]]),
    grid: linearGrid(gpu, kernel, Math.ceil(n / 4 / wg)),
    cost: { flops: 0, bytes: 8 * n },
  });
}
