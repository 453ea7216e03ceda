// EVS pruning (src/encoder/video/evs.ts) against vLLM `multimodal/evs.py` semantics: the retained count,
// q = 0 giving exactly the unpruned tokens, the first frame kept whole, the kept tokens in their original
// order, the most-changed tokens kept first, and the placeholder sizing done before encoding.

import { describe, expect, it } from 'vitest';
import { checkPruningRate, evsPrune, evsRetainedCount, evsRetentionMask, evsTokensPerFrame } from '../../src/encoder/video/evs';
import { InvalidMessageError } from '../../src/errors';
import { mulberry32 } from '../../src/selfcheck/random';

function frames(seed: number, T: number, N: number, D: number): Float32Array[] {
  const next = mulberry32(seed);
  return Array.from({ length: T }, () => Float32Array.from({ length: N * D }, () => next() * 2 - 1));
}

/** Independent reference: dissimilarities in float64, then pick the largest repeatedly (ties: lower index). */
function referenceMask(fs: Float32Array[], D: number, q: number): boolean[] {
  const N = fs[0]!.length / D;
  const d: number[] = [];
  fs.forEach((f, t) => {
    for (let p = 0; p < N; p++) {
      if (t === 0) {
        d.push(255);
        continue;
      }
      let dot = 0;
      let a = 0;
      let b = 0;
      for (let k = 0; k < D; k++) {
        dot += f[p * D + k]! * fs[t - 1]![p * D + k]!;
        a += f[p * D + k]! ** 2;
        b += fs[t - 1]![p * D + k]! ** 2;
      }
      d.push(1 - dot / Math.sqrt(Math.max(a * b, 1e-16)));
    }
  });
  const keep = d.map(() => false);
  const k = Math.max(N, Math.trunc(N * fs.length * (1 - q)));
  for (let n = 0; n < k; n++) {
    let best = -1;
    for (let i = 0; i < d.length; i++) if (!keep[i] && (best < 0 || d[i]! > d[best]!)) best = i;
    keep[best] = true;
  }
  return keep;
}

describe('EVS', () => {
  it('retained count: max(tokens_per_frame, int(total * (1 - q)))', () => {
    expect(evsRetainedCount(4, 2, 0)).toBe(8);
    expect(evsRetainedCount(4, 2, 0.9)).toBe(4);
    expect(evsRetainedCount(5, 2, 0.25)).toBe(7);
    expect(evsRetainedCount(16, 1, 0.99)).toBe(16);
    expect(evsRetainedCount(64, 64, 0.5)).toBe(2048);
    expect(evsRetainedCount(64, 3, 0.3)).toBe(134); // int(192 * 0.7) = int(134.39999999999998)
  });

  it('q = 0 keeps every token: the output is exactly the frames, in order', () => {
    const fs = frames(1, 5, 7, 12);
    const all = new Float32Array(fs.reduce((a, f) => a + f.length, 0));
    fs.reduce((o, f) => (all.set(f, o), o + f.length), 0);
    expect(evsPrune(fs, 12, 0)).toEqual(all);
  });

  it('keeps exactly the planned count, the first frame whole, in original order; equals an independent reference', () => {
    for (const [seed, T, N, D, q] of [
      [2, 4, 16, 8, 0.5],
      [3, 8, 16, 32, 0.75],
      [4, 3, 9, 5, 0.3],
      [5, 1, 16, 8, 0.9],
      [6, 6, 4, 3, 0.99],
    ] as const) {
      const fs = frames(seed, T, N, D);
      const mask = evsRetentionMask(fs, D, q);
      expect(mask.filter(Boolean)).toHaveLength(evsRetainedCount(N, T, q));
      expect(mask.slice(0, N).every(Boolean)).toBe(true);
      expect(mask).toEqual(referenceMask(fs, D, q));
      const out = evsPrune(fs, D, q);
      let row = 0;
      mask.forEach((k, i) => {
        if (!k) return;
        const t = Math.floor(i / N);
        const p = i % N;
        expect(Array.from(out.subarray(row * D, (row + 1) * D))).toEqual(Array.from(fs[t]!.subarray(p * D, (p + 1) * D)));
        row++;
      });
      const perFrame = evsTokensPerFrame(N, T, q);
      expect(perFrame.reduce((a, b) => a + b, 0)).toBe(evsRetainedCount(N, T, q));
      expect(perFrame[0]).toBe(N);
      if (T > 1) expect(Math.max(...perFrame.slice(1)) - Math.min(...perFrame.slice(1))).toBeLessThanOrEqual(1);
    }
  });

  it('drops the tokens that did not change since the previous frame first', () => {
    const [f0] = frames(7, 1, 4, 6);
    const f1 = f0!.slice();
    for (let k = 0; k < 6; k++) f1[2 * 6 + k] = -f1[2 * 6 + k]!; // only token 2 changes (it flips)
    const mask = evsRetentionMask([f0!, f1], 6, 0.375); // keeps max(4, int(8 * 0.625)) = 5
    expect(mask).toEqual([true, true, true, true, false, false, true, false]);
  });

  it('the pruning rate must be in [0, 1)', () => {
    for (const q of [-0.1, 1, 1.5, Number.NaN]) expect(() => checkPruningRate(q)).toThrow(InvalidMessageError);
    expect(() => checkPruningRate(0)).not.toThrow();
  });
});
