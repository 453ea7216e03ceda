// How close a model loaded in a smaller dtype stays to the same model in f32: the figures the dtype
// option is judged by, used by the tests (tiny checkpoints) and bench:model (the SmolVLM-256M shape).
//
//   first-step logits  the logits at the last prompt position (what the first generated token is drawn
//                      from): max |f32 - dtype| and KL(softmax(f32) || softmax(dtype))
//   top-1 agreement    over N teacher-forced positions: both models read the SAME token sequence, and at
//                      each position we count whether their argmax (the greedy next token) agrees
//
// Teacher forcing runs the sequence through the model runner in prefill chunks, reading the logits of
// every position of a chunk at once: a chunk whose logits are wanted goes in as T one-token sequences that
// share one scratch sequence's blocks (positions c0..c0+T-1, each sampling greedily), so one step returns
// T rows of logits, each attending causally to the rows before it as one sequence's chunk would.

import { InternalError } from '../../errors';
import type { Tensor } from '../../gpu/tensor';
import type { MediaRows, RunnerSeq, SamplingParams } from '../runner/model-runner';
import type { Placeholder } from '../generate';
import { mediaRowOf } from '../generate';
import type { LoadedModel } from '../load';

export interface TeacherForcedInput {
  ids: Uint32Array;
  /**
   * Media embeddings spliced at placeholder positions (as in generate()): on the GPU or the host, with a
   * Qwen3-VL image's DeepStack levels (each [rows, hidden], the rows in the same order).
   */
  media?: { embeddings: Tensor | Float32Array; placeholders: readonly Placeholder[]; deepstack?: readonly Float32Array[] };
  /** [3, ids.length] M-RoPE positions (rows t, h, w) for a decoder with M-RoPE; absent: each token's index. */
  ropePositions?: Uint32Array;
  /** Positions whose logits to return: the last `numPositions` (default all). */
  numPositions?: number;
}

const GREEDY: SamplingParams = { temperature: 0, topK: 0, topP: 1, seed: 0, step: 0 };

/** Logits [vocab] at each of the last numPositions positions of `ids`, in order. */
export async function teacherForcedLogits(model: LoadedModel, input: TeacherForcedInput): Promise<Float32Array[]> {
  const { runner } = model;
  const n = input.ids.length;
  const vocab = runner.text.vocabSize;
  const hidden = runner.text.hiddenSize;
  const want = input.numPositions ?? n;
  const chunk = Math.min(runner.limits.maxTokensPerStep, runner.limits.maxSeqs);
  if (chunk < 1 || want > n) throw new InternalError(`teacherForcedLogits: ${want} positions of ${n} in chunks of ${chunk}`);
  const given = input.media?.embeddings;
  const embeddings = given === undefined ? new Float32Array(0) : given instanceof Float32Array ? given : await model.lm.gpu.readF32(given);
  const mediaRows = mediaRowOf(n, input.media?.placeholders ?? [], embeddings.length / hidden);
  const row = (x: Float32Array, p: number) => x.subarray(mediaRows[p] * hidden, (mediaRows[p] + 1) * hidden);
  const deepstack = input.media?.deepstack ?? [];
  /** Position p's media row as the runner takes it: its row, and its row of each DeepStack level. */
  const mediaAt = (p: number, offset: number): MediaRows => ({
    offset,
    data: row(embeddings, p),
    ...(deepstack.length > 0 ? { deepstack: deepstack.map((level) => row(level, p)) } : {}),
  });
  const rope = input.ropePositions;
  if (rope && rope.length !== 3 * n) throw new InternalError(`teacherForcedLogits: ${rope.length} M-RoPE positions for ${n} tokens`);
  /** Tokens [c0, c1)'s M-RoPE rows, [3, c1 - c0]. */
  const ropeOf = (c0: number, c1: number) => {
    if (!rope) return {};
    const out = new Uint32Array(3 * (c1 - c0));
    for (let r = 0; r < 3; r++) out.set(rope.subarray(r * n + c0, r * n + c1), r * (c1 - c0));
    return { ropePositions: out };
  };
  return runner.withScratchSequence(n, async (seqId) => {
    const out: Float32Array[] = [];
    for (let c0 = 0; c0 < n; c0 += chunk) {
      const c1 = Math.min(n, c0 + chunk);
      // Chunks before the wanted positions only fill the KV cache (no LM head).
      if (c1 <= n - want) {
        const media: MediaRows[] = [];
        for (let p = c0; p < c1; p++) if (mediaRows[p] >= 0) media.push(mediaAt(p, p - c0));
        await runner.run([{ seqId, tokenIds: input.ids.subarray(c0, c1), start: c0, media, ...ropeOf(c0, c1) }]);
        continue;
      }
      const seqs: RunnerSeq[] = [];
      for (let p = c0; p < c1; p++) {
        seqs.push({
          seqId,
          tokenIds: input.ids.subarray(p, p + 1),
          start: p,
          sample: GREEDY,
          media: mediaRows[p] >= 0 ? [mediaAt(p, 0)] : undefined,
          ...ropeOf(p, p + 1),
        });
      }
      const r = await runner.run(seqs, { readLogits: true });
      for (let i = 0; i < c1 - c0; i++) if (c0 + i >= n - want) out.push(r.logits!.slice(i * vocab, (i + 1) * vocab));
    }
    return out;
  });
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
function klDivergence(p: Float32Array, q: Float32Array): number {
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
const DECISIVE_MARGIN = 0.1;

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
   * (random-weight checkpoints have many near-ties that any rounding flips).
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
