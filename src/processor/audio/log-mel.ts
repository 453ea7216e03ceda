// Whisper's log-mel features (WhisperFeatureExtractor, the audio front end of Whisper-encoder models such
// as Voxtral and Ultravox), for one chunk of mono PCM at the extractor's sampling rate:
//
//   pad / cut    the chunk to nSamples (chunk_length seconds) with padding_value, as the processor does
//   frames       reflect-pad nFft / 2 at both ends, a frame every hopLength samples: 1 + nSamples / hop
//   window       periodic Hann of nFft samples
//   power        |FFT|² of each windowed frame, its 1 + nFft / 2 bins; the last frame is dropped
//   mel          the Slaney filter bank (feature_size filters, 0 Hz to half the rate)
//   log          log10(max(mel, 1e-10)), floored at (its maximum over the chunk) - 8, then (x + 4) / 4
//
// Output [featureSize, numFrames] row-major (a row per mel bin), float32; computed in float64.

import { RealFft } from './fft';
import { logMelFrames, type LogMelConfig } from './log-mel-config';
import { slaneyMelFilters } from './mel-filters';

export { logMelConfigFrom, logMelFrames, type LogMelConfig } from './log-mel-config';

const LOG_FLOOR = 1e-10;
const DYNAMIC_RANGE = 8;

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

  /** The features of one chunk (at most nSamples samples; shorter ones are padded). */
  extract(pcm: Float32Array): Float32Array {
    const { nFft, hopLength, nSamples, featureSize, paddingValue } = this.config;
    if (pcm.length > nSamples) throw new RangeError(`a chunk holds at most ${nSamples} samples, got ${pcm.length}`);
    const half = Math.floor(nFft / 2);
    // The padded chunk, reflect-padded by half a window at both ends (x[-i] = x[i], x[n-1+i] = x[n-1-i]).
    const sample = (i: number): number => {
      const j = i < 0 ? -i : i >= nSamples ? 2 * (nSamples - 1) - i : i;
      return j < pcm.length ? pcm[j] : paddingValue;
    };
    const frame = new Float64Array(nFft);
    const re = new Float64Array(nFft);
    const im = new Float64Array(nFft);
    const power = new Float64Array(this.numBins);
    const mel = new Float64Array(featureSize * this.numFrames);
    let max = -Infinity;
    for (let t = 0; t < this.numFrames; t++) {
      const start = t * hopLength - half;
      for (let i = 0; i < nFft; i++) frame[i] = sample(start + i) * this.window[i];
      this.fft.transform(frame, re, im);
      for (let b = 0; b < this.numBins; b++) power[b] = re[b] * re[b] + im[b] * im[b];
      for (let m = 0; m < featureSize; m++) {
        const row = m * this.numBins;
        let s = 0;
        for (let b = this.spans[2 * m]; b < this.spans[2 * m + 1]; b++) s += this.filters[row + b] * power[b];
        const v = Math.log10(Math.max(s, LOG_FLOOR));
        mel[m * this.numFrames + t] = v;
        if (v > max) max = v;
      }
    }
    const out = new Float32Array(mel.length);
    const floor = max - DYNAMIC_RANGE;
    for (let i = 0; i < mel.length; i++) out[i] = (Math.max(mel[i], floor) + 4) / 4;
    return out;
  }
}
