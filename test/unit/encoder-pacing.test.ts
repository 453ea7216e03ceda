// EncoderPacing with integers: a fake encoder whose grants take a set wall time, and a fake clock.
import { describe, expect, it } from 'vitest';
import { EncoderPacing, type PacedEncoder } from '../../src/engine/encoder-pacing';

/** An encoder that, granted b ms, runs pieces of pieceMs until b is spent; each grant also costs overheadMs of wall time. */
function fakeEncoder(clock: { t: number }, pieceMs: number, overheadMs: number) {
  const log: Array<{ budgetMs: number; spentMs: number }> = [];
  const paced: boolean[] = [];
  const encoder: PacedEncoder = {
    setPaced: (p) => void paced.push(p),
    grant: async (budgetMs) => {
      let spentMs = 0;
      while (spentMs < budgetMs) spentMs += pieceMs;
      clock.t += spentMs + overheadMs;
      log.push({ budgetMs, spentMs });
      return spentMs;
    },
  };
  return { encoder, log, paced };
}

/** Run `steps` decode steps of stepMs (plus slowdownMs after a grant) with an image encoding; the wall time per token. */
async function run(pacing: EncoderPacing, clock: { t: number }, steps: number, stepMs: number, slowdownMs = 0) {
  const intervals: number[] = [];
  let grantedBefore = false;
  for (let i = 0; i < steps; i++) {
    const t0 = clock.t;
    const ms = stepMs + (grantedBefore ? slowdownMs : 0);
    clock.t += ms;
    const before = pacing.grantedMs;
    await pacing.afterStep(ms, true, true);
    grantedBefore = pacing.grantedMs > before;
    intervals.push(clock.t - t0);
  }
  return intervals;
}

const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

describe('EncoderPacing', () => {
  it('with exact grants, each decode step is followed by its share of encoder time', async () => {
    const clock = { t: 0 };
    const { encoder, log } = fakeEncoder(clock, 25, 0);
    const pacing = new EncoderPacing(encoder, { encoderShare: 0.25 }, () => clock.t);
    await pacing.afterStep(100, true, false); // a step before the image arrives: the baseline
    const intervals = await run(pacing, clock, 40, 100);
    expect(intervals.every((i) => i === 125)).toBe(true);
    expect(log.every((g) => g.budgetMs === 25 && g.spentMs === 25)).toBe(true);
    expect(pacing.grantedMs).toBe(40 * 25);
    expect(pacing.chargedMs).toBe(40 * 25);
  });

  it('charges what decoding sees: messaging overhead and the slow-down of the next step hold the average to (1 + share)', async () => {
    const clock = { t: 0 };
    const { encoder } = fakeEncoder(clock, 25, 20); // each grant costs 20 ms beyond its pieces
    const pacing = new EncoderPacing(encoder, { encoderShare: 0.25 }, () => clock.t);
    await pacing.afterStep(100, true, false);
    const intervals = await run(pacing, clock, 200, 100, 30); // a step after a grant runs 30 ms slower
    // Charged per grant: 25 + 20 + 30 = 75 ms against 25 ms of credit per step: a grant every third step.
    const mean = sum(intervals) / intervals.length;
    expect(mean).toBeGreaterThan(122);
    expect(mean).toBeLessThan(128);
    expect(pacing.grantedMs).toBeGreaterThan(0);
    expect(pacing.chargedMs).toBeGreaterThan(2.9 * pacing.grantedMs);
    // The cycle is a grant (100 + 45 ms), the slowed step after it (130 ms) and a clean step (100 ms): the
    // steps that pay off a grant's debt run with no encoder work.
    const at = intervals.indexOf(145, 10);
    expect(intervals.slice(at, at + 9)).toEqual([145, 130, 100, 145, 130, 100, 145, 130, 100]);
  });

  it('a piece longer than many steps of credit is paid off over the following steps, then the encoder runs again', async () => {
    const clock = { t: 0 };
    const { encoder, log } = fakeEncoder(clock, 250, 0); // one piece = 10 steps of credit at share 0.25
    const pacing = new EncoderPacing(encoder, { encoderShare: 0.25 }, () => clock.t);
    await pacing.afterStep(100, true, false);
    const intervals = await run(pacing, clock, 100, 100);
    expect(log.length).toBe(10);
    expect(sum(intervals)).toBe(100 * 100 + 10 * 250);
  });

  it('the credit saved while nothing needs it is bounded: at most 4 steps of share at once', async () => {
    const clock = { t: 0 };
    const { encoder, log } = fakeEncoder(clock, 1, 0);
    const grants: number[] = [];
    const pacing = new EncoderPacing({ ...encoder, grant: async (b) => (grants.push(b), 0) }, { encoderShare: 0.5 }, () => clock.t);
    for (let i = 0; i < 10; i++) await pacing.afterStep(100, true, true); // grants find nothing to run
    expect(Math.max(...grants)).toBeLessThanOrEqual(200);
    expect(log.length).toBe(0);
    expect(pacing.chargedMs).toBe(0);
  });

  it('off, or with nothing decoding, the encoder runs free and nothing is granted', async () => {
    const clock = { t: 0 };
    const off = fakeEncoder(clock, 25, 0);
    const none = new EncoderPacing(off.encoder, undefined, () => clock.t);
    none.beforeStep(true);
    await none.afterStep(100, true, true);
    expect(off.log.length).toBe(0);
    expect(off.paced).toEqual([false]);

    const on = fakeEncoder(clock, 25, 0);
    const pacing = new EncoderPacing(on.encoder, { encoderShare: 0.25 }, () => clock.t);
    pacing.beforeStep(true);
    await pacing.afterStep(100, false, true);
    expect(on.log.length).toBe(0);
    expect(on.paced).toEqual([true, false]);
  });
});
