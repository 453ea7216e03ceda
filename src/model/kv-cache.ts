// The paged KV cache on the GPU: for every decoder layer one K and one V buffer of
// [(numBlocks + 1) * blockSize slots, numKvHeads, headDim] f32. Which slots belong to which sequence is
// decided by src/kv/ (accounting only, over blocks 0..numBlocks-1); kernels find them through block
// tables. The one extra block (padBlock, always the last) is outside that accounting: the pad rows of a
// step padded up to its row bucket write and read there, so they can never touch a real sequence's KV.
//
// The buffers grow with the block pool (src/kv/block-pool.ts grows on demand, up to maxBlocks): grow()
// copies the blocks in use into larger buffers, layer by layer, so at most one layer's old K or V is held
// beside the new ones. Block ids keep their slots; only the pad block moves to the new end.

import { InternalError } from '../errors';
import type { GpuContext } from '../gpu/context';
import { STORAGE_USAGE } from '../gpu/flags';
import type { Tensor } from '../gpu/tensor';
import type { TextConfig } from './config';

export class KvCacheBuffers {
  readonly k: Tensor[] = [];
  readonly v: Tensor[] = [];
  private numBlocks_: number;

  constructor(
    private readonly gpu: GpuContext,
    private readonly config: TextConfig,
    numBlocks: number,
    readonly blockSize: number,
    /** Most blocks grow() may reach (the block pool's maxBlocks). */
    readonly maxBlocks = numBlocks,
  ) {
    if (maxBlocks < numBlocks) throw new InternalError(`KvCacheBuffers: maxBlocks ${maxBlocks} < numBlocks ${numBlocks}`);
    this.numBlocks_ = numBlocks;
    for (let l = 0; l < config.numLayers; l++) {
      for (const [kind, list] of [
        ['k', this.k],
        ['v', this.v],
      ] as const)
        list.push(this.create(l, kind, numBlocks));
    }
  }

  /** Pool blocks the buffers hold now (plus the pad block). */
  get numBlocks(): number {
    return this.numBlocks_;
  }

  /** Slots in the buffers (pool blocks and the pad block). */
  get numSlots(): number {
    return (this.numBlocks_ + 1) * this.blockSize;
  }

  /** Slots sequences can own at most (maxBlocks * blockSize). */
  get maxPoolSlots(): number {
    return this.maxBlocks * this.blockSize;
  }

  /** The block pad rows use (the last one, index numBlocks). */
  get padBlock(): number {
    return this.numBlocks_;
  }

  get sizeBytes(): number {
    return 2 * this.config.numLayers * this.numSlots * KvCacheBuffers.bytesPerSlot(this.config);
  }

  static bytesPerSlot(config: TextConfig): number {
    return config.numKvHeads * config.headDim * 4;
  }

  static bytesPerToken(config: TextConfig): number {
    return 2 * config.numLayers * KvCacheBuffers.bytesPerSlot(config);
  }

  /**
   * Hold `numBlocks` pool blocks: new buffers per layer with blocks 0..old numBlocks - 1 copied over (the
   * pad block's content is scratch and is not). Work already submitted that reads the old buffers finishes
   * first (queue order); plans built over the old buffers must be rebuilt.
   */
  grow(numBlocks: number): void {
    if (numBlocks <= this.numBlocks_) return;
    if (numBlocks > this.maxBlocks)
      throw new InternalError(`KvCacheBuffers: grow to ${numBlocks} blocks, more than maxBlocks ${this.maxBlocks}`);
    const usedBytes = this.numBlocks_ * this.blockSize * KvCacheBuffers.bytesPerSlot(this.config);
    for (let l = 0; l < this.config.numLayers; l++) {
      for (const [kind, list] of [
        ['k', this.k],
        ['v', this.v],
      ] as const) {
        const old = list[l];
        const next = this.create(l, kind, numBlocks);
        const encoder = this.gpu.device.createCommandEncoder({ label: 'kv-cache.grow' });
        encoder.copyBufferToBuffer(old.buffer, 0, next.buffer, 0, usedBytes);
        this.gpu.device.queue.submit([encoder.finish()]);
        // Released once the copy (and any step before it) is done: destroy() waits for submitted work.
        this.gpu.memory.destroyBuffer(old.buffer);
        list[l] = next;
      }
    }
    this.numBlocks_ = numBlocks;
  }

  private create(layer: number, kind: 'k' | 'v', numBlocks: number): Tensor {
    const numSlots = (numBlocks + 1) * this.blockSize;
    const label = `kv-cache.${layer}.${kind}`;
    const buffer = this.gpu.memory.createBuffer({ label, size: numSlots * KvCacheBuffers.bytesPerSlot(this.config), usage: STORAGE_USAGE });
    return { buffer, shape: [numSlots, this.config.numKvHeads, this.config.headDim], dtype: 'f32', offsetBytes: 0, label };
  }

  destroy(): void {
    for (const t of [...this.k, ...this.v]) this.gpu.memory.destroyBuffer(t.buffer);
  }
}
