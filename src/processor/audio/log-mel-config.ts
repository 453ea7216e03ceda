// The settings of Whisper's feature extractor (preprocessor_config.json of a WhisperFeatureExtractor),
// checked. Apart from the extractor itself (log-mel.ts, which brings the FFT) so that the main thread, which
// only needs the chunk length, does not carry the FFT in its bundle.

import { ProcessorConfigError } from '../../errors';

export interface LogMelConfig {
  /** Mel bins (feature_size): 80 for Whisper up to large-v2, 128 for large-v3 and Voxtral. */
  featureSize: number;
  samplingRate: number;
  nFft: number;
  hopLength: number;
  /** Samples per chunk (n_samples = chunk_length * sampling_rate). */
  nSamples: number;
  paddingValue: number;
}

/** The fields of a WhisperFeatureExtractor preprocessor_config.json, checked; `where` names the file in errors. */
export function logMelConfigFrom(json: Record<string, unknown>, where: string): LogMelConfig {
  const int = (key: string, fallback?: number): number => {
    const v = json[key] ?? fallback;
    if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) {
      throw new ProcessorConfigError(`${where}: ${key} must be a positive integer, got ${JSON.stringify(json[key])}`);
    }
    return v;
  };
  const featureSize = int('feature_size', 80);
  const samplingRate = int('sampling_rate', 16000);
  const nFft = int('n_fft', 400);
  const hopLength = int('hop_length', 160);
  const chunkLength = int('chunk_length', 30);
  const nSamples = int('n_samples', chunkLength * samplingRate);
  const paddingValue = json.padding_value ?? 0;
  if (typeof paddingValue !== 'number' || !Number.isFinite(paddingValue)) {
    throw new ProcessorConfigError(`${where}: padding_value must be a finite number, got ${JSON.stringify(json.padding_value)}`);
  }
  const dither = json.dither ?? 0;
  if (dither !== 0) {
    throw new ProcessorConfigError(
      `${where}: dither = ${JSON.stringify(dither)} adds random noise to the features, which Tessera does not do (its features are deterministic); set it to 0.0`,
    );
  }
  if (nFft > nSamples) throw new ProcessorConfigError(`${where}: n_fft (${nFft}) is longer than a chunk (${nSamples} samples)`);
  if (nFft % 2 !== 0)
    throw new ProcessorConfigError(`${where}: n_fft must be even (a window of whole half-windows each side), got ${nFft}`);
  return { featureSize, samplingRate, nFft, hopLength, nSamples, paddingValue };
}

/** Frames per chunk: 1 + nSamples / hopLength frames of the reflect-padded chunk, less the last. */
export function logMelFrames(c: LogMelConfig): number {
  return Math.floor(c.nSamples / c.hopLength);
}
