// Row argmax, first index on ties (torch.argmax). One workgroup per row: greedy sampling's last step.
// A row with a NaN or an infinity gives NON_FINITE_TOKEN.
//   x: [rows, cols] f32   out: [rows] u32

import source from '../../shaders/argmax.wgsl?raw';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { DEFAULT_WORKGROUP_SIZE, expectPositiveInt, expectTensor, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';

import type { ArgmaxShape } from './argmax-reference';

export { argmaxReference, NON_FINITE_TOKEN, type ArgmaxShape } from './argmax-reference';

export async function prepareArgmax(
  gpu: GpuContext,
  io: { x: Tensor; out: Tensor },
  shape: ArgmaxShape,
  options: { workgroupSize?: number } = {},
): Promise<KernelDispatch> {
  const kernel = 'argmax';
  const { rows, cols } = shape;
  const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
  expectPositiveInt(kernel, 'rows', rows);
  expectPositiveInt(kernel, 'cols', cols);
  expectWorkgroupSize(gpu, kernel, wg);
  expectTensor(gpu, kernel, 'x', io.x, [rows, cols]);
  expectTensor(gpu, kernel, 'out', io.out, [rows], 'u32');
  return createDispatch(gpu, {
    label: kernel,
    code: source,
    constants: { WG: wg },
    resources: [io.x, io.out],
    params: packParams([
      ['u32', rows],
      ['u32', cols],
    ]),
    grid: linearGrid(gpu, kernel, rows),
    cost: { flops: 0, bytes: 4 * rows * (cols + 1) },
  });
}
