// sample.wgsl against sampleReference: the same seed must give the same id. The kernel narrows the top-k
// and top-p thresholds by radix passes and finishes among at most CAP candidates in workgroup memory, so
// besides vocabulary sizes and parameters, a small CAP forces each path at small sizes: every key above
// the threshold's bin gathered, only the bin gathered, or all four digits resolved (ties past CAP).

import { describe, it } from 'vitest';
import type { SamplingParams } from '../../src/kernels/sample';
import { sampleCase, type SampleCaseOptions } from '../../src/selfcheck/cases-decoder';
import { defaultKernelCases } from '../../src/selfcheck/default-cases';
import { expectCasePasses, useGpu } from './gpu';

const gpu = useGpu();
const base: SamplingParams = { temperature: 0.8, topK: 0, topP: 1, seed: 1234, step: 0 };
const check = (rows: number, vocab: number, p: SamplingParams | SamplingParams[], o: SampleCaseOptions = {}) =>
  expectCasePasses(gpu(), sampleCase({ rows, vocab }, p, o));

describe('sample', () => {
  for (const wg of [32, 64, 128, 256]) {
    it(`WG=${wg} plain temperature`, () => check(3, 1000, base, { workgroupSize: wg }));
    it(`WG=${wg} top-k 40 and top-p 0.9, 8 candidate slots`, () =>
      check(3, 1000, { ...base, topK: 40, topP: 0.9, seed: 77 }, { workgroupSize: wg, candidates: 8 }));
  }

  describe('vocabulary sizes', () => {
    for (const vocab of [1, 2, 3, 63, 65, 777, 4099]) {
      it(`vocab ${vocab}: temperature only`, () => check(2, vocab, { ...base, seed: vocab }));
      it(`vocab ${vocab}: top-k 50 and top-p 0.9`, () => check(2, vocab, { ...base, topK: 50, topP: 0.9, seed: vocab + 1 }));
      it(`vocab ${vocab}: top-k 5 and top-p 0.5, 4 candidate slots`, () =>
        check(2, vocab, { ...base, topK: 5, topP: 0.5, seed: vocab + 2 }, { candidates: 4 }));
    }
    it('SmolVLM vocab 49280: top-k 50 and top-p 0.8 at temperature 1.3', () =>
      check(2, 49280, { temperature: 1.3, topK: 50, topP: 0.8, seed: 5, step: 11 }));
    it('SmolVLM vocab 49280: temperature only', () => check(2, 49280, { ...base, temperature: 0.7, seed: 6 }));
    it('SmolVLM vocab 49280: top-p 0.9 alone (a nucleus of thousands: the bin is gathered, the draw passes over the row)', () =>
      check(2, 49280, { ...base, temperature: 0.7, topP: 0.9, seed: 7 }));
    it('SmolVLM vocab 49280: top-k 50 alone', () => check(2, 49280, { ...base, temperature: 0.7, topK: 50, seed: 8 }));
    it('SmolVLM vocab 49280: top-k 2000 (more than the candidate slots) and top-p 0.95', () =>
      check(2, 49280, { ...base, topK: 2000, topP: 0.95, seed: 9 }));
  });

  describe('top-k', () => {
    it('top-k 1 is greedy', () => check(3, 777, { ...base, topK: 1, seed: 3 }));
    for (const topK of [2, 5, 40]) {
      for (const candidates of [4, 16, 512]) {
        it(`top-k ${topK}, ${candidates} candidate slots`, () => check(4, 5000, { ...base, topK, seed: 7 + topK }, { candidates }));
      }
    }
    it('top-k 20 over 9 distinct values: the ties at the threshold are kept', () =>
      check(4, 300, { ...base, temperature: 1.5, topK: 20, seed: 21 }, { logits: 'levels' }));
    it('top-k 20 over 9 distinct values, 8 candidate slots (ties past CAP: all four digits resolved)', () =>
      check(4, 300, { ...base, temperature: 1.5, topK: 20, seed: 22 }, { logits: 'levels', candidates: 8 }));
    // At temperature 1 (and 0.5) the levels are exact halves: their keys sit on the radix digits' bin
    // edges (low 16 bits zero: a bin's first key when positive, its last when negative).
    // With 128 slots at T=1 the top level (2.0, about 67 entries, key 0xc0000000: the first of its bin)
    // is gathered by the first pass; with 8 the ties resolve all four digits.
    for (const temperature of [1, 0.5]) {
      for (const candidates of [8, 128]) {
        it(`top-k 30 and top-p 0.8 with keys on bin edges, T=${temperature}, ${candidates} candidate slots`, () =>
          check(4, 600, { ...base, temperature, topK: 30, topP: 0.8, seed: 27 }, { logits: 'levels', candidates }));
        it(`top-p 0.3 with keys on bin edges, T=${temperature}, ${candidates} candidate slots`, () =>
          check(4, 600, { ...base, temperature, topP: 0.3, seed: 28 }, { logits: 'levels', candidates }));
      }
    }
    // Negative levels have their keys at a bin's end: top-p 0.97 cuts at -1 or -1.5, inside the bin of
    // -0.5 .. -1.5 (about 100 entries, the last key -0.5's), which is gathered without the keys above it.
    it('top-p 0.97 with keys on bin ends, T=1, 128 candidate slots', () =>
      check(4, 300, { ...base, temperature: 1, topP: 0.97, seed: 29 }, { logits: 'levels', candidates: 128 }));
    it('top-k larger than the number of distinct values', () =>
      check(4, 1000, { ...base, topK: 500, seed: 23 }, { logits: 'levels', candidates: 64 }));
    it('top-k vocab - 1, vocab, and past vocab', () =>
      check(3, 100, [
        { ...base, topK: 99, seed: 24 },
        { ...base, topK: 100, seed: 25 },
        { ...base, topK: 1000, seed: 26 },
      ]));
  });

  describe('top-p', () => {
    for (const topP of [1e-6, 0.5, 0.9, 0.999, 1]) {
      it(`top-p ${topP}`, () => check(4, 5000, { ...base, topP, seed: 99, step: 3 }));
      it(`top-p ${topP}, 8 candidate slots`, () => check(4, 5000, { ...base, topP, seed: 98, step: 4 }, { candidates: 8 }));
    }
    it('top-p 0.5 over 9 distinct values: the ties at the threshold are kept', () =>
      check(4, 2000, { ...base, temperature: 0.6, topP: 0.5, seed: 31 }, { logits: 'levels' }));
    it('top-p 0.7 after top-k 100 over 9 distinct values, 16 candidate slots', () =>
      check(4, 2000, { ...base, temperature: 0.6, topK: 100, topP: 0.7, seed: 32 }, { logits: 'levels', candidates: 16 }));
  });

  describe('temperatures', () => {
    for (const temperature of [0.05, 0.3, 1, 2.5]) {
      it(`temperature ${temperature} with top-k 30 and top-p 0.95`, () =>
        check(3, 3000, { temperature, topK: 30, topP: 0.95, seed: 41, step: 2 }));
    }
  });

  describe('all-equal logits (every key ties)', () => {
    it('temperature only', () => check(2, 1000, { ...base, seed: 51 }, { logits: 'equal' }));
    it('top-k 50 keeps every tie', () => check(2, 1000, { ...base, topK: 50, seed: 52 }, { logits: 'equal' }));
    it('top-p 0.5 keeps every tie', () => check(2, 1000, { ...base, topP: 0.5, seed: 53 }, { logits: 'equal' }));
    it('vocab 49280, top-k 50 and top-p 0.9', () => check(1, 49280, { ...base, topK: 50, topP: 0.9, seed: 54 }, { logits: 'equal' }));
  });

  it('per-row parameters: greedy rows keep the argmax id, each sampled row uses its own settings', () =>
    check(5, 3000, [
      { ...base, temperature: 0 },
      { temperature: 1.1, topK: 30, topP: 1, seed: 8, step: 2 },
      { ...base, temperature: 0 },
      { temperature: 0.6, topK: 0, topP: 0.7, seed: 123456789, step: 40 },
      { temperature: 2, topK: 5, topP: 0.5, seed: 1, step: 0 },
    ]));
  it('per-row parameters at vocab 49280, with a row argmax marked non-finite', () =>
    check(
      4,
      49280,
      [
        { temperature: 0.7, topK: 50, topP: 0.9, seed: 61, step: 5 },
        { temperature: 1, topK: 0, topP: 0.95, seed: 62, step: 0 },
        { temperature: 0.9, topK: 10, topP: 1, seed: 63, step: 9 },
        { temperature: 0.7, topK: 50, topP: 0.9, seed: 64, step: 1 },
      ],
      { nonFiniteRows: [3] },
    ));
  it("the self-check's sample cases (doctor, the demo page)", async () => {
    for (const c of defaultKernelCases().filter((k) => k.kernel === 'sample')) await expectCasePasses(gpu(), c);
  });
  it('64 rows, each with its own seed and step', () =>
    check(
      64,
      300,
      Array.from({ length: 64 }, (_, i) => ({
        temperature: 1,
        topK: i % 3 === 0 ? 0 : 20,
        topP: i % 2 === 0 ? 0.95 : 1,
        seed: i + 1,
        step: i * 7,
      })),
    ));
});
