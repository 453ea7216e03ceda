// Whisper's log-mel features (src/processor/audio/): the FFT against a direct DFT at several lengths, the
// Slaney filter bank against the mel_filters Whisper itself ships (whisper-base's
// preprocessor_config.json, 80 x 201), and whole features against the float64 reference
// (test/reference/log_mel.py) for a short clip at 80 bins and an exactly 30-second clip at 128, and
// against transformers.js's WhisperFeatureExtractor on the same PCM.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { WhisperFeatureExtractor } from '@huggingface/transformers';
import { describe, expect, it } from 'vitest';
import { ProcessorConfigError } from '../../src/errors';
import { Fft, RealFft } from '../../src/processor/audio/fft';
import { LogMelExtractor, logMelConfigFrom } from '../../src/processor/audio/log-mel';
import { slaneyMelFilters } from '../../src/processor/audio/mel-filters';
import { testClip } from '../helpers/audio-clips';

const root = join(import.meta.dirname, '../..');
const goldens = join(root, 'test/fixtures/goldens/audio');
const whisperBase = JSON.parse(readFileSync(join(root, 'test/fixtures/models/whisper-base/preprocessor_config.json'), 'utf8')) as Record<
  string,
  unknown
>;

function directDft(re: Float64Array, im: Float64Array): [Float64Array, Float64Array] {
  const n = re.length;
  const outRe = new Float64Array(n);
  const outIm = new Float64Array(n);
  for (let k = 0; k < n; k++) {
    for (let j = 0; j < n; j++) {
      const a = (-2 * Math.PI * ((j * k) % n)) / n;
      outRe[k] += re[j] * Math.cos(a) - im[j] * Math.sin(a);
      outIm[k] += re[j] * Math.sin(a) + im[j] * Math.cos(a);
    }
  }
  return [outRe, outIm];
}

describe('FFT of any length', () => {
  for (const n of [1, 2, 3, 7, 16, 30, 49, 400, 512]) {
    it(`n = ${n} matches the direct DFT`, () => {
      let s = n;
      const rand = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
      const re = Float64Array.from({ length: n }, rand);
      const im = Float64Array.from({ length: n }, rand);
      const [wantRe, wantIm] = directDft(re, im);
      const gotRe = new Float64Array(n);
      const gotIm = new Float64Array(n);
      new Fft(n).transform(re, im, gotRe, gotIm);
      for (let k = 0; k < n; k++) {
        expect(Math.abs(gotRe[k] - wantRe[k])).toBeLessThan(1e-9 * n);
        expect(Math.abs(gotIm[k] - wantIm[k])).toBeLessThan(1e-9 * n);
      }
    });
  }
});

describe('FFT of a real signal through one of half the length', () => {
  for (const n of [2, 4, 30, 98, 400, 512]) {
    it(`n = ${n}: bins 0 .. n / 2 match the direct DFT`, () => {
      let s = n + 1;
      const rand = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
      const x = Float64Array.from({ length: n }, rand);
      const [wantRe, wantIm] = directDft(x, new Float64Array(n));
      const gotRe = new Float64Array(n / 2 + 1);
      const gotIm = new Float64Array(n / 2 + 1);
      new RealFft(n).transform(x, gotRe, gotIm);
      for (let k = 0; k <= n / 2; k++) {
        expect(Math.abs(gotRe[k] - wantRe[k])).toBeLessThan(1e-9 * n);
        expect(Math.abs(gotIm[k] - wantIm[k])).toBeLessThan(1e-9 * n);
      }
    });
  }
  it('odd lengths are refused', () => expect(() => new RealFft(401)).toThrow(RangeError));
});

describe('Slaney mel filter bank', () => {
  it("equals whisper-base's shipped mel_filters (80 x 201) within float32 rounding", () => {
    const shipped = whisperBase.mel_filters as number[][];
    expect(shipped.length).toBe(80);
    const ours = slaneyMelFilters({ numMelFilters: 80, nFft: 400, samplingRate: 16000 });
    let worst = 0;
    for (let m = 0; m < 80; m++) {
      expect(shipped[m].length).toBe(201);
      for (let b = 0; b < 201; b++) worst = Math.max(worst, Math.abs(ours[m * 201 + b] - shipped[m][b]));
    }
    // The shipped weights are float32 values of at most ~0.026: 1e-8 is a few float32 ulps there.
    expect(worst).toBeLessThan(1e-8);
  });
});

interface GoldenCase {
  seconds: number;
  mel_bins: number;
  frames: number;
  start: number;
  stop: number;
  step: number;
  tail?: number;
}

describe('log-mel features against the float64 reference', () => {
  const manifest = JSON.parse(readFileSync(join(goldens, 'log-mel.json'), 'utf8')) as { cases: Record<string, GoldenCase> };
  for (const [name, c] of Object.entries(manifest.cases)) {
    it(`${name}: ${c.seconds} s at ${c.mel_bins} mel bins, every value within 1e-4`, () => {
      const config = logMelConfigFrom({ ...whisperBase, feature_size: c.mel_bins }, 'preprocessor_config.json');
      const extractor = new LogMelExtractor(config);
      expect(extractor.numFrames).toBe(c.frames);
      const got = extractor.extract(testClip(c.seconds, config.samplingRate));
      expect(got.length).toBe(c.mel_bins * c.frames);
      const bytes = readFileSync(join(goldens, `log-mel-${name}.f32.bin`));
      const want = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4);
      const stored = Math.ceil((c.stop - c.start) / c.step);
      expect(want.length).toBe(c.mel_bins * stored);
      let worst = 0;
      for (let m = 0; m < c.mel_bins; m++) {
        for (let i = 0; i < stored; i++) {
          const t = c.start + i * c.step;
          worst = Math.max(worst, Math.abs(got[m * c.frames + t] - want[m * stored + i]));
        }
        if (c.tail !== undefined) {
          for (let t = c.stop; t < c.frames; t++) worst = Math.max(worst, Math.abs(got[m * c.frames + t] - c.tail));
        }
      }
      expect(worst).toBeLessThan(1e-4);
    });
  }

  it("equals transformers.js's WhisperFeatureExtractor on a 7.3 s clip (within float32 rounding)", async () => {
    const pcm = testClip(7.3, 16000);
    const ours = new LogMelExtractor(logMelConfigFrom(whisperBase, 'preprocessor_config.json')).extract(pcm);
    const theirs = (await new WhisperFeatureExtractor(whisperBase)(pcm)).input_features;
    expect(theirs.dims).toEqual([1, 80, 3000]);
    const data = theirs.data as Float32Array;
    let worst = 0;
    for (let i = 0; i < ours.length; i++) worst = Math.max(worst, Math.abs(ours[i] - data[i]));
    expect(worst).toBeLessThan(1e-6);
  });

  it('silence is the floor everywhere; a chunk longer than the config allows is refused', () => {
    const extractor = new LogMelExtractor(logMelConfigFrom(whisperBase, 'preprocessor_config.json'));
    const silent = extractor.extract(new Float32Array(16000));
    // log10(1e-10) = -10 everywhere, so the maximum is -10 and nothing is clamped: (-10 + 4) / 4.
    expect(new Set(silent)).toEqual(new Set([Math.fround(-1.5)]));
    expect(() => extractor.extract(new Float32Array(480001))).toThrow(RangeError);
  });

  it('bad configs are named', () => {
    expect(() => logMelConfigFrom({ ...whisperBase, n_fft: 0 }, 'p.json')).toThrow(ProcessorConfigError);
    expect(() => logMelConfigFrom({ ...whisperBase, hop_length: 1.5 }, 'p.json')).toThrow(/hop_length must be a positive integer/);
    expect(() => logMelConfigFrom({ ...whisperBase, dither: 1 }, 'p.json')).toThrow(/dither/);
    expect(() => logMelConfigFrom({ ...whisperBase, n_fft: 401 }, 'p.json')).toThrow(/n_fft must be even/);
    expect(() => logMelConfigFrom({ ...whisperBase, padding_value: 'x' }, 'p.json')).toThrow(/padding_value/);
  });
});
