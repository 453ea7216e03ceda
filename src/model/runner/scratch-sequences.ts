// Sequences a runner runs for itself (the warm-up, profiles): ids no request owns (requests count up from 1,
// these down from -1), their KV blocks taken for `numTokens` and freed after, whatever happens.

import { KvCacheFullError } from '../../errors';
import type { KvManager } from '../../kv/kv-manager';

export class ScratchSequences {
  private next = -1;

  /** `onFree`: what the backend releases with a scratch sequence besides its blocks (the CPU backend's K/V). */
  constructor(
    private readonly kv: KvManager,
    private readonly onFree: (seqId: number) => void = () => {},
  ) {}

  /** ModelRunner.withScratchSequence: throws KvCacheFullError when the blocks do not fit. */
  async with<T>(numTokens: number, use: (seqId: number) => Promise<T>): Promise<T> {
    const { kv } = this;
    const id = this.next--;
    if (!kv.allocate(id, numTokens)) throw new KvCacheFullError(kv.blocksNeeded(id, numTokens), kv.pool.numFree, kv.blockSize);
    try {
      return await use(id);
    } finally {
      kv.free(id);
      this.onFree(id);
    }
  }
}
