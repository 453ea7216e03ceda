// Generation for ONE sequence, outside the engine's scheduler: chunked prefill with the image embeddings
// spliced in, then decode until a stop token or the token budget. For tests, parity harnesses and tools;
// the engine serves many requests through src/scheduler and the same LanguageModel.step.
// KV blocks are taken as the sequence grows and freed when the generator finishes, fails or is abandoned.
//
//   prompt:  [ text ... <fake> <row_1_col_1> <image> x N ... <fake> ... text ]
//   chunks:  |---- chunk 0 ----|---- chunk 1 ----|-- chunk 2 --|        (chunkSize tokens each)
//   splice:  the <image> rows falling in a chunk take the next rows of the image embeddings, in order

import { ContextLengthError, ImageTokenMismatchError, KvCacheFullError, NonFiniteLogitsError, RequestAbortedError } from '../errors';
import type { Tensor } from '../gpu/tensor';
import { NON_FINITE_TOKEN } from '../kernels/argmax';
import type { SamplingParams } from '../kernels/sample';
import type { KvManager } from '../kv/kv-manager';
import { flattenBatch, type BatchSeq } from './batch';
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
  /** [sum of placeholder lengths, hidden] rows in placeholder order (on the GPU or the host). Omit for text-only prompts. */
  mediaEmbeddings?: Tensor | Float32Array;
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

/** The media rows of tokens [c0, c1) as contiguous segments of `embeddings` (hidden floats per row). */
function mediaSegments(mediaRows: Int32Array, c0: number, c1: number, embeddings: Float32Array, hidden: number): BatchSeq['media'] {
  const out: Array<{ offset: number; data: Float32Array }> = [];
  for (let p = c0; p < c1; ) {
    if (mediaRows[p] < 0) {
      p++;
      continue;
    }
    let q = p + 1;
    while (q < c1 && mediaRows[q] === mediaRows[q - 1] + 1) q++;
    out.push({ offset: p - c0, data: embeddings.subarray(mediaRows[p] * hidden, (mediaRows[q - 1] + 1) * hidden) });
    p = q;
  }
  return out;
}

export async function* generate(
  lm: LanguageModel,
  kv: KvManager,
  seqId: number,
  req: GenerateRequest,
  timings?: GenerateTimings,
): AsyncGenerator<number, void, undefined> {
  const n = req.promptIds.length;
  const hidden = lm.config.text.hiddenSize;
  const contextWindow = Math.min(lm.config.text.maxPositions, lm.maxBlocksPerSeq * kv.blockSize);
  if (n + req.maxNewTokens > contextWindow) throw new ContextLengthError(n, req.maxNewTokens, contextWindow);
  const embeddings = req.mediaEmbeddings === undefined ? new Float32Array(0) : isTensor(req.mediaEmbeddings) ? await lm.gpu.readF32(req.mediaEmbeddings) : req.mediaEmbeddings;
  const mediaRows = mediaRowOf(n, req.placeholders, embeddings.length / hidden);
  const checkAbort = () => {
    if (req.signal?.aborted) throw new RequestAbortedError(req.signal.reason);
  };
  const run = async (tokens: Uint32Array, start: number, sample: SamplingParams | undefined, readLogits: boolean) => {
    if (!kv.allocate(seqId, start + tokens.length)) {
      throw new KvCacheFullError(kv.blocksNeeded(seqId, start + tokens.length), kv.pool.numFree, kv.blockSize);
    }
    const seq: BatchSeq = {
      tokenIds: tokens,
      start,
      slots: kv.slots(seqId, start, tokens.length),
      blockTable: kv.blockTable(seqId),
      sample,
      media: start < n ? mediaSegments(mediaRows, start, start + tokens.length, embeddings, hidden) : undefined,
    };
    const out = await lm.step(flattenBatch([seq], lm.maxBlocksPerSeq, hidden), { readLogits });
    return out;
  };
  const params = (step: number): SamplingParams => (req.sampling ? { ...req.sampling, step } : { temperature: 0, topK: 0, topP: 1, seed: 0, step });
  try {
    // Prefill, chunk by chunk.
    const t0 = performance.now();
    let next = 0;
    for (let c0 = 0; c0 < n; c0 += req.chunkSize) {
      checkAbort();
      const c1 = Math.min(n, c0 + req.chunkSize);
      const last = c1 === n;
      const out = await run(req.promptIds.subarray(c0, c1), c0, last ? params(0) : undefined, last && req.onFirstLogits !== undefined);
      if (last) {
        next = out.ids[0];
        if (out.logits) req.onFirstLogits?.(out.logits);
      }
      if (timings) timings.numPrefillChunks++;
    }
    if (timings) timings.prefillMs = performance.now() - t0;
    // Decode.
    for (let i = 0; i < req.maxNewTokens; i++) {
      if (next === NON_FINITE_TOKEN) throw new NonFiniteLogitsError(i);
      yield next;
      if (req.stopIds.has(next) || i + 1 === req.maxNewTokens) return;
      checkAbort();
      const s0 = performance.now();
      const out = await run(Uint32Array.of(next), n + i, params(i + 1), false);
      const s1 = performance.now();
      timings?.decodeStepMs.push(s1 - s0);
      timings?.decodeStepEnd?.push(s1);
      next = out.ids[0];
    }
  } finally {
    kv.free(seqId);
  }
}

function isTensor(x: Tensor | Float32Array): x is Tensor {
  return (x as Tensor).buffer !== undefined && (x as Tensor).shape !== undefined;
}
