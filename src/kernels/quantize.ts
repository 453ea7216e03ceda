// Pack f32 weight rows into a storage format on the GPU (quantize.wgsl), at load time: a chunk of
// `rows` rows of W [N, K] goes to rows rowOffset .. rowOffset + rows of the packed target.
//   src: [rows, K] f32   dst.data / dst.scales: the target's tensors (weight-format.ts layouts)
// The host reference is quantizeReference() in weight-format.ts.

import source from '../../shaders/quantize.wgsl?raw';
import { UnsupportedShapeError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { DEFAULT_WORKGROUP_SIZE, expectPositiveInt, expectTensor, expectWeight, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';
import { packedLayout, packedSizeBytes, type PackedWeight } from './weight-format';

export interface QuantizeShape {
  /** Rows in this chunk. */
  rows: number;
  /** Row of the target the chunk's first row becomes. */
  rowOffset: number;
}

export async function prepareQuantize(
  gpu: GpuContext,
  io: { src: Tensor; dst: PackedWeight },
  shape: QuantizeShape,
  options: { workgroupSize?: number } = {},
): Promise<KernelDispatch> {
  const kernel = 'quantize';
  const { rows, rowOffset } = shape;
  const [N, K] = io.dst.shape;
  expectPositiveInt(kernel, 'rows', rows);
  if (!Number.isInteger(rowOffset) || rowOffset < 0 || rowOffset + rows > N) {
    throw new UnsupportedShapeError(`quantize: rows ${rowOffset}..${rowOffset + rows} do not fit a target of ${N} rows`);
  }
  if (K % 4 !== 0) throw new UnsupportedShapeError(`quantize: ${io.dst.format} rows need K % 4 == 0, got K = ${K}`);
  if (io.dst.format === 'bf16') {
    throw new UnsupportedShapeError(
      "quantize: bf16 weights hold a BF16 checkpoint's own values and are written as they are, never packed from f32",
    );
  }
  const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
  expectWorkgroupSize(gpu, kernel, wg);
  expectTensor(gpu, kernel, 'src', io.src, [rows, K]);
  expectWeight(gpu, kernel, 'dst', io.dst, [N, K]);
  const format = io.dst.format;
  const work = format === 'f16' ? rows * (K / 4) : rows * packedLayout(format, N, K).groupsPerRow;
  return createDispatch(gpu, {
    label: `${kernel}:${format}`,
    code: source,
    entryPoint: `main_${format}`,
    constants: { WG: wg },
    resources: [io.src, io.dst.data, io.dst.scales ?? null],
    params: packParams([
      ['u32', rows],
      ['u32', K],
      ['u32', rowOffset],
    ]),
    grid: linearGrid(gpu, kernel, Math.ceil(work / wg)),
    cost: { flops: 0, bytes: 4 * rows * K + packedSizeBytes(format, rows, K) },
  });
}
