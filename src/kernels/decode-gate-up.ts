// A decoder layer's MLP input on decode rows (decode-gate-up.wgsl): RMSNorm, the fused gate | up
// projection and SwiGLU in one.
//   x: [M, K] f32 (h)   W: [2 I, K], gate rows then up rows   consts: f32, ln2 at lnOffset   act: [M, I] f32

import source from '../../shaders/decode-gate-up.wgsl?raw';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { expectPositiveInt, expectTensor, linearGrid } from './checks';
import { decodeGemvProgram, expectDecodeGemv, type DecodeGemvOptions } from './decode-gemv';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';
import { matmulCost, matmulReference } from './matmul';
import { rmsNormReference } from './rms-norm';
import { swigluReference } from './swiglu';
import type { Weight } from './weight-format';
import { weightBindings } from './weight-lib';

export interface DecodeGateUpShape {
  M: number;
  /** Hidden size (h's width). */
  K: number;
  /** Intermediate size: act's width; W has twice as many rows. */
  I: number;
}

/** The three kernels' references in turn (rms-norm, matmul, swiglu); W as f32 values. */
export function decodeGateUpReference(
  h: Float32Array,
  ln: Float32Array,
  w: Float32Array,
  shape: DecodeGateUpShape,
  eps: number,
): Float32Array {
  const { M, K, I } = shape;
  const x = rmsNormReference(h, ln, { rows: M, dim: K }, eps);
  return swigluReference(matmulReference(x, w, undefined, { M, N: 2 * I, K }), { rows: M, dim: I });
}

export async function prepareDecodeGateUp(
  gpu: GpuContext,
  io: { x: Tensor; weight: Weight; consts: Tensor; act: Tensor },
  shape: DecodeGateUpShape,
  lnOffset: number,
  options: DecodeGemvOptions & { eps: number },
): Promise<KernelDispatch> {
  const kernel = 'decode-gate-up';
  const { M, K, I } = shape;
  expectPositiveInt(kernel, 'I', I);
  expectDecodeGemv(gpu, kernel, io, { M, N: 2 * I, K });
  expectTensor(gpu, kernel, 'x', io.x, [M, K]);
  expectTensor(gpu, kernel, 'act', io.act, [M, I]);
  const [wData, wScales] = weightBindings(io.weight);
  const d = await createDispatch(gpu, {
    ...decodeGemvProgram(gpu, kernel, source, io.weight, M, options),
    resources: [io.x, wData, wScales, io.consts, io.act],
    params: packParams([
      ['u32', M],
      ['u32', K],
      ['f32', options.eps],
      ['u32', lnOffset],
      ['u32', I],
    ]),
    grid: linearGrid(gpu, kernel, Math.ceil(I / 2)),
  });
  const cost = matmulCost({ x: io.x, weight: io.weight, y: io.act }, { M, N: 2 * I, K });
  d.cost = { flops: cost.flops, bytes: cost.bytes - 4 * M * I + 4 * K };
  return d;
}
