// The paged KV cache on the GPU: for every decoder layer one K and one V buffer of
// [(numBlocks + 1) * blockSize slots, numKvHeads, headDim] f32. Which slots belong to which sequence is
// decided by src/kv/ (accounting only, over blocks 0..numBlocks-1); kernels find them through block
// tables. The one extra block (padBlock) is outside that accounting: the pad rows of a step padded up to
// its row bucket write and read there, so they can never touch a real sequence's KV.

import type { GpuContext } from '../gpu/context';
import { STORAGE_USAGE } from '../gpu/flags';
import type { Tensor } from '../gpu/tensor';
import type { TextConfig } from './config';

export class KvCacheBuffers {
  readonly k: Tensor[] = [];
  readonly v: Tensor[] = [];
  /** Slots in the buffers (pool blocks and the pad block). */
  readonly numSlots: number;
  /** Slots sequences can own (numBlocks * blockSize). */
  readonly numPoolSlots: number;
  /** The block pad rows use (index numBlocks). */
  readonly padBlock: number;
  readonly sizeBytes: number;

  constructor(
    private readonly gpu: GpuContext,
    config: TextConfig,
    readonly numBlocks: number,
    readonly blockSize: number,
  ) {
    this.padBlock = numBlocks;
    this.numPoolSlots = numBlocks * blockSize;
    this.numSlots = (numBlocks + 1) * blockSize;
    const shape = [this.numSlots, config.numKvHeads, config.headDim];
    const bytes = this.numSlots * config.numKvHeads * config.headDim * 4;
    for (let l = 0; l < config.numLayers; l++) {
      for (const [kind, list] of [['k', this.k], ['v', this.v]] as const) {
        const buffer = gpu.memory.createBuffer({ label: `kv-cache.${l}.${kind}`, size: bytes, usage: STORAGE_USAGE });
        list.push({ buffer, shape, dtype: 'f32', offsetBytes: 0, label: `kv-cache.${l}.${kind}` });
      }
    }
    this.sizeBytes = 2 * config.numLayers * bytes;
  }

  static bytesPerToken(config: TextConfig): number {
    return 2 * config.numLayers * config.numKvHeads * config.headDim * 4;
  }

  destroy(): void {
    for (const t of [...this.k, ...this.v]) this.gpu.memory.destroyBuffer(t.buffer);
  }
}
