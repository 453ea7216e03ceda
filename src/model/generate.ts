// Generation for one sequence: chunked prefill with the image embeddings spliced in, then decode until a
// stop token or the token budget. KV blocks are reserved up front (counts before work) and freed when
// the generator finishes, fails or is abandoned.
//
//   prompt:  [ text ... <fake> <row_1_col_1> <image> x N ... <fake> ... text ]
//   chunks:  |---- chunk 0 ----|---- chunk 1 ----|-- chunk 2 --|        (chunkSize tokens each)
//   splice:  the <image> rows falling in a chunk take the next rows of the image embeddings, in order

import { ContextLengthError, ImageTokenMismatchError, RequestAbortedError } from '../errors';
import type { Tensor } from '../gpu/tensor';
import type { KvManager } from '../kv/kv-manager';
import type { SamplingParams } from '../kernels/sample';
import type { LanguageModel } from './language-model';

export interface Placeholder {
  /** First token index of the run in the prompt. */
  offset: number;
  /** Number of placeholder tokens. */
  length: number;
}

export interface GenerateRequest {
  promptIds: Uint32Array;
  placeholders: readonly Placeholder[];
  /** [sum of placeholder lengths, hidden] rows in placeholder order. Omit for text-only prompts. */
  mediaEmbeddings?: Tensor;
  maxNewTokens: number;
  stopIds: ReadonlySet<number>;
  /** undefined = greedy. `step` is filled in per token. */
  sampling?: Omit<SamplingParams, 'step'>;
  chunkSize: number;
  signal?: AbortSignal;
  /** Called with the logits of the first generated token (tests, debugging). */
  onFirstLogits?: (logits: Float32Array) => void;
}

export interface GenerateTimings {
  prefillMs: number;
  numPrefillChunks: number;
  /** Wall time of each decode step (submit to sampled id read back). */
  decodeStepMs: number[];
  /** performance.now() when each decode step finished (for inter-token latency under load). */
  decodeStepEnd?: number[];
}

/** Check the placeholder contract and return, for each prompt position, its media row (-1 if none). */
export function mediaRowOf(promptLength: number, placeholders: readonly Placeholder[], numMediaRows: number): Int32Array {
  const rows = new Int32Array(promptLength).fill(-1);
  let r = 0;
  for (const p of placeholders) {
    for (let i = 0; i < p.length; i++) rows[p.offset + i] = r++;
  }
  if (r !== numMediaRows) throw new ImageTokenMismatchError(r, numMediaRows);
  return rows;
}

export async function* generate(
  lm: LanguageModel,
  kv: KvManager,
  seqId: number,
  req: GenerateRequest,
  timings?: GenerateTimings,
): AsyncGenerator<number, void, undefined> {
  const n = req.promptIds.length;
  const contextWindow = Math.min(lm.config.text.maxPositions, lm.maxBlocksPerSeq * kv.blockSize);
  if (n + req.maxNewTokens > contextWindow) throw new ContextLengthError(n, req.maxNewTokens, contextWindow);
  const mediaRows = mediaRowOf(n, req.placeholders, req.mediaEmbeddings?.shape[0] ?? 0);
  // Reserve every slot this request can use before any work, so it cannot fail half way
  // (throws KvCacheFullError with the numbers, leaving the pool untouched).
  const reservedSlots = kv.appendSlots(seqId, n + req.maxNewTokens);
  const blockTable = new Uint32Array(lm.maxBlocksPerSeq);
  blockTable.set(kv.blockTable(seqId));
  const checkAbort = () => {
    if (req.signal?.aborted) throw new RequestAbortedError(req.signal.reason);
  };
  try {
    // Prefill, chunk by chunk.
    const t0 = performance.now();
    let next = 0;
    for (let c0 = 0; c0 < n; c0 += req.chunkSize) {
      checkAbort();
      const c1 = Math.min(n, c0 + req.chunkSize);
      const T = c1 - c0;
      const rows: number[] = [];
      let srcRowOffset = -1;
      for (let p = c0; p < c1; p++) {
        if (mediaRows[p] < 0) continue;
        if (srcRowOffset < 0) srcRowOffset = mediaRows[p];
        rows.push(p - c0);
      }
      const last = c1 === n;
      const out = await lm.step(
        {
          ids: req.promptIds.subarray(c0, c1),
          tokenSeq: new Uint32Array(T),
          positions: Uint32Array.from({ length: T }, (_, i) => c0 + i),
          slots: reservedSlots.subarray(c0, c1),
          blockTables: blockTable,
          numSeqs: 1,
          lastRows: last ? Uint32Array.of(T - 1) : undefined,
          splice: rows.length > 0 && req.mediaEmbeddings ? { src: req.mediaEmbeddings, srcRowOffset, rows: Uint32Array.from(rows) } : undefined,
          sampling: req.sampling ? { ...req.sampling, step: 0 } : undefined,
        },
        { readLogits: last && req.onFirstLogits !== undefined },
      );
      if (last) {
        next = out.ids![0];
        if (out.logits) req.onFirstLogits?.(out.logits);
      }
      if (timings) timings.numPrefillChunks++;
    }
    if (timings) timings.prefillMs = performance.now() - t0;
    // Decode.
    for (let i = 0; i < req.maxNewTokens; i++) {
      yield next;
      if (req.stopIds.has(next) || i + 1 === req.maxNewTokens) return;
      checkAbort();
      const pos = n + i;
      const s0 = performance.now();
      const out = await lm.step({
        ids: Uint32Array.of(next),
        tokenSeq: new Uint32Array(1),
        positions: Uint32Array.of(pos),
        slots: reservedSlots.subarray(pos, pos + 1),
        blockTables: blockTable,
        numSeqs: 1,
        lastRows: Uint32Array.of(0),
        sampling: req.sampling ? { ...req.sampling, step: i + 1 } : undefined,
      });
      const s1 = performance.now();
      timings?.decodeStepMs.push(s1 - s0);
      timings?.decodeStepEnd?.push(s1);
      next = out.ids![0];
    }
  } finally {
    kv.free(seqId);
  }
}
