// The language model's GPU buffers, sized once (C = maxTokensPerStep rows, S = maxSeqs sequences) so that
// a step creates none: the step's u32 inputs as views of one buffer (`ints`), the RoPE table and the
// layers' norms and biases as views of another (`consts`; the fused decode kernels bind each whole and
// find a view by its offset), and the activations each kernel reads and writes.

import { InternalError } from '../../errors';
import type { GpuContext } from '../../gpu/context';
import type { Tensor } from '../../gpu/tensor';
import { pagedAttentionPartialShape } from '../../kernels/paged-attention';
import { ropeCosSinTable } from '../../kernels/rope-tables';
import { ROW_PARAMS_BYTES } from '../../kernels/sample';
import type { TextConfig } from '../config';
import type { ModelWeights } from '../weights';
import { PackedTensors } from './packed-tensors';

export class DecoderTensors {
  /** The step's u32 inputs (ids, positions, slots, block tables, head rows, ...), views of one buffer. */
  readonly ints: PackedTensors;
  /** The RoPE table and the layers' norms and biases, for the fused decode kernels. */
  readonly consts: PackedTensors;
  private readonly t = new Map<string, Tensor>();

  constructor(
    private readonly gpu: GpuContext,
    weights: ModelWeights,
    c: TextConfig,
    size: { rows: number; seqs: number; maxBlocksPerSeq: number },
  ) {
    const C = size.rows;
    const S = size.seqs;
    const H = c.hiddenSize;
    // The step's u32 inputs in one buffer (the fused decode kernels bind it once); the block tables have
    // one more row, the pad sequence's.
    this.ints = new PackedTensors(gpu, 'lm.ints', 'u32', [
      ['ids', [C]],
      ['tokenSeq', [C]],
      ['positions', [C]],
      ...(c.mrope ? [['ropePositions', [3 * C]] as const] : []),
      ['slots', [C]],
      ['spliceRows', [C]],
      ['blockTables', [S + 1, size.maxBlocksPerSeq]],
      ['headRows', [S]],
      ['rowParams', [S, ROW_PARAMS_BYTES / 4]],
    ]);
    this.consts = packConsts(gpu, weights, c);
    this.make('staged', [C, H]);
    if (c.deepstackLayers) this.make('deepstack', [c.deepstackLayers * C, H]);
    this.make('h', [C, H]);
    this.make('x', [C, H]);
    this.make('qkv', [C, (c.numHeads + 2 * c.numKvHeads) * c.headDim]);
    this.make('attn', [C, c.numHeads * c.headDim]);
    // Paged attention's split plan leaves partial results here; every layer's attention reuses it.
    this.make('attnPartial', pagedAttentionPartialShape(C, c.numHeads, c.headDim));
    this.make('gu', [C, 2 * c.intermediateSize]);
    this.make('act', [C, c.intermediateSize]);
    this.make('hl', [S, H]);
    this.make('xl', [S, H]);
    this.make('logits', [S, c.vocabSize]);
  }

  /** A buffer of its own, released with the others. */
  make(name: string, shape: number[]): void {
    if (this.t.has(name)) throw new InternalError(`lm.${name} made twice`);
    this.t.set(name, this.gpu.createTensor(shape, 'f32', `lm.${name}`));
  }

  /** A tensor whole: an activation, a view of `ints`, or the RoPE table. */
  get(name: string): Tensor {
    if (this.ints.has(name)) return this.ints.get(name);
    if (name === 'rope') return this.consts.get('rope');
    const t = this.t.get(name);
    if (!t) throw new InternalError(`the language model has no tensor '${name}'`);
    return t;
  }

  /** A tensor's first `rows` rows, as a view with that shape. */
  rows(name: string, rows: number): Tensor {
    const t = this.get(name);
    return { ...t, shape: [rows, ...t.shape.slice(1)] };
  }

  /** The M-RoPE positions of a T-row step, [3, T] (rows t, h, w): the first 3T values of the buffer. */
  ropePositions(T: number): Tensor {
    if (!this.ints.has('ropePositions')) throw new InternalError('ropePositions asked of a decoder without M-RoPE');
    return { ...this.ints.get('ropePositions'), shape: [3, T] };
  }

  destroy(): void {
    for (const t of this.t.values()) this.gpu.release(t);
    this.t.clear();
    this.gpu.release(this.ints.whole);
    this.gpu.release(this.consts.whole);
  }
}

/**
 * The RoPE cos | sin table, then every layer's norms (and q|k|v bias) and the final norm, copied into one
 * buffer on the GPU: the fused decode kernels read them by offset (the table's view is rope.wgsl's).
 */
function packConsts(gpu: GpuContext, weights: ModelWeights, c: TextConfig): PackedTensors {
  const H = c.hiddenSize;
  const copies: Array<[name: string, from: Tensor]> = [];
  for (let l = 0; l < c.numLayers; l++) {
    const w = (name: string) => weights.get(`text.layers.${l}.${name}`);
    copies.push([`ln1.${l}`, w('ln1')], [`ln2.${l}`, w('ln2')]);
    if (c.qkvBias) copies.push([`qkv_b.${l}`, w('qkv_b')]);
  }
  copies.push(['norm', weights.get('text.norm')]);
  const consts = new PackedTensors(gpu, 'lm.consts', 'f32', [
    ['rope', [c.maxPositions, c.headDim]],
    ...copies.map(([name, from]) => [name, from.shape] as const),
  ]);
  gpu.write(consts.get('rope'), ropeCosSinTable(c.ropeTheta, c.headDim, c.maxPositions));
  const encoder = gpu.device.createCommandEncoder({ label: 'lm.consts' });
  for (const [name, from] of copies) {
    const to = consts.get(name);
    if (from.shape.length !== 1 || (from.shape[0] !== H && !name.startsWith('qkv_b'))) {
      throw new InternalError(`${name}: expected an f32 vector of ${H}, got [${from.shape.join(', ')}] ${from.dtype}`);
    }
    encoder.copyBufferToBuffer(from.buffer, from.offsetBytes, to.buffer, to.offsetBytes, from.shape[0] * 4);
  }
  gpu.device.queue.submit([encoder.finish()]);
  return consts;
}
