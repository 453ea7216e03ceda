// The language model head's first dispatch (decode-head.wgsl): the head rows gathered from h, the final
// RMSNorm and the LM head's product in one; argmax and sampling follow as their own kernels.
//   x: [numRows, K] f32 (h: the step's rows)   ints: u32, the head rows at rowsOffset   consts: f32, the
//   norm's weight at lnOffset   W: [N, K] (the head, or one part of its rows)   y: [M, yColumns.stride] f32

import source from '../../shaders/decode-head.wgsl?raw';
import { UnsupportedShapeError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { expectPositiveInt, expectTensor, linearGrid } from './checks';
import { decodeGemvProgram, expectDecodeGemv, type DecodeGemvOptions } from './decode-gemv';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';
import { matmulCost, matmulReference } from './matmul';
import { rmsNormReference } from './rms-norm';
import type { Weight } from './weight-format';
import { weightBindings } from './weight-lib';

export interface DecodeHeadShape {
  /** Head rows. */
  M: number;
  /** Columns this dispatch writes (the head's rows, or one part's). */
  N: number;
  K: number;
  /** Rows of x the head rows index. */
  numRows: number;
}

/** The three kernels' references in turn (the gather, rms-norm, matmul); W as f32 values. */
export function decodeHeadReference(
  h: Float32Array,
  rows: Uint32Array,
  ln: Float32Array,
  w: Float32Array,
  shape: Pick<DecodeHeadShape, 'M' | 'N' | 'K'>,
  eps: number,
): Float32Array {
  const { M, N, K } = shape;
  const gathered = new Float32Array(M * K);
  rows.forEach((r, m) => {
    gathered.set(h.subarray(r * K, (r + 1) * K), m * K);
  });
  return matmulReference(rmsNormReference(gathered, ln, { rows: M, dim: K }, eps), w, undefined, { M, N, K });
}

export async function prepareDecodeHead(
  gpu: GpuContext,
  io: { x: Tensor; weight: Weight; consts: Tensor; ints: Tensor; y: Tensor },
  shape: DecodeHeadShape,
  offsets: { ln: number; rows: number },
  options: DecodeGemvOptions & { eps: number; yColumns?: { offset: number; stride: number } },
): Promise<KernelDispatch> {
  const kernel = 'decode-head';
  const { M, N, K, numRows } = shape;
  expectPositiveInt(kernel, 'numRows', numRows);
  expectDecodeGemv(gpu, kernel, io, { M, N, K });
  const yc = options.yColumns ?? { offset: 0, stride: N };
  if (!Number.isInteger(yc.offset) || yc.offset < 0 || yc.offset + N > yc.stride) {
    throw new UnsupportedShapeError(`${kernel}: columns [${yc.offset}, ${yc.offset + N}) do not fit rows of ${yc.stride}`);
  }
  expectTensor(gpu, kernel, 'x', io.x, [numRows, K]);
  expectTensor(gpu, kernel, 'y', io.y, [M, yc.stride]);
  const [wData, wScales] = weightBindings(io.weight);
  const d = await createDispatch(gpu, {
    ...decodeGemvProgram(gpu, kernel, source, io.weight, M, options),
    resources: [io.x, wData, wScales, io.consts, io.y, io.ints],
    params: packParams([
      ['u32', M],
      ['u32', N],
      ['u32', K],
      ['f32', options.eps],
      ['u32', offsets.ln],
      ['u32', offsets.rows],
      ['u32', yc.offset],
      ['u32', yc.stride],
    ]),
    grid: linearGrid(gpu, kernel, Math.ceil(N / 4)),
  });
  const cost = matmulCost({ x: io.x, weight: io.weight, y: io.y }, { M, N, K });
  d.cost = { flops: cost.flops, bytes: cost.bytes + 4 * K };
  return d;
}
