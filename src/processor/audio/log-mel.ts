// Whisper's log-mel features (WhisperFeatureExtractor, the audio front end of Whisper-encoder models such
// as Voxtral and Ultravox), a chunk of frames at a time:
//
//   window       the samples a chunk's frames read: half a window before it to its last frame's end after
//                it (rawFrames); a chunk on its own reflects at its own edges (extract), a chunk of a whole
//                clip reads its neighbours' samples (src/encoder/audio/prepare-audio.ts)
//   frames       a frame every hopLength samples, nSamples / hop of them (the STFT's last is dropped)
//   window fn    periodic Hann of nFft samples
//   power        |FFT|² of each windowed frame, its 1 + nFft / 2 bins
//   mel          the Slaney filter bank (feature_size filters, 0 Hz to half the rate)
//   log          log10(max(mel, 1e-10)) (rawFrames), floored at the largest value (of the chunk, or of the
//                whole clip) - 8, then (x + 4) / 4 (finishLogMel)
//
// Output [featureSize, numFrames] row-major (a row per mel bin), float32; computed in float64.

import { RealFft } from './fft';
import { logMelFrames, type LogMelConfig } from './log-mel-config';
import { slaneyMelFilters } from './mel-filters';

export { logMelConfigFrom, type LogMelConfig } from './log-mel-config';

const LOG_FLOOR = 1e-10;

/** Computes the features of chunks under one config; holds its FFT, window and filter bank. */
export class LogMelExtractor {
  readonly numFrames: number;
  private readonly fft: RealFft;
  private readonly window: Float64Array;
  private readonly filters: Float64Array;
  private readonly numBins: number;
  /** Per mel filter, the bins [first, end) where its triangle is not zero (a few of 1 + nFft / 2). */
  private readonly spans: Uint32Array;

  constructor(readonly config: LogMelConfig) {
    this.numFrames = logMelFrames(config);
    this.fft = new RealFft(config.nFft);
    // Periodic Hann: the symmetric window of nFft + 1 points without its last.
    this.window = new Float64Array(config.nFft);
    for (let i = 0; i < config.nFft; i++) this.window[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / config.nFft);
    this.numBins = 1 + Math.floor(config.nFft / 2);
    this.filters = slaneyMelFilters({ numMelFilters: config.featureSize, nFft: config.nFft, samplingRate: config.samplingRate });
    this.spans = new Uint32Array(2 * config.featureSize);
    for (let m = 0; m < config.featureSize; m++) {
      const row = this.filters.subarray(m * this.numBins, (m + 1) * this.numBins);
      const first = row.findIndex((w) => w !== 0);
      if (first < 0) continue; // an empty filter (more mel bins than the FFT resolves): [0, 0)
      this.spans[2 * m] = first;
      this.spans[2 * m + 1] = this.numBins - [...row].reverse().findIndex((w) => w !== 0);
    }
  }

  /** Samples before a chunk that its first frame reads (half a window). */
  get before(): number {
    return Math.floor(this.config.nFft / 2);
  }

  /** Samples after a chunk that its last frame reads (its window less what the hops cover). */
  get after(): number {
    const { nFft, hopLength, nSamples } = this.config;
    return Math.max(0, (this.numFrames - 1) * hopLength - this.before + nFft - nSamples);
  }

  /**
   * The features of one chunk on its own (at most nSamples samples; shorter ones are padded): its frames
   * reflect at the chunk's own edges and the floor is its own maximum - 8 (WhisperFeatureExtractor on the
   * chunk alone).
   */
  extract(pcm: Float32Array): Float32Array {
    const { nSamples, paddingValue } = this.config;
    if (pcm.length > nSamples) throw new RangeError(`a chunk holds at most ${nSamples} samples, got ${pcm.length}`);
    const half = this.before;
    // The padded chunk, reflect-padded by half a window at both ends (x[-i] = x[i], x[n-1+i] = x[n-1-i]).
    const sample = (i: number): number => {
      const j = i < 0 ? -i : i >= nSamples ? 2 * (nSamples - 1) - i : i;
      return j < pcm.length ? pcm[j] : paddingValue;
    };
    const window = new Float32Array(half + nSamples + this.after);
    for (let i = 0; i < window.length; i++) window[i] = sample(i - half);
    const raw = new Float64Array(this.config.featureSize * this.numFrames);
    const { max } = this.rawFrames(window, raw);
    return finishLogMel(raw, max - DYNAMIC_RANGE);
  }

  /**
   * log10 of the mel power of one chunk's frames, [featureSize, numFrames] into `out`, from `window`: the
   * samples its frames read, [chunk start - before, chunk end + after) of the (reflect-padded) signal.
   * Returns the smallest and largest value.
   */
  rawFrames(window: Float32Array, out: Float32Array | Float64Array): { min: number; max: number } {
    const { nFft, hopLength, featureSize } = this.config;
    if (window.length !== this.before + this.config.nSamples + this.after) {
      throw new RangeError(`a chunk's window holds ${this.before + this.config.nSamples + this.after} samples, got ${window.length}`);
    }
    const frame = new Float64Array(nFft);
    const re = new Float64Array(nFft);
    const im = new Float64Array(nFft);
    const power = new Float64Array(this.numBins);
    let min = Infinity;
    let max = -Infinity;
    for (let t = 0; t < this.numFrames; t++) {
      const start = t * hopLength;
      for (let i = 0; i < nFft; i++) frame[i] = window[start + i] * this.window[i];
      this.fft.transform(frame, re, im);
      for (let b = 0; b < this.numBins; b++) power[b] = re[b] * re[b] + im[b] * im[b];
      for (let m = 0; m < featureSize; m++) {
        const row = m * this.numBins;
        let s = 0;
        for (let b = this.spans[2 * m]; b < this.spans[2 * m + 1]; b++) s += this.filters[row + b] * power[b];
        const v = Math.log10(Math.max(s, LOG_FLOOR));
        out[m * this.numFrames + t] = v;
        if (v > max) max = v;
        if (v < min) min = v;
      }
    }
    return { min, max };
  }
}

/** Features from raw log10 mel values: floored at `floor`, then (x + 4) / 4, as float32. */
export function finishLogMel(raw: Float32Array | Float64Array, floor: number): Float32Array {
  const out = new Float32Array(raw.length);
  for (let i = 0; i < raw.length; i++) out[i] = (Math.max(raw[i], floor) + 4) / 4;
  return out;
}

/** How far below the clip's (or chunk's) largest log10 mel value the floor is. */
export const DYNAMIC_RANGE = 8;
