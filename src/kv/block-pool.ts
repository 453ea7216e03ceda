// Accounting for the paged KV cache's fixed-size blocks: which block ids are free. It holds no GPU
// memory (the cache buffers live in src/model/kv-cache.ts); it only hands out and takes back ids.
// check/commit pairs: canAllocate() then allocate(); free() returns ids (nano-vllm BlockManager).

import { InternalError, KvCacheFullError } from '../errors';

export class BlockPool {
  /** Free block ids, used as a stack (most recently freed first: its cache lines may still be warm). */
  private readonly freeIds: number[];
  private readonly inUse: Uint8Array;

  constructor(
    readonly numBlocks: number,
    /** Tokens per block. */
    readonly blockSize: number,
  ) {
    if (!Number.isInteger(numBlocks) || numBlocks < 1) throw new InternalError(`BlockPool: numBlocks must be >= 1, got ${numBlocks}`);
    if (!Number.isInteger(blockSize) || blockSize < 1) throw new InternalError(`BlockPool: blockSize must be >= 1, got ${blockSize}`);
    this.freeIds = Array.from({ length: numBlocks }, (_, i) => numBlocks - 1 - i);
    this.inUse = new Uint8Array(numBlocks);
  }

  get numFree(): number {
    return this.freeIds.length;
  }

  canAllocate(numBlocks: number): boolean {
    return numBlocks <= this.freeIds.length;
  }

  allocate(numBlocks: number): number[] {
    if (!this.canAllocate(numBlocks)) throw new KvCacheFullError(numBlocks, this.freeIds.length, this.blockSize);
    const out: number[] = [];
    for (let i = 0; i < numBlocks; i++) {
      const id = this.freeIds.pop()!;
      this.inUse[id] = 1;
      out.push(id);
    }
    return out;
  }

  free(blocks: readonly number[]): void {
    for (const id of blocks) {
      if (id < 0 || id >= this.numBlocks || !this.inUse[id]) throw new InternalError(`BlockPool: block ${id} freed but not in use`);
      this.inUse[id] = 0;
      this.freeIds.push(id);
    }
  }
}
