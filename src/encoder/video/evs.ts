// Efficient Video Sampling (EVS): drop the frame tokens that barely changed since the previous frame.
// Follows vLLM `multimodal/evs.py` (compute_retained_tokens_count, compute_retention_mask):
//
//   retained = max(tokensPerFrame, int(tokensPerFrame * numFrames * (1 - q)))     known before encoding
//   dissimilarity[t, p] = 1 - cos(e[t, p], e[t-1, p])   for t >= 1;   255 for every token of frame 0
//   keep the `retained` most dissimilar tokens (stable sort, descending), in their original order
//
// q = 0 keeps every token (retained = total): the output is exactly the input.
//
// Where the kept tokens go (the placeholder count is fixed before encoding, docs/design.md invariant 2): the
// prompt keeps SmolVLM2's per-frame text, and the retained count is spread over the frames' `<image>` runs
// before anything is encoded: frame 0 whole, the rest evenly, the remainder to the earlier frames (as vLLM
// does for Qwen3-VL's per-frame timestamps). The kept rows then fill those runs in order, so a run may
// carry tokens of a neighbouring frame: the count is what the placeholders promise, as in vLLM.

import { InternalError, InvalidMessageError } from '../../errors';

export function checkPruningRate(q: number): void {
  if (typeof q !== 'number' || !Number.isFinite(q) || q < 0 || q >= 1) {
    throw new InvalidMessageError(
      `the request option tessera.videoPruning must be a number in [0, 1) (the share of video tokens to drop), got ${JSON.stringify(q)}.`,
    );
  }
}

/** vLLM `compute_retained_tokens_count`. */
export function evsRetainedCount(tokensPerFrame: number, numFrames: number, q: number): number {
  return Math.max(tokensPerFrame, Math.trunc(tokensPerFrame * numFrames * (1 - q)));
}

/** Placeholder tokens per frame for `retained` tokens: frame 0 whole, the rest evenly, remainder first. */
export function evsTokensPerFrame(tokensPerFrame: number, numFrames: number, q: number): number[] {
  const retained = evsRetainedCount(tokensPerFrame, numFrames, q);
  if (numFrames === 1) return [retained];
  const rest = retained - tokensPerFrame;
  const base = Math.floor(rest / (numFrames - 1));
  const extra = rest % (numFrames - 1);
  return [tokensPerFrame, ...Array.from({ length: numFrames - 1 }, (_, i) => base + (i < extra ? 1 : 0))];
}

/** Cosine similarity of two rows as torch computes it: x·y / sqrt(max(|x|^2 |y|^2, eps^2)), eps = 1e-8. */
function cosine(a: Float32Array, ai: number, b: Float32Array, bi: number, dim: number): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let k = 0; k < dim; k++) {
    const x = a[ai + k]!;
    const y = b[bi + k]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return dot / Math.sqrt(Math.max(na * nb, 1e-16));
}

/**
 * The retention mask over all frames' tokens (frame-major), true = kept: exactly evsRetainedCount(...) trues.
 * `frames[t]` is frame t's [tokensPerFrame, hidden] embeddings.
 */
export function evsRetentionMask(frames: readonly Float32Array[], hidden: number, q: number): boolean[] {
  checkPruningRate(q);
  const T = frames.length;
  if (T === 0) throw new InternalError('evsRetentionMask: no frames');
  const perFrame = frames[0]!.length / hidden;
  if (!Number.isInteger(perFrame) || frames.some((f) => f.length !== perFrame * hidden)) {
    throw new InternalError(`evsRetentionMask: frames must all be [${perFrame}, ${hidden}]`);
  }
  const dissimilarity = new Float64Array(T * perFrame);
  for (let t = 0; t < T; t++) {
    for (let p = 0; p < perFrame; p++) {
      dissimilarity[t * perFrame + p] = t === 0 ? 255 : 1 - cosine(frames[t]!, p * hidden, frames[t - 1]!, p * hidden, hidden);
    }
  }
  const order = Array.from(dissimilarity.keys()).sort((i, j) => dissimilarity[j]! - dissimilarity[i]! || i - j);
  const keep = new Array<boolean>(T * perFrame).fill(false);
  for (const i of order.slice(0, evsRetainedCount(perFrame, T, q))) keep[i] = true;
  return keep;
}

/** The kept rows, in their original order: [retained, hidden] f32. */
export function evsPrune(frames: readonly Float32Array[], hidden: number, q: number): Float32Array {
  const keep = evsRetentionMask(frames, hidden, q);
  const perFrame = frames[0]!.length / hidden;
  const out = new Float32Array(keep.filter(Boolean).length * hidden);
  let row = 0;
  keep.forEach((k, i) => {
    if (!k) return;
    const t = Math.floor(i / perFrame);
    const p = i % perFrame;
    out.set(frames[t]!.subarray(p * hidden, (p + 1) * hidden), row * hidden);
    row++;
  });
  return out;
}
