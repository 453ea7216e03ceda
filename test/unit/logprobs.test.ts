// tokenLogprobs (src/engine/logprobs.ts) against a plain float64 log-softmax written out here: the chosen
// token's log probability and the top alternatives (most likely first, ties to the lower id) at several
// temperatures, greedy as temperature 1, and rows with masked tokens (the lowest finite f32).

import { describe, expect, it } from 'vitest';
import { tokenLogprobs } from '../../src/engine/logprobs';
import { MASKED_LOGIT } from '../../src/kernels/logit-adjust-reference';
import { mulberry32 } from '../../src/selfcheck/random';

function naive(row: Float32Array, temperature: number): number[] {
  const z = Array.from(row, (v) => Math.fround(v * (temperature > 0 ? Math.fround(1 / temperature) : 1)));
  const max = Math.max(...z);
  const lse = max + Math.log(z.reduce((a, v) => a + Math.exp(v - max), 0));
  return z.map((v) => v - lse);
}

function row(n: number, seed: number): Float32Array {
  const next = mulberry32(seed);
  return Float32Array.from({ length: n }, () => Math.round((next() * 8 - 4) * 4) / 4);
}

describe('tokenLogprobs', () => {
  for (const temperature of [0, 0.5, 1, 1.7]) {
    it(`matches a plain log-softmax at temperature ${temperature}, top 20 in order with ties to the lower id`, () => {
      const r = row(300, 7);
      const want = naive(r, temperature);
      const got = tokenLogprobs(r, 123, temperature, 20);
      expect(got.logprob).toBeCloseTo(want[123]!, 12);
      const order = want.map((lp, id) => ({ id, lp })).sort((a, b) => b.lp - a.lp || a.id - b.id);
      expect(got.top.map((t) => t.id)).toEqual(order.slice(0, 20).map((o) => o.id));
      for (const t of got.top) expect(t.logprob).toBeCloseTo(want[t.id]!, 12);
      expect(want.reduce((a, lp) => a + Math.exp(lp), 0)).toBeCloseTo(1, 12);
    });
  }
  it('masked tokens have no probability and are listed last', () => {
    const r = row(40, 3);
    for (let i = 0; i < 40; i += 2) r[i] = MASKED_LOGIT;
    const got = tokenLogprobs(r, 5, 0.7, 20);
    expect(got.top.every((t) => t.id % 2 === 1)).toBe(true);
    expect(got.top.reduce((a, t) => a + Math.exp(t.logprob), 0)).toBeCloseTo(1, 9);
    expect(tokenLogprobs(r, 4, 0.7, 0)).toMatchObject({ id: 4, top: [] });
    expect(tokenLogprobs(r, 4, 0.7, 0).logprob).toBeLessThan(-1e30);
  });
});
