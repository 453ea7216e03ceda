// What the CPU backend promises about a request run beside others (docs/design.md, "Batching on the CPU
// backend"): onnxruntime's kernels take other paths for a batch of rows than for one row (and per CPU:
// AVX2, AVX-512, NEON, WebAssembly SIMD), so a request's log probabilities in a batch differ from its own by
// a few 1e-6, and a near-tie can go the other way. What holds on every machine, and what these checks assert:
//   - up to the first token where the two answers differ, every log probability agrees within the bound;
//   - a greedy answer differs only at a near-tie: there, the request alone had its top two choices within
//     twice the bound, and the batch picked the second one;
//   - a sampled answer may differ where its draw fell within the bound of a boundary between two tokens
//     (seeded sampling reproduces a request run the same way, as vLLM documents); before that, the same.
// Both answers must have been asked with logprobs: true and top_logprobs >= 2.

/** Largest |difference| of a log probability between a request alone and in a batch: measured up to 9.2e-6 here. */
export const CPU_BATCH_LOGPROB_BOUND = 1e-3;

export interface ScoredAnswer {
  tokenIds: readonly number[];
  logprobs: ReadonlyArray<{ token: string; logprob: number; top_logprobs: ReadonlyArray<{ token: string; logprob: number }> }>;
}

export interface Agreement {
  /** Index of the first token that differs; undefined when the answers are the same. */
  divergesAt: number | undefined;
  /** What breaks the contract above (empty: it holds). */
  problems: string[];
  /** The largest log probability difference before the first differing token. */
  maxDelta: number;
}

/** Compares a request's answer in a batch with its answer alone (both asked with logprobs). */
export function batchAgreement(alone: ScoredAnswer, batched: ScoredAnswer, sampled: boolean, bound = CPU_BATCH_LOGPROB_BOUND): Agreement {
  const problems: string[] = [];
  const a = alone.tokenIds;
  const b = batched.tokenIds;
  let k = 0;
  while (k < a.length && k < b.length && a[k] === b[k]) k++;
  const divergesAt = k === a.length && k === b.length ? undefined : k;
  let maxDelta = 0;
  // A stop token ends tokenIds but has no log probability (as OpenAI's): the last token may have none.
  const scoredUpTo = (x: ScoredAnswer, i: number) => x.logprobs[i] ?? (i === x.tokenIds.length - 1 ? null : undefined);
  for (let i = 0; i < k; i++) {
    const la = scoredUpTo(alone, i);
    const lb = scoredUpTo(batched, i);
    if (la === undefined || lb === undefined) {
      problems.push(`token ${i}: no log probabilities (ask with logprobs: true, top_logprobs >= 2)`);
      break;
    }
    if (la && lb) maxDelta = Math.max(maxDelta, Math.abs(la.logprob - lb.logprob));
  }
  if (maxDelta > bound) problems.push(`log probabilities differ by ${maxDelta} before token ${k}, more than ${bound}`);
  if (divergesAt !== undefined && !sampled) {
    // A near-tie where they part: the side that has log probabilities there (one may have stopped) had its
    // top two within twice the bound; with both, the batch's choice was the runner-up alone.
    const la = alone.logprobs[k];
    const lb = batched.logprobs[k];
    for (const [side, l] of [
      ['alone', la],
      ['batched', lb],
    ] as const) {
      if (!l) continue;
      if (l.top_logprobs.length < 2) {
        problems.push(`token ${k}: fewer than two top log probabilities (ask with top_logprobs >= 2)`);
        continue;
      }
      const margin = l.top_logprobs[0].logprob - l.top_logprobs[1].logprob;
      if (margin > 2 * bound) {
        problems.push(
          `greedy answers differ at token ${k} (${a[k]} alone, ${b[k]} batched) though the top two ${side} were ${margin} apart`,
        );
      }
    }
    if (la && lb && lb.token !== la.top_logprobs[1]?.token) {
      problems.push(`greedy answers differ at token ${k}: the batch picked ${JSON.stringify(lb.token)}, not the runner-up alone`);
    }
    if (!la && !lb) problems.push(`greedy answers differ at token ${k} (${a[k]} alone, ${b[k]} batched), both without log probabilities`);
  }
  return { divergesAt, problems, maxDelta };
}

/** The ScoredAnswer of a chat completion's choice (asked with logprobs). */
export function scored(
  r: {
    tessera: { tokenIds: number[]; choices?: Array<{ tokenIds: number[] }> };
    choices: Array<{ logprobs?: { content: ScoredAnswer['logprobs'] | null } | null }>;
  },
  choice = 0,
): ScoredAnswer {
  const tokenIds = r.tessera.choices ? r.tessera.choices[choice]!.tokenIds : r.tessera.tokenIds;
  return { tokenIds, logprobs: r.choices[choice]?.logprobs?.content ?? [] };
}

/** A greedy sequence's tokens and the logits each was picked from (a runner's steps, read with readLogits). */
export interface ScoredSteps {
  out: readonly number[];
  logits: readonly Float32Array[];
}

/** batchAgreement for greedy runner steps, on the full logits: every logit within the bound before the first difference. */
export function logitsAgreement(alone: ScoredSteps, batched: ScoredSteps, bound = CPU_BATCH_LOGPROB_BOUND): Agreement {
  const problems: string[] = [];
  let k = 0;
  while (k < alone.out.length && k < batched.out.length && alone.out[k] === batched.out[k]) k++;
  const divergesAt = k === alone.out.length && k === batched.out.length ? undefined : k;
  let maxDelta = 0;
  for (let i = 0; i < k; i++) {
    const a = alone.logits[i]!;
    const b = batched.logits[i]!;
    for (let j = 0; j < a.length; j++) maxDelta = Math.max(maxDelta, Math.abs(a[j]! - b[j]!));
  }
  if (maxDelta > bound) problems.push(`logits differ by ${maxDelta} before token ${k}, more than ${bound}`);
  if (divergesAt !== undefined && k < alone.logits.length && k < batched.out.length) {
    const a = alone.logits[k]!;
    const order = [...a.keys()].sort((x, y) => a[y]! - a[x]!);
    const margin = a[order[0]!]! - a[order[1]!]!;
    if (margin > 2 * bound) problems.push(`tokens differ at ${k} though the top two logits alone were ${margin} apart`);
    if (batched.out[k] !== order[1])
      problems.push(`tokens differ at ${k}: the batch picked ${batched.out[k]}, not the runner-up alone (${order[1]})`);
  }
  return { divergesAt, problems, maxDelta };
}
