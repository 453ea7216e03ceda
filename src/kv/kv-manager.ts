// Per-sequence block tables over a BlockPool, with prefix caching (vLLM `KVCacheManager`, accounting only).
//
//   sequence 7, blockSize 4, 10 tokens:   block table [12, 3, 40]
//   token:   0 1 2 3 | 4 5 6 7 | 8 9 . .
//   slot:    48 ... 51 | 12 ... 15 | 160 161   (slot = block * blockSize + position % blockSize)
//
// A sequence's blocks are taken as it grows (allocate() before each step that adds tokens), never all up
// front. A new sequence first looks up the longest run of its full-block hashes that the pool still holds
// (cachedPrefix), takes references to those blocks (shared with other sequences or taken back from the
// free queue) and computes only the rest:
//
//   prompt blocks:   [h0][h1][h2][h3][h4]..     pool holds h0, h1, h2 (h3 evicted)
//   cached prefix:    b7  b2  b9                 -> 12 tokens already computed; prefill starts at token 12
//
// The last prompt token is never taken from the cache, so every sequence computes at least one token and
// gets logits for its next one. After each step, commitFullBlocks() registers the hashes of the blocks
// that became full, so later sequences can share them; free() gives a sequence's blocks back tail-first.

import { InternalError } from '../errors';
import type { BlockPool, BlockPoolStats } from './block-pool';

interface SequenceBlocks {
  blocks: number[];
  /** Leading blocks whose hash is registered in the pool (or that came from it). */
  numHashed: number;
}

export interface KvStats extends BlockPoolStats {
  blockSize: number;
  numSequences: number;
}

export class KvManager {
  private readonly sequences = new Map<number, SequenceBlocks>();

  constructor(readonly pool: BlockPool) {}

  get blockSize(): number {
    return this.pool.blockSize;
  }

  /** Blocks needed to hold `numTokens` tokens. */
  blocksFor(numTokens: number): number {
    return Math.ceil(numTokens / this.pool.blockSize);
  }

  has(seq: number): boolean {
    return this.sequences.has(seq);
  }

  /**
   * The cached blocks a new sequence can start from: the longest prefix of `blockHashes` the pool holds,
   * capped so that at least one of `numTokens` tokens is left to compute. Takes no reference.
   */
  cachedPrefix(blockHashes: readonly string[], numTokens: number): number[] {
    const maxBlocks = Math.min(blockHashes.length, Math.floor((numTokens - 1) / this.blockSize));
    const out: number[] = [];
    for (let i = 0; i < maxBlocks; i++) {
      const b = this.pool.lookup(blockHashes[i]);
      if (b === undefined) break;
      out.push(b);
    }
    return out;
  }

  /** Free blocks `allocate()` would need: new blocks, plus cached prefix blocks that sit on the free queue. */
  blocksNeeded(seq: number, numTotalTokens: number, prefix: readonly number[] = []): number {
    const s = this.sequences.get(seq);
    if (s) return Math.max(0, this.blocksFor(numTotalTokens) - s.blocks.length);
    const reclaimed = prefix.reduce((a, b) => a + (this.pool.refCountOf(b) === 0 ? 1 : 0), 0);
    return reclaimed + Math.max(0, this.blocksFor(numTotalTokens) - prefix.length);
  }

  canAllocate(seq: number, numTotalTokens: number, prefix: readonly number[] = []): boolean {
    return this.pool.canAllocate(this.blocksNeeded(seq, numTotalTokens, prefix));
  }

  /**
   * Make `seq` hold blocks for its first `numTotalTokens` tokens. A new sequence starts from `prefix`
   * (from cachedPrefix(); referenced here). Returns false, changing nothing, when the pool is short.
   */
  allocate(seq: number, numTotalTokens: number, prefix: readonly number[] = []): boolean {
    if (!this.canAllocate(seq, numTotalTokens, prefix)) return false;
    let s = this.sequences.get(seq);
    if (!s) {
      this.pool.touch(prefix);
      s = { blocks: [...prefix], numHashed: prefix.length };
      this.sequences.set(seq, s);
    } else if (prefix.length > 0) {
      throw new InternalError(`KvManager: sequence ${seq} already has blocks; a cached prefix applies only to a new sequence`);
    }
    const more = this.blocksFor(numTotalTokens) - s.blocks.length;
    if (more > 0) s.blocks.push(...this.pool.allocate(more));
    return true;
  }

  /** Register the hashes of `seq`'s blocks that are full (given the hashes of its full blocks so far). */
  commitFullBlocks(seq: number, blockHashes: readonly string[], numComputedTokens: number): void {
    const s = this.sequences.get(seq);
    if (!s) throw new InternalError(`KvManager: no sequence ${seq}`);
    const full = Math.min(Math.floor(numComputedTokens / this.blockSize), blockHashes.length, s.blocks.length);
    for (let i = s.numHashed; i < full; i++) this.pool.cacheBlock(s.blocks[i], blockHashes[i]);
    s.numHashed = Math.max(s.numHashed, full);
  }

  /** KV slots of tokens [start, start + n) of `seq`. */
  slots(seq: number, start: number, n: number, out = new Uint32Array(n)): Uint32Array {
    const s = this.sequences.get(seq);
    if (!s) throw new InternalError(`KvManager: no sequence ${seq}`);
    const bs = this.blockSize;
    if (this.blocksFor(start + n) > s.blocks.length) {
      throw new InternalError(`KvManager: sequence ${seq} holds ${s.blocks.length} blocks, not enough for tokens up to ${start + n}`);
    }
    for (let i = 0; i < n; i++) {
      const pos = start + i;
      out[i] = s.blocks[Math.floor(pos / bs)] * bs + (pos % bs);
    }
    return out;
  }

  blockTable(seq: number): readonly number[] {
    const s = this.sequences.get(seq);
    if (!s) throw new InternalError(`KvManager: no sequence ${seq}`);
    return s.blocks;
  }

  /** Give back every block of `seq` (tail first); returns how many. An unknown sequence frees nothing. */
  free(seq: number): number {
    const s = this.sequences.get(seq);
    if (!s) return 0;
    this.pool.free([...s.blocks].reverse());
    this.sequences.delete(seq);
    return s.blocks.length;
  }

  stats(): KvStats {
    return { ...this.pool.stats(), blockSize: this.pool.blockSize, numSequences: this.sequences.size };
  }
}
