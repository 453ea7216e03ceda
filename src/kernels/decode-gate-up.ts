// A decoder layer's MLP input on decode rows (decode-gate-up.wgsl): the residual add of the attention's
// output projection (its parts by groups of heads, decode-attention-out.ts), RMSNorm, the fused gate | up
// projection and SwiGLU in one.
//   x: [M, K] f32 (h)   part: [M, parts, K] f32   hOut: [M, K] f32, h + the parts (written)
//   W: [2 I, K], gate rows then up rows   consts: f32, ln2 at lnOffset   act: [M, I] f32

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
  /** Parts of the attention's output projection added to h first. */
  parts: number;
}

/** h + the parts, then the three kernels' references in turn (rms-norm, matmul, swiglu); W as f32 values. */
export function decodeGateUpReference(
  h: Float32Array,
  part: Float32Array,
  ln: Float32Array,
  w: Float32Array,
  shape: DecodeGateUpShape,
  eps: number,
): { act: Float32Array; h: Float32Array } {
  const { M, K, I, parts } = shape;
  const summed = Float32Array.from(h);
  for (let m = 0; m < M; m++) {
    for (let g = 0; g < parts; g++) for (let k = 0; k < K; k++) summed[m * K + k] += part[(m * parts + g) * K + k];
  }
  const x = rmsNormReference(summed, ln, { rows: M, dim: K }, eps);
  return { act: swigluReference(matmulReference(x, w, undefined, { M, N: 2 * I, K }), { rows: M, dim: I }), h: summed };
}

export async function prepareDecodeGateUp(
  gpu: GpuContext,
  io: { x: Tensor; part: Tensor; hOut: Tensor; weight: Weight; consts: Tensor; act: Tensor },
  shape: DecodeGateUpShape,
  lnOffset: number,
  options: DecodeGemvOptions & { eps: number },
): Promise<KernelDispatch> {
  const kernel = 'decode-gate-up';
  const { M, K, I, parts } = shape;
  expectPositiveInt(kernel, 'I', I);
  expectPositiveInt(kernel, 'parts', parts);
  expectTensor(gpu, kernel, 'part', io.part, [M, parts, K]);
  expectTensor(gpu, kernel, 'hOut', io.hOut, [M, K]);
  expectDecodeGemv(gpu, kernel, io, { M, N: 2 * I, K });
  expectTensor(gpu, kernel, 'x', io.x, [M, K]);
  expectTensor(gpu, kernel, 'act', io.act, [M, I]);
  const [wData, wScales] = weightBindings(io.weight);
  const d = await createDispatch(gpu, {
    ...decodeGemvProgram(gpu, kernel, source, io.weight, M, options),
    resources: [io.x, wData, wScales, io.consts, io.act, io.part, io.hOut],
    params: packParams([
      ['u32', M],
      ['u32', K],
      ['f32', options.eps],
      ['u32', lnOffset],
      ['u32', I],
      ['u32', parts],
    ]),
    grid: linearGrid(gpu, kernel, Math.ceil(I / 2)),
  });
  const cost = matmulCost({ x: io.x, weight: io.weight, y: io.act }, { M, N: 2 * I, K });
  d.cost = { flops: cost.flops, bytes: cost.bytes - 4 * M * I + 4 * K + 4 * M * K * (parts + 1) };
  return d;
}
