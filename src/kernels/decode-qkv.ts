// A decoder layer's first dispatch on decode rows (decode-qkv.wgsl): RMSNorm, the fused q | k | v projection
// (+ bias), RoPE (plain or M-RoPE) and the KV-cache write in one.
//   x: [M, K] f32 (h)   W: [N, K], N = (numHeads + 2 numKvHeads) headDim   qkv: [M, N] f32 (written)
//   consts: f32, the cos | sin table ([maxPositions, headDim], rope.ts) at 0, ln1 at lnOff, the bias at biasOff
//   ints: u32, positions at posOff (3 rows of posStride with M-RoPE), slots at slotOff
//   kCache, vCache: [numSlots, numKvHeads, headDim] f32

import source from '../../shaders/decode-qkv.wgsl?raw';
import mropeAxisSource from '../../shaders/lib/mrope-axis.wgsl?raw';
import { UnsupportedShapeError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { expectTensor, linearGrid } from './checks';
import { decodeGemvProgram, expectDecodeGemv, type DecodeGemvOptions } from './decode-gemv';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';
import { kvWriteReference } from './kv-write';
import { matmulCost, matmulReference } from './matmul';
import { rmsNormReference } from './rms-norm';
import { mropeParams, ropeReference, type RopeShape } from './rope';
import type { Weight } from './weight-format';
import { weightBindings } from './weight-lib';

export interface DecodeQkvShape {
  M: number;
  /** Hidden size (h's width). */
  K: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  maxPositions: number;
  numSlots: number;
  mrope?: RopeShape['mrope'];
}

/** Where the kernel's small operands sit in the consts and ints buffers, in elements. */
export interface DecodeQkvOffsets {
  ln: number;
  /** Absent: no bias. */
  bias?: number;
  positions: number;
  /** Elements between the t, h and w rows of M-RoPE positions. */
  positionStride: number;
  slots: number;
}

export function qkvWidth(shape: Pick<DecodeQkvShape, 'numHeads' | 'numKvHeads' | 'headDim'>): number {
  return (shape.numHeads + 2 * shape.numKvHeads) * shape.headDim;
}

/**
 * The four kernels' references in turn (rms-norm, matmul, rope, kv-write): W as f32 values (dequantize
 * packed weights first), positions [M] or [3, M] with M-RoPE. Returns qkv and updated copies of the caches.
 */
export function decodeQkvReference(
  h: Float32Array,
  ln: Float32Array,
  w: Float32Array,
  bias: Float32Array | undefined,
  positions: Uint32Array,
  slots: Uint32Array,
  cosSin: Float32Array,
  caches: { k: Float32Array; v: Float32Array },
  shape: DecodeQkvShape,
  eps: number,
): { qkv: Float32Array; k: Float32Array; v: Float32Array } {
  const { M, K, numHeads, numKvHeads, headDim } = shape;
  const N = qkvWidth(shape);
  const x = rmsNormReference(h, ln, { rows: M, dim: K }, eps);
  const projected = matmulReference(x, w, bias, { M, N, K });
  const qkv = ropeReference(projected, positions, cosSin, {
    numTokens: M,
    numHeads: numHeads + 2 * numKvHeads,
    headDim,
    maxPositions: shape.maxPositions,
    rotaryHeads: numHeads + numKvHeads,
    mrope: shape.mrope,
  });
  const written = kvWriteReference(qkv, slots, caches.k, caches.v, {
    numTokens: M,
    numKvHeads,
    headDim,
    rowStride: N,
    kOffset: numHeads * headDim,
    vOffset: (numHeads + numKvHeads) * headDim,
    numSlots: shape.numSlots,
  });
  return { qkv, ...written };
}

export async function prepareDecodeQkv(
  gpu: GpuContext,
  io: { x: Tensor; weight: Weight; consts: Tensor; ints: Tensor; qkv: Tensor; kCache: Tensor; vCache: Tensor },
  shape: DecodeQkvShape,
  offsets: DecodeQkvOffsets,
  options: DecodeGemvOptions & { eps: number },
): Promise<KernelDispatch> {
  const kernel = 'decode-qkv';
  const { M, K, numHeads, numKvHeads, headDim } = shape;
  const N = qkvWidth(shape);
  expectDecodeGemv(gpu, kernel, io, { M, N, K });
  if (headDim % 4 !== 0) throw new UnsupportedShapeError(`${kernel}: headDim must be a multiple of 4, got ${headDim}`);
  expectTensor(gpu, kernel, 'x', io.x, [M, K]);
  expectTensor(gpu, kernel, 'qkv', io.qkv, [M, N]);
  expectTensor(gpu, kernel, 'kCache', io.kCache, [shape.numSlots, numKvHeads, headDim]);
  expectTensor(gpu, kernel, 'vCache', io.vCache, [shape.numSlots, numKvHeads, headDim]);
  const [mode, a, b] = mropeParams(shape);
  const program = decodeGemvProgram(gpu, kernel, `${mropeAxisSource}\n${source}`, io.weight, M, options);
  const [wData, wScales] = weightBindings(io.weight);
  const d = await createDispatch(gpu, {
    ...program,
    resources: [io.x, wData, wScales, io.consts, io.qkv, io.ints, io.kCache, io.vCache],
    params: packParams([
      ['u32', M],
      ['u32', K],
      ['f32', options.eps],
      ['u32', offsets.ln],
      ['u32', offsets.bias ?? 0],
      ['u32', offsets.bias === undefined ? 0 : 1],
      ['u32', numHeads],
      ['u32', numKvHeads],
      ['u32', headDim],
      ['u32', shape.maxPositions],
      ['u32', mode],
      ['u32', a],
      ['u32', b],
      ['u32', offsets.positions],
      ['u32', offsets.positionStride],
      ['u32', offsets.slots],
      ['u32', shape.numSlots],
    ]),
    grid: linearGrid(gpu, kernel, N / 4),
  });
  // The projection's traffic, plus the norm's weight and the rotated and cached values.
  const cost = matmulCost({ x: io.x, weight: io.weight, y: io.qkv }, { M, N, K });
  d.cost = { flops: cost.flops, bytes: cost.bytes + 4 * (K + 2 * M * numKvHeads * headDim) };
  return d;
}
