// Token embedding lookup: out[t, :] = table[ids[t], :]. Bad ids give zero rows and are counted in
// `errors` ([0] = how many, [1] = the largest), which the host reads to raise a named error.
//   ids: [numTokens] u32   table: [vocab, dim] f32 or packed (f16/q8/q4, dequantized per element)
//   out: [numTokens, dim] f32   errors: [2] u32

import source from '../../shaders/embedding-gather.wgsl?raw';
import { UnsupportedShapeError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { DEFAULT_WORKGROUP_SIZE, expectPositiveInt, expectTensor, expectWeight, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';
import { packedSizeBytes, weightFormatOf, type Weight } from './weight-format';
import { assembleWgsl, weightBindings, weightLib } from './weight-lib';

export interface EmbeddingGatherShape {
  numTokens: number;
  /** Rows of this table. */
  vocab: number;
  dim: number;
  /**
   * A part of a table split by rows (src/model/weights/row-split.ts): this table is rows [first, first +
   * vocab) of `total`, and the gather writes only the tokens whose ids fall there (the last part also
   * the zero rows of ids >= total). Default: the whole table (first 0, total = vocab).
   */
  part?: { first: number; total: number };
}

/** The reference gathers from an f32 table (dequantize a packed one first). */
export function embeddingGatherReference(ids: Uint32Array, table: Float32Array, shape: EmbeddingGatherShape): Float32Array {
  const { numTokens, vocab, dim } = shape;
  const out = new Float32Array(numTokens * dim);
  for (let t = 0; t < numTokens; t++) {
    if (ids[t] >= vocab) continue;
    out.set(table.subarray(ids[t] * dim, ids[t] * dim + dim), t * dim);
  }
  return out;
}

export async function prepareEmbeddingGather(
  gpu: GpuContext,
  io: { ids: Tensor; table: Weight; out: Tensor; errors: Tensor },
  shape: EmbeddingGatherShape,
  options: { workgroupSize?: number } = {},
): Promise<KernelDispatch> {
  const kernel = 'embedding-gather';
  const { numTokens, vocab, dim } = shape;
  const { first, total } = shape.part ?? { first: 0, total: vocab };
  const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
  expectPositiveInt(kernel, 'numTokens', numTokens);
  expectPositiveInt(kernel, 'vocab', vocab);
  expectPositiveInt(kernel, 'dim', dim);
  if (!Number.isInteger(first) || first < 0 || first + vocab > total) {
    throw new UnsupportedShapeError(`${kernel}: rows [${first}, ${first + vocab}) are not a part of a table of ${total} rows`);
  }
  expectWorkgroupSize(gpu, kernel, wg);
  expectTensor(gpu, kernel, 'ids', io.ids, [numTokens], 'u32');
  expectWeight(gpu, kernel, 'table', io.table, [vocab, dim]);
  expectTensor(gpu, kernel, 'out', io.out, [numTokens, dim]);
  expectTensor(gpu, kernel, 'errors', io.errors, [2], 'u32');
  const format = weightFormatOf(io.table);
  const lib = weightLib(format, { scalarF32: true });
  return createDispatch(gpu, {
    label: `${kernel}:${format}`,
    code: assembleWgsl(lib.enables, lib.source, source),
    constants: { WG: wg },
    resources: [io.ids, ...weightBindings(io.table), io.out, io.errors],
    params: packParams([
      ['u32', numTokens],
      ['u32', vocab],
      ['u32', dim],
      ['u32', first],
      ['u32', total],
    ]),
    grid: linearGrid(gpu, kernel, Math.ceil((numTokens * dim) / wg)),
    // ids, one table row per token in its stored format, the f32 rows written.
    cost: { flops: 0, bytes: 4 * numTokens * (1 + dim) + packedSizeBytes(format, numTokens, dim) },
  });
}
