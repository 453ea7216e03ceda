// A request as the scheduler sees it: integers only (token ids, counts, media ranges and their states).
//
//   tokens:   [ prompt ............................................ | outputs ...... ]
//             0                                          promptLength              numTokens
//   computed: [ KV written ..................... numComputed )  next step computes from here
//   media:              [item 0: start, end)          [item 1 ...)
//
// State machine:
//   WAITING ──admit──► RUNNING ──stop/length──► FINISHED
//      ▲                  │
//      └──── PREEMPTED ◄──┘  (blocks freed; numComputed = 0; recomputed from the cache or from scratch)
// Any state ──abort/fail──► FINISHED.  ENCODING is a media item's state, not the request's: a request may
// run (prefill the text before an image) while its image encodes.

import { InternalError } from '../errors';
import type { BlockExtraKey, BlockHasher } from '../kv/block-hash';

export type RequestStatus = 'waiting' | 'running' | 'preempted' | 'finished';
export type FinishCause = 'stop' | 'length' | 'abort' | 'error';

/** pending: not asked for yet; encoding: asked, not back; ready: embeddings on the host. */
type MediaItemState = 'pending' | 'encoding' | 'ready';

export interface SchedMediaItem {
  /** Content key (the encoder cache key). */
  readonly key: string;
  /** First placeholder token (index into the prompt). */
  readonly start: number;
  /** One past the last placeholder token. */
  readonly end: number;
  /** Embeddings the encoder returns for it (the placeholder tokens it fills). */
  readonly numEmbeddings: number;
  /**
   * Embeddings encoding it computes, counted against the encoder budget: numEmbeddings, except for a video
   * pruned with EVS, whose frames are all encoded before the kept tokens are chosen.
   */
  readonly encodeCost: number;
  state: MediaItemState;
}

export interface SchedRequestInit {
  id: number;
  promptIds: Uint32Array;
  media?: ReadonlyArray<{ key: string; start: number; end: number; numEmbeddings: number; encodeCost?: number; ready?: boolean }>;
  maxTokens: number;
  stopIds?: ReadonlySet<number>;
}

export class SchedRequest {
  readonly id: number;
  readonly promptIds: Uint32Array;
  readonly media: SchedMediaItem[];
  readonly maxTokens: number;
  readonly stopIds: ReadonlySet<number>;
  readonly outputIds: number[] = [];
  status: RequestStatus = 'waiting';
  finishCause: FinishCause | undefined;
  /** Tokens whose KV is written (prefilled or fed back after sampling). */
  numComputed = 0;
  /** Prompt tokens taken from the prefix cache at the last admission. */
  numCachedTokens = 0;
  numPreemptions = 0;
  /** Hashes of the full blocks of the token sequence so far (grows as outputs fill blocks). */
  readonly blockHashes: string[] = [];

  constructor(init: SchedRequestInit) {
    this.id = init.id;
    this.promptIds = init.promptIds;
    this.maxTokens = init.maxTokens;
    this.stopIds = init.stopIds ?? new Set();
    this.media = (init.media ?? []).map((m) => ({
      key: m.key,
      start: m.start,
      end: m.end,
      numEmbeddings: m.numEmbeddings,
      encodeCost: m.encodeCost ?? m.numEmbeddings,
      state: m.ready ? 'ready' : 'pending',
    }));
    let last = 0;
    for (const m of this.media) {
      if (!(m.start >= last && m.end > m.start && m.end <= init.promptIds.length && m.numEmbeddings > 0)) {
        throw new InternalError(
          `request ${init.id}: media item [${m.start}, ${m.end}) is out of order or outside the prompt of ${init.promptIds.length}`,
        );
      }
      last = m.end;
    }
    if (init.promptIds.length < 1) throw new InternalError(`request ${init.id}: empty prompt`);
  }

  get promptLength(): number {
    return this.promptIds.length;
  }

  get numTokens(): number {
    return this.promptIds.length + this.outputIds.length;
  }

  tokenAt(i: number): number {
    return i < this.promptIds.length ? this.promptIds[i] : this.outputIds[i - this.promptIds.length];
  }

  /** Tokens [start, start + n) (prompt and outputs alike). */
  tokens(start: number, n: number): Uint32Array {
    const out = new Uint32Array(n);
    for (let i = 0; i < n; i++) out[i] = this.tokenAt(start + i);
    return out;
  }

  get isFinished(): boolean {
    return this.status === 'finished';
  }

  /** Hash every full block not hashed yet (call after outputs are appended). */
  extendBlockHashes(hasher: BlockHasher, blockSize: number): void {
    const full = Math.floor(this.numTokens / blockSize);
    for (let i = this.blockHashes.length; i < full; i++) {
      const start = i * blockSize;
      const parent = i > 0 ? this.blockHashes[i - 1] : undefined;
      this.blockHashes.push(hasher.hash(parent, this.tokens(start, blockSize), this.extraKeys(start, start + blockSize)));
    }
  }

  /** Media items overlapping tokens [start, end), as block extra keys. */
  extraKeys(start: number, end: number): BlockExtraKey[] {
    const out: BlockExtraKey[] = [];
    for (const m of this.media) if (m.start < end && m.end > start) out.push({ mediaKey: m.key, offset: m.start - start });
    return out;
  }
}
