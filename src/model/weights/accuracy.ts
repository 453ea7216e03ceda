// How close a model loaded in a smaller dtype stays to the same model in f32: the figures issue 8 asks
// for, used by the tests (tiny checkpoints) and bench:model (the SmolVLM-256M shape).
//
//   first-step logits  the logits at the last prompt position (what the first generated token is drawn
//                      from): max |f32 - dtype| and KL(softmax(f32) || softmax(dtype))
//   top-1 agreement    over N teacher-forced positions: both models read the SAME token sequence, and at
//                      each position we count whether their argmax (the greedy next token) agrees
//
// Teacher forcing runs the sequence through the language model in prefill chunks, reading the logits of
// every position of a chunk at once: each row of a chunk is a head row (headRows = 0..T-1, greedy), all
// rows read one sequence's block table (copied into T table rows, one per head row), so one step returns
// T rows of logits.

import { InternalError, KvCacheFullError } from '../../errors';
import type { Tensor } from '../../gpu/tensor';
import type { SamplingParams } from '../../kernels/sample';
import type { Placeholder } from '../generate';
import { mediaRowOf } from '../generate';
import type { LoadedModel } from '../load';

export interface TeacherForcedInput {
  ids: Uint32Array;
  /** Image embeddings spliced at placeholder positions (as in generate()). */
  media?: { embeddings: Tensor; placeholders: readonly Placeholder[] };
  /** Positions whose logits to return: the last `numPositions` (default all). */
  numPositions?: number;
}

const GREEDY: SamplingParams = { temperature: 0, topK: 0, topP: 1, seed: 0, step: 0 };

/** Logits [vocab] at each of the last numPositions positions of `ids`, in order. */
export async function teacherForcedLogits(model: LoadedModel, input: TeacherForcedInput): Promise<Float32Array[]> {
  const { lm, kv } = model;
  const n = input.ids.length;
  const vocab = lm.config.text.vocabSize;
  const hidden = lm.config.text.hiddenSize;
  const want = input.numPositions ?? n;
  const chunk = Math.min(lm.options.maxTokensPerStep, lm.options.maxSeqs);
  if (chunk < 1 || want > n) throw new InternalError(`teacherForcedLogits: ${want} positions of ${n} in chunks of ${chunk}`);
  const embeddings = input.media ? await lm.gpu.readF32(input.media.embeddings) : new Float32Array(0);
  const mediaRows = mediaRowOf(n, input.media?.placeholders ?? [], embeddings.length / hidden);
  const seq = 0x7fffffff; // a sequence id no request uses
  if (!kv.allocate(seq, n)) throw new KvCacheFullError(kv.blocksNeeded(seq, n), kv.pool.numFree, kv.blockSize);
  const out: Float32Array[] = [];
  try {
    const slots = kv.slots(seq, 0, n);
    const table = Uint32Array.from(kv.blockTable(seq));
    for (let c0 = 0; c0 < n; c0 += chunk) {
      const c1 = Math.min(n, c0 + chunk);
      const T = c1 - c0;
      const rows: number[] = [];
      const data = new Float32Array(T * hidden);
      for (let p = c0; p < c1; p++) {
        if (mediaRows[p] < 0) continue;
        data.set(embeddings.subarray(mediaRows[p] * hidden, (mediaRows[p] + 1) * hidden), rows.length * hidden);
        rows.push(p - c0);
      }
      // Chunks before the wanted positions only fill the KV cache (no LM head).
      const wanted = c1 > n - want;
      // One head row per step sequence: every row reads the same block table (tokenSeq 0), and each of
      // the T table rows is a copy of it, so all T rows can give logits.
      const S = wanted ? T : 1;
      const blockTables = new Uint32Array(S * lm.maxBlocksPerSeq);
      for (let i = 0; i < S; i++) blockTables.set(table, i * lm.maxBlocksPerSeq);
      const r = await lm.step(
        {
          ids: input.ids.subarray(c0, c1),
          tokenSeq: new Uint32Array(T),
          positions: Uint32Array.from({ length: T }, (_, i) => c0 + i),
          slots: slots.subarray(c0, c1),
          blockTables,
          numSeqs: S,
          headRows: wanted ? Uint32Array.from({ length: T }, (_, i) => i) : new Uint32Array(0),
          sampling: wanted ? Array.from({ length: T }, () => GREEDY) : [],
          splice: rows.length > 0 ? { rows: Uint32Array.from(rows), data: data.subarray(0, rows.length * hidden) } : undefined,
        },
        { readLogits: wanted },
      );
      if (!wanted) continue;
      for (let i = 0; i < T; i++) if (c0 + i >= n - want) out.push(r.logits!.slice(i * vocab, (i + 1) * vocab));
    }
  } finally {
    kv.free(seq);
  }
  return out;
}

/** log(sum(exp(x))) in float64. */
function logSumExp(x: Float32Array): number {
  let m = -Infinity;
  for (const v of x) m = Math.max(m, v);
  let s = 0;
  for (const v of x) s += Math.exp(v - m);
  return m + Math.log(s);
}

/** KL(softmax(p) || softmax(q)) in nats, float64. */
export function klDivergence(p: Float32Array, q: Float32Array): number {
  const lp = logSumExp(p);
  const lq = logSumExp(q);
  let kl = 0;
  for (let i = 0; i < p.length; i++) {
    const a = p[i] - lp;
    kl += Math.exp(a) * (a - (q[i] - lq));
  }
  return Math.max(0, kl);
}

/** Top-1 lead (nats) from which a position counts as decisive. */
export const DECISIVE_MARGIN = 0.1;

function top2(x: Float32Array): { best: number; margin: number } {
  let best = 0;
  let second = -Infinity;
  for (let i = 1; i < x.length; i++) {
    if (x[i] > x[best]) {
      second = x[best];
      best = i;
    } else if (x[i] > second) second = x[i];
  }
  return { best, margin: x[best] - second };
}

export interface LogitsAgreement {
  positions: number;
  /** Fraction of positions whose argmax agrees. */
  top1Agreement: number;
  /**
   * The same over the positions where f32's top-1 logit leads its second by at least DECISIVE_MARGIN
   * (random-weight checkpoints have many near-ties that any rounding flips; see the issue 8 report).
   */
  decisivePositions: number;
  top1AgreementDecisive: number;
  meanKl: number;
  maxKl: number;
  /** At the first generation step (the last prompt position). */
  firstStepMaxAbsErr: number;
  firstStepKl: number;
}

/** Compare a dtype's logits rows with f32's; `firstStep` is the row index of the last prompt position. */
export function compareLogits(ref: readonly Float32Array[], got: readonly Float32Array[], firstStep: number): LogitsAgreement {
  if (ref.length !== got.length || ref.length === 0) throw new InternalError(`compareLogits: ${ref.length} vs ${got.length} rows`);
  let agree = 0;
  let decisive = 0;
  let agreeDecisive = 0;
  let klSum = 0;
  let maxKl = 0;
  for (let i = 0; i < ref.length; i++) {
    const r = top2(ref[i]);
    const same = r.best === top2(got[i]).best;
    if (same) agree++;
    if (r.margin >= DECISIVE_MARGIN) {
      decisive++;
      if (same) agreeDecisive++;
    }
    const kl = klDivergence(ref[i], got[i]);
    klSum += kl;
    maxKl = Math.max(maxKl, kl);
  }
  let maxAbs = 0;
  for (let k = 0; k < ref[firstStep].length; k++) maxAbs = Math.max(maxAbs, Math.abs(ref[firstStep][k] - got[firstStep][k]));
  return {
    positions: ref.length,
    top1Agreement: agree / ref.length,
    decisivePositions: decisive,
    top1AgreementDecisive: decisive > 0 ? agreeDecisive / decisive : 1,
    meanKl: klSum / ref.length,
    maxKl,
    firstStepMaxAbsErr: maxAbs,
    firstStepKl: klDivergence(ref[firstStep], got[firstStep]),
  };
}
