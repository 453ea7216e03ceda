// Generation for ONE sequence, outside the engine's scheduler: chunked prefill with the image embeddings
// spliced in, then decode until a stop token or the token budget. For tests, parity harnesses and tools;
// the engine serves many requests through src/scheduler and the same ModelRunner.run.
// KV blocks are taken as the sequence grows and freed when the generator finishes, fails or is abandoned.
//
//   prompt:  [ text ... <fake> <row_1_col_1> <image> x N ... <fake> ... text ]
//   chunks:  |---- chunk 0 ----|---- chunk 1 ----|-- chunk 2 --|        (chunkSize tokens each)
//   splice:  the <image> rows falling in a chunk take the next rows of the image embeddings, in order

import { ContextLengthError, ImageTokenMismatchError, KvCacheFullError, NonFiniteLogitsError, RequestAbortedError } from '../errors';
import type { MediaRows, ModelRunner, SamplingParams } from './runner/model-runner';

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
  mediaEmbeddings?: Float32Array;
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
function mediaSegments(mediaRows: Int32Array, c0: number, c1: number, embeddings: Float32Array, hidden: number): MediaRows[] {
  const out: MediaRows[] = [];
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
  runner: ModelRunner,
  seqId: number,
  req: GenerateRequest,
  timings?: GenerateTimings,
): AsyncGenerator<number, void, undefined> {
  const n = req.promptIds.length;
  const { kv } = runner;
  const hidden = runner.text.hiddenSize;
  const { contextWindow, modelPositions, kvCacheTokens } = runner.limits;
  if (n + req.maxNewTokens > contextWindow)
    throw new ContextLengthError(n, req.maxNewTokens, contextWindow, { modelPositions, kvCacheTokens });
  const embeddings = req.mediaEmbeddings ?? new Float32Array(0);
  const mediaRows = mediaRowOf(n, req.placeholders, embeddings.length / hidden);
  const checkAbort = () => {
    if (req.signal?.aborted) throw new RequestAbortedError(req.signal.reason);
  };
  const run = async (tokens: Uint32Array, start: number, sample: SamplingParams | undefined, readLogits: boolean) => {
    if (!kv.allocate(seqId, start + tokens.length)) {
      throw new KvCacheFullError(kv.blocksNeeded(seqId, start + tokens.length), kv.pool.numFree, kv.blockSize);
    }
    const media = start < n ? mediaSegments(mediaRows, start, start + tokens.length, embeddings, hidden) : undefined;
    return runner.run([{ seqId, tokenIds: tokens, start, sample, media }], { readLogits });
  };
  const params = (step: number): SamplingParams =>
    req.sampling ? { ...req.sampling, step } : { temperature: 0, topK: 0, topP: 1, seed: 0, step };
  try {
    // Prefill, chunk by chunk.
    const t0 = performance.now();
    let next: number | null = 0;
    for (let c0 = 0; c0 < n; c0 += req.chunkSize) {
      checkAbort();
      const c1 = Math.min(n, c0 + req.chunkSize);
      const last = c1 === n;
      const out = await run(req.promptIds.subarray(c0, c1), c0, last ? params(0) : undefined, last && req.onFirstLogits !== undefined);
      if (last) {
        next = out.tokens[0];
        if (out.logits) req.onFirstLogits?.(out.logits);
      }
      if (timings) timings.numPrefillChunks++;
    }
    if (timings) timings.prefillMs = performance.now() - t0;
    // Decode.
    for (let i = 0; i < req.maxNewTokens; i++) {
      if (next === null) throw new NonFiniteLogitsError(i);
      yield next;
      if (req.stopIds.has(next) || i + 1 === req.maxNewTokens) return;
      checkAbort();
      const s0 = performance.now();
      const out = await run(Uint32Array.of(next), n + i, params(i + 1), false);
      const s1 = performance.now();
      timings?.decodeStepMs.push(s1 - s0);
      timings?.decodeStepEnd?.push(s1);
      next = out.tokens[0];
    }
  } finally {
    kv.free(seqId);
  }
}
