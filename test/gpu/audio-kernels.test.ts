// The audio encoder's kernels against their float64 references: the Whisper stem's 1-D convolutions
// (im2col + matmul, channels-first log-mel in, time-first rows out, stride 2 and ragged widths) and the
// exact (erf) GELU in every matmul plan's epilogue.

import { describe, expect, it } from 'vitest';
import { erf, gelu } from '../../src/kernels/activations';
import { conv1dOutputLength } from '../../src/kernels/conv1d';
import { conv1dCase, matmulCase } from '../../src/selfcheck/cases';
import { expectCasePasses, useGpu } from './gpu';

const gpu = useGpu();

describe('conv1d', () => {
  it('output length is floor((T + 2p - k) / s) + 1, as torch Conv1d', () => {
    expect(conv1dOutputLength({ length: 3000, kernel: 3, stride: 1, padding: 1 })).toBe(3000);
    expect(conv1dOutputLength({ length: 3000, kernel: 3, stride: 2, padding: 1 })).toBe(1500);
    expect(conv1dOutputLength({ length: 7, kernel: 3, stride: 2, padding: 1 })).toBe(4);
  });

  it('conv1: channels-first mel in, k3 s1 p1, fused GELU', () =>
    expectCasePasses(
      gpu(),
      conv1dCase(
        { batch: 2, channels: 20, length: 50, kernel: 3, stride: 1, padding: 1, outDim: 24, layout: 'channels-first' },
        { activation: 'gelu' },
      ),
    ));
  it('conv2: time-first rows in, k3 s2 p1, odd length and width', () =>
    expectCasePasses(
      gpu(),
      conv1dCase(
        { batch: 2, channels: 12, length: 37, kernel: 3, stride: 2, padding: 1, outDim: 20, layout: 'time-first' },
        { activation: 'gelu' },
      ),
    ));
  it('no padding, kernel 5, stride 3, workgroup plan (K not a multiple of 4)', () =>
    expectCasePasses(
      gpu(),
      conv1dCase(
        { batch: 1, channels: 7, length: 30, kernel: 5, stride: 3, padding: 0, outDim: 9, layout: 'channels-first' },
        { plan: 'workgroup' },
      ),
    ));
  it('q8 weights', () =>
    expectCasePasses(
      gpu(),
      conv1dCase(
        { batch: 1, channels: 16, length: 40, kernel: 3, stride: 2, padding: 1, outDim: 32, layout: 'time-first' },
        { format: 'q8' },
      ),
    ));
  it('Whisper-small-sized conv1 (80 mel bins -> 768, 600 frames)', () =>
    expectCasePasses(
      gpu(),
      conv1dCase(
        { batch: 1, channels: 80, length: 600, kernel: 3, stride: 1, padding: 1, outDim: 768, layout: 'channels-first' },
        { activation: 'gelu' },
      ),
    ));
});

describe('exact GELU', () => {
  it('float64 erf matches known values', () => {
    // erf(0.5), erf(1), erf(2), erf(4) to 16 digits (Abramowitz and Stegun, Table 7.1).
    expect(erf(0.5)).toBeCloseTo(0.5204998778130465, 15);
    expect(erf(1)).toBeCloseTo(0.8427007929497149, 15);
    expect(erf(-2)).toBeCloseTo(-0.9953222650189527, 15);
    expect(erf(4)).toBeCloseTo(0.9999999845827421, 15);
    expect(gelu(1)).toBeCloseTo(0.8413447460685429, 15);
  });
  for (const plan of ['register-wide', 'register-narrow', 'workgroup', 'gemv'] as const) {
    it(`fused gelu ${plan}`, () =>
      expectCasePasses(
        gpu(),
        matmulCase({ M: plan === 'gemv' || plan === 'register-narrow' ? 3 : 20, N: 40, K: 32 }, { plan, bias: true, activation: 'gelu' }),
      ));
  }
});

describe('audio encoder batch', () => {
  it('chunks per pass are lowered until the largest buffer fits one storage binding (Voxtral-Mini: 30.7 MB a chunk)', async () => {
    const { AudioEncoder } = await import('../../src/model/audio-encoder');
    const { parseModelConfig } = await import('../../src/families/registry');
    const { readFileSync } = await import('node:fs');
    const config = parseModelConfig(JSON.parse(readFileSync('test/fixtures/models/Voxtral-Mini-3B-2507/config.json', 'utf8')));
    const perChunk = 4 * 1500 * 5120;
    const fit = Math.floor(gpu().limits.maxStorageBufferBindingSize / perChunk);
    const encoder = new AudioEncoder(gpu(), {} as never, config, 64);
    expect(encoder.maxBatch).toBe(Math.max(1, Math.min(64, fit)));
    expect(new AudioEncoder(gpu(), {} as never, config, 1).maxBatch).toBe(1);
  });
});
