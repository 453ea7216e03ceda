// OpenAI's logprobs for one sampled token, from the logits the sampler saw: the row after its processors
// (penalties, a grammar's mask), scaled by 1 / temperature as the sampler scales it (temperature 0, greedy:
// scale 1), log-softmaxed over the whole vocabulary (before top-k / top-p, which only narrow the draw).
//   logprob(i) = z_i - (zMax + log(sum_j exp(z_j - zMax)))     z = logits * fround(1 / T)
// In float64 on the host: the rows are read back from the device on the steps of requests that ask.

/** A token's log probability with its most likely alternatives (ids; the engine names them). */
export interface TokenLogprobIds {
  id: number;
  logprob: number;
  /** The `top` most likely tokens of the same distribution, most likely first (ties: lower id first). */
  top: Array<{ id: number; logprob: number }>;
}

/** The log probabilities of `chosen` and of the `top` (0..20) most likely tokens of `row`. */
export function tokenLogprobs(row: Float32Array, chosen: number, temperature: number, top: number): TokenLogprobIds {
  const scale = temperature > 0 ? Math.fround(1 / temperature) : 1;
  let zMax = -Infinity;
  for (let i = 0; i < row.length; i++) zMax = Math.max(zMax, Math.fround(row[i]! * scale));
  let sum = 0;
  for (let i = 0; i < row.length; i++) sum += Math.exp(Math.fround(row[i]! * scale) - zMax);
  const lse = zMax + Math.log(sum);
  const lp = (i: number) => Math.fround(row[i]! * scale) - lse;
  // The best `top` by insertion into a short sorted list (top <= 20).
  const best: Array<{ id: number; z: number }> = [];
  if (top > 0) {
    for (let i = 0; i < row.length; i++) {
      const z = Math.fround(row[i]! * scale);
      if (best.length === top && z <= best[top - 1]!.z) continue;
      let at = best.length;
      while (at > 0 && best[at - 1]!.z < z) at--;
      best.splice(at, 0, { id: i, z });
      if (best.length > top) best.pop();
    }
  }
  return { id: chosen, logprob: lp(chosen), top: best.map((b) => ({ id: b.id, logprob: b.z - lse })) };
}
