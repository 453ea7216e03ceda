// The checks behind the CPU backend's batching contract (test/helpers/batch-agreement.ts) fail where the
// contract does not hold: they are what the batched-against-alone tests on the CPU backend rest on.

import { describe, expect, it } from 'vitest';
import { batchAgreement, logitsAgreement, type ScoredAnswer } from '../helpers/batch-agreement';

/** An answer whose token i is `ids[i]`, with log probability lp[i] and runner-up `second` at lp[i] - gap[i]. */
function answer(ids: number[], lp: number[], gaps: number[], seconds: string[] = ids.map(() => 'other'), stopped = false): ScoredAnswer {
  const scoredIds = stopped ? ids.slice(0, -1) : ids;
  return {
    tokenIds: ids,
    logprobs: scoredIds.map((id, i) => ({
      token: `t${id}`,
      logprob: lp[i]!,
      top_logprobs: [
        { token: `t${id}`, logprob: lp[i]! },
        { token: seconds[i]!, logprob: lp[i]! - gaps[i]! },
      ],
    })),
  };
}

describe('batchAgreement', () => {
  const alone = answer([1, 2, 3], [-0.1, -0.2, -0.3], [1, 1e-4, 1], ['x', 't9', 'y']);

  it('holds for the same tokens within the bound, and for a stop token without log probabilities', () => {
    expect(batchAgreement(alone, answer([1, 2, 3], [-0.1 + 5e-6, -0.2, -0.3 - 5e-6], [1, 1e-4, 1]), false)).toMatchObject({
      divergesAt: undefined,
      problems: [],
    });
    const stopped = answer([1, 2, 0], [-0.1, -0.2], [1, 1], undefined, true);
    expect(batchAgreement(stopped, stopped, false).problems).toEqual([]);
  });

  it('fails when log probabilities drift past the bound', () => {
    expect(batchAgreement(alone, answer([1, 2, 3], [-0.1, -0.21, -0.3], [1, 1e-4, 1]), false).problems[0]).toContain('differ by');
  });

  it('lets a greedy answer part only at a near-tie, to the runner-up', () => {
    const runnerUp = answer([1, 9, 4], [-0.1, -0.2, -0.5], [1, 1e-4, 1]);
    expect(batchAgreement(alone, runnerUp, false)).toMatchObject({ divergesAt: 1, problems: [] });
    const another = answer([1, 8, 4], [-0.1, -0.2, -0.5], [1, 1e-4, 1]);
    expect(batchAgreement(alone, another, false).problems[0]).toContain('not the runner-up');
    const wide = answer([1, 2, 7], [-0.1, -0.2, -0.3], [1, 1e-4, 1]);
    expect(batchAgreement(alone, wide, false).problems[0]).toContain('though the top two alone were 1 apart');
  });

  it('lets a sampled answer part anywhere, but not drift before it', () => {
    expect(batchAgreement(alone, answer([1, 2, 7], [-0.1, -0.2, -0.3], [1, 1, 1]), true).problems).toEqual([]);
    expect(batchAgreement(alone, answer([1, 2, 7], [-0.5, -0.2, -0.3], [1, 1, 1]), true).problems).toHaveLength(1);
  });
});

describe('logitsAgreement', () => {
  const steps = (out: number[], logits: number[][]) => ({ out, logits: logits.map((l) => Float32Array.from(l)) });
  it('compares every logit before the first difference and the near-tie where they part', () => {
    const alone = steps(
      [0, 1],
      [
        [3, 1, 0],
        [0, 2, 2 - 1e-4],
      ],
    );
    expect(
      logitsAgreement(
        alone,
        steps(
          [0, 2],
          [
            [3, 1, 0],
            [0, 2 - 1e-4, 2],
          ],
        ),
      ).problems,
    ).toEqual([]);
    expect(
      logitsAgreement(
        alone,
        steps(
          [0, 1],
          [
            [3, 1.01, 0],
            [0, 2, 2 - 1e-4],
          ],
        ),
      ).problems[0],
    ).toContain('logits differ by');
    const apart = steps(
      [0, 1],
      [
        [3, 1, 0],
        [0, 2, 1],
      ],
    );
    expect(
      logitsAgreement(
        apart,
        steps(
          [0, 2],
          [
            [3, 1, 0],
            [0, 1, 2],
          ],
        ),
      ).problems[0],
    ).toContain('apart');
  });
});
