// Full K/V blocks of sequences that have left the CPU backend, kept for prefix caching: the block pool
// (src/kv/block-pool.ts) keeps a finished sequence's hashed blocks on its free queue so that a later
// request with the same prefix starts on them; on the GPU their K/V stays in the paged cache, here each
// sequence's K/V goes with it (kv-rows.ts), so its hashed blocks are copied out first. A copy is valid while
// the pool says its block still holds the hash it was saved under; prune() drops the others (evicted,
// reused), so this holds at most what the pool holds.

import type { BlockPool } from '../../kv/block-pool';

interface Saved {
  hash: string;
  /** Per tensor (layer × key/value): [kv heads, block size, head_dim]. */
  data: Float32Array[];
}

export class CachedBlocks {
  private readonly saved = new Map<number, Saved>();

  constructor(private readonly pool: BlockPool) {}

  /** The block's K/V if saved and still valid. */
  get(block: number): Float32Array[] | undefined {
    const s = this.saved.get(block);
    return s && this.pool.hashOf(block) === s.hash ? s.data : undefined;
  }

  has(block: number): boolean {
    return this.get(block) !== undefined;
  }

  save(block: number, hash: string, data: Float32Array[]): void {
    this.saved.set(block, { hash, data });
  }

  /** Drop copies whose block no longer holds their hash. */
  prune(): void {
    for (const [b, s] of this.saved) if (b >= this.pool.numBlocks || this.pool.hashOf(b) !== s.hash) this.saved.delete(b);
  }

  get bytes(): number {
    let n = 0;
    for (const s of this.saved.values()) for (const d of s.data) n += d.byteLength;
    return n;
  }

  clear(): void {
    this.saved.clear();
  }
}
