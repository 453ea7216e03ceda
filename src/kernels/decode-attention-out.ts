// A decoder layer's attention and output projection on decode rows, in one dispatch (decode-attention-out.wgsl):
// each (row, kv head, group of query heads) attends over all the row's keys and multiplies its heads' output
// by their columns of Wo; decode-gate-up.wgsl adds the groups' parts to the residual.
//   qkv: [numTokens, rowStride] f32   ints: u32, tokenSeq / tokenPos / block tables at element offsets
//   kCache, vCache: [numSlots, numKvHeads, headDim] f32   Wo: [H, numHeads headDim]
//   part: [numTokens, groups, H] f32, groups = numKvHeads * groupsPerKvHead (decodeAttentionGroups)

import source from '../../shaders/decode-attention-out.wgsl?raw';
import attendKeysSource from '../../shaders/lib/attend-keys-workgroup.wgsl?raw';
import onlineSoftmax from '../../shaders/lib/online-softmax.wgsl?raw';
import { UnsupportedShapeError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { checkHeadDim } from './attention-head';
import {
  DEFAULT_WORKGROUP_SIZE,
  expectBindable,
  expectPositiveInt,
  expectTensor,
  expectWeight,
  expectWorkgroupSize,
  linearGrid,
} from './checks';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';
import { matmulReference } from './matmul';
import { groupHeads, pagedAttentionReference, type PagedAttentionShape } from './paged-attention';
import { isPacked, packedSizeBytes, weightFormatOf, type Weight } from './weight-format';
import { assembleWgsl, weightBindings, weightLib } from './weight-lib';

export interface DecodeAttentionOutShape extends PagedAttentionShape {
  /** Output width (the hidden size): Wo's rows. */
  H: number;
}

/** Where the rows' sequences, positions and block tables sit in the ints buffer, in elements. */
export interface DecodeAttentionOffsets {
  tokenSeq: number;
  tokenPos: number;
  blockTables: number;
}

/** The groups of query heads a row's attention is cut into: one workgroup, and one part of the output, each. */
export function decodeAttentionGroups(numHeads: number, numKvHeads: number): number {
  return numHeads / groupHeads(numHeads, numKvHeads);
}

/**
 * paged-attention's reference, then each group's heads times their columns of Wo (W as f32 values):
 * [numTokens, groups, H].
 */
export function decodeAttentionOutReference(
  qkv: Float32Array,
  tokenSeq: Uint32Array,
  tokenPos: Uint32Array,
  blockTables: Uint32Array,
  kCache: Float32Array,
  vCache: Float32Array,
  wo: Float32Array,
  shape: DecodeAttentionOutShape,
): Float32Array {
  const { numTokens, numHeads, numKvHeads, headDim: D, H } = shape;
  const a = pagedAttentionReference(qkv, tokenSeq, tokenPos, blockTables, kCache, vCache, shape);
  const K = numHeads * D;
  const groups = decodeAttentionGroups(numHeads, numKvHeads);
  const width = K / groups;
  const out = new Float32Array(numTokens * groups * H);
  for (let t = 0; t < numTokens; t++) {
    for (let g = 0; g < groups; g++) {
      const x = a.subarray(t * K + g * width, t * K + (g + 1) * width);
      const w = new Float32Array(H * width);
      for (let n = 0; n < H; n++) w.set(wo.subarray(n * K + g * width, n * K + (g + 1) * width), n * width);
      out.set(matmulReference(x, w, undefined, { M: 1, N: H, K: width }), (t * groups + g) * H);
    }
  }
  return out;
}

export async function prepareDecodeAttentionOut(
  gpu: GpuContext,
  io: { qkv: Tensor; ints: Tensor; kCache: Tensor; vCache: Tensor; weight: Weight; part: Tensor },
  shape: DecodeAttentionOutShape,
  offsets: DecodeAttentionOffsets,
  options: { workgroupSize?: number } = {},
): Promise<KernelDispatch> {
  const kernel = 'decode-attention-out';
  const { numTokens, numHeads, numKvHeads, headDim, rowStride, maxBlocksPerSeq, blockSize, numSlots, H } = shape;
  for (const [name, value] of Object.entries(shape)) expectPositiveInt(kernel, name, value);
  checkHeadDim(kernel, headDim);
  if (numHeads % numKvHeads !== 0) {
    throw new UnsupportedShapeError(`${kernel}: ${numHeads} query heads are not a multiple of ${numKvHeads} kv heads`);
  }
  if (rowStride % 4 !== 0 || H % 4 !== 0)
    throw new UnsupportedShapeError(`${kernel}: the qkv row stride ${rowStride} and H ${H} must be multiples of 4`);
  const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
  expectWorkgroupSize(gpu, kernel, wg);
  const group = groupHeads(numHeads, numKvHeads);
  const groups = numHeads / group;
  expectTensor(gpu, kernel, 'qkv', io.qkv, [numTokens, rowStride]);
  expectBindable(gpu, kernel, 'ints', io.ints);
  expectTensor(gpu, kernel, 'kCache', io.kCache, [numSlots, numKvHeads, headDim]);
  expectTensor(gpu, kernel, 'vCache', io.vCache, [numSlots, numKvHeads, headDim]);
  expectWeight(gpu, kernel, 'weight', io.weight, [H, numHeads * headDim]);
  const weightOffset = isPacked(io.weight) ? io.weight.data.offsetBytes : io.weight.offsetBytes;
  if (weightOffset % 16 !== 0)
    throw new UnsupportedShapeError(`${kernel}: reads Wo as vec4 and needs it at a 16-byte offset, got ${weightOffset}`);
  expectTensor(gpu, kernel, 'part', io.part, [numTokens, groups, H]);
  const format = weightFormatOf(io.weight);
  const lib = weightLib(format, { f16Math: isPacked(io.weight) && io.weight.f16Math === true });
  const [wData, wScales] = weightBindings(io.weight);
  const d = await createDispatch(gpu, {
    label: `${kernel}:${format}[D=${headDim},G=${group}]`,
    code: assembleWgsl(
      lib.enables,
      `const HEAD_VEC4: u32 = ${headDim / 4}u;`,
      `const GROUP: u32 = ${group}u;`,
      `const KEYS: u32 = ${wg}u;`,
      `const OUTS: u32 = ${Math.ceil((group * headDim) / 4 / wg)}u;`,
      lib.source,
      onlineSoftmax,
      attendKeysSource,
      source,
    ),
    resources: [io.qkv, wData, wScales, io.ints, io.kCache, io.vCache, io.part],
    params: packParams([
      ['u32', numTokens],
      ['u32', numHeads],
      ['u32', numKvHeads],
      ['u32', rowStride],
      ['u32', maxBlocksPerSeq],
      ['u32', blockSize],
      ['f32', 1 / Math.sqrt(headDim)],
      ['u32', numHeads / numKvHeads / group],
      ['u32', offsets.tokenSeq],
      ['u32', offsets.tokenPos],
      ['u32', offsets.blockTables],
      ['u32', H],
    ]),
    grid: linearGrid(gpu, kernel, numTokens * groups),
  });
  // Wo read once; the keys and values each step reaches are not known here (profiles count them per step).
  d.cost = {
    flops: 2 * numTokens * H * numHeads * headDim,
    bytes: packedSizeBytes(format, H, numHeads * headDim) + 4 * numTokens * groups * H,
  };
  return d;
}
