// Per-sequence block tables over a BlockPool (accounting only, vLLM KVCacheManager / nano-vllm style).
//
//   sequence 7, blockSize 4, 10 tokens:   block table [12, 3, 40]
//   token:   0 1 2 3 | 4 5 6 7 | 8 9 . .
//   slot:    48 ... 51 | 12 ... 15 | 160 161   (slot = block * blockSize + position % blockSize)
//
// appendSlots(seq, n) reserves slots for the next n tokens, allocating blocks as they fill; a sequence
// grows only at its end. free(seq) returns every block.

import { InternalError } from '../errors';
import { BlockPool } from './block-pool';

interface SequenceBlocks {
  blocks: number[];
  numTokens: number;
}

export interface KvStats {
  numBlocks: number;
  numFreeBlocks: number;
  blockSize: number;
  numSequences: number;
}

export class KvManager {
  private readonly sequences = new Map<number, SequenceBlocks>();

  constructor(readonly pool: BlockPool) {}

  get blockSize(): number {
    return this.pool.blockSize;
  }

  /** Blocks needed to hold `totalTokens` tokens. */
  blocksFor(totalTokens: number): number {
    return Math.ceil(totalTokens / this.pool.blockSize);
  }

  numTokens(seq: number): number {
    return this.sequences.get(seq)?.numTokens ?? 0;
  }

  /** New blocks appending `n` tokens to `seq` would take. */
  blocksNeeded(seq: number, n: number): number {
    const s = this.sequences.get(seq);
    const have = s?.blocks.length ?? 0;
    return Math.max(0, this.blocksFor((s?.numTokens ?? 0) + n) - have);
  }

  canAppend(seq: number, n: number): boolean {
    return this.pool.canAllocate(this.blocksNeeded(seq, n));
  }

  /** Reserve slots for the next `n` tokens of `seq` (creating it if new). Throws KvCacheFullError. */
  appendSlots(seq: number, n: number): Uint32Array {
    let s = this.sequences.get(seq);
    const newBlocks = this.pool.allocate(this.blocksNeeded(seq, n));
    if (!s) {
      s = { blocks: [], numTokens: 0 };
      this.sequences.set(seq, s);
    }
    s.blocks.push(...newBlocks);
    const slots = new Uint32Array(n);
    const bs = this.pool.blockSize;
    for (let i = 0; i < n; i++) {
      const pos = s.numTokens + i;
      slots[i] = s.blocks[Math.floor(pos / bs)] * bs + (pos % bs);
    }
    s.numTokens += n;
    return slots;
  }

  blockTable(seq: number): readonly number[] {
    const s = this.sequences.get(seq);
    if (!s) throw new InternalError(`KvManager: no sequence ${seq}`);
    return s.blocks;
  }

  /** Free every block of `seq`; returns how many. Freeing an unknown sequence frees nothing. */
  free(seq: number): number {
    const s = this.sequences.get(seq);
    if (!s) return 0;
    this.pool.free(s.blocks);
    this.sequences.delete(seq);
    return s.blocks.length;
  }

  stats(): KvStats {
    return {
      numBlocks: this.pool.numBlocks,
      numFreeBlocks: this.pool.numFree,
      blockSize: this.pool.blockSize,
      numSequences: this.sequences.size,
    };
  }
}
