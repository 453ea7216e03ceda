// An audio part in the encoder: decoded as a stream to mono at the feature extractor's rate, cut into
// chunks of n_samples (30 s), each chunk a media item of its own (docs/internals.md "Audio"):
//
//   source ─decode─► mono blocks ─► chunk 0 │ chunk 1 │ ... │ chunk k (zero-padded to 30 s)
//                                      │
//                                      ├─ key      blake3(chunk identity ‖ the chunk's f32 PCM, padding included)
//                                      └─ features log-mel [mel, frames], kept until encode or forget
//
// Nothing waits for the whole file: a chunk is keyed and featurized as soon as its samples are in, and
// decoding stops with AudioTooLongError at the first chunk past maxChunks (a 2-hour file is neither decoded
// whole nor held). Samples that are not finite (NaN PCM) are an AudioDecodeError naming where.

import { contentKey } from '../../cache/content-key';
import { AudioDecodeError, AudioTooLongError } from '../../errors';
import type { LogMelExtractor } from '../../processor/audio/log-mel';
import { StreamingResampler } from '../../processor/audio/resample';
import type { AudioPcm, AudioSource, PrepareAudioOptions, PreparedAudio, PreparedAudioChunk } from '../../protocol/encoder';
import type { AudioStreamInfo } from './decode-wav';

/** Decodes encoded audio bytes to mono blocks at targetRate (decode-node.ts in Node, decode-browser.ts in a worker). */
export type AudioDecodeFn = (
  bytes: Uint8Array,
  targetRate: number,
  options: { where?: string; onInfo?: (info: AudioStreamInfo) => void },
) => AsyncIterable<Float32Array>;

export interface PrepareAudioContext {
  extractor: LogMelExtractor;
  /** Everything a chunk's embeddings depend on besides its samples (encoder weights, dtype, feature config). */
  chunkIdentity: string;
  tokensPerChunk: number;
  /** Absent: only PCM sources are taken. */
  decode?: AudioDecodeFn;
  keep(key: string, features: Float32Array): void;
  drop(key: string): void;
}

/** Highest sampling rate taken for PCM (above any audio interface's). */
const MAX_PCM_RATE = 768000;
const PCM_BLOCK_FRAMES = 65536;

function isPcm(source: AudioSource): source is AudioPcm {
  return typeof source === 'object' && source !== null && !(source instanceof Uint8Array) && 'pcm' in source;
}

/** PCM given as samples: checked, averaged to mono and resampled in blocks. */
function* pcmBlocks(source: AudioPcm, targetRate: number): Generator<Float32Array> {
  const { pcm, sampleRate } = source;
  const channels = source.channels ?? 1;
  if (!(pcm instanceof Float32Array)) throw new AudioDecodeError('audio.pcm must be a Float32Array of samples in [-1, 1]');
  if (!Number.isInteger(sampleRate) || sampleRate < 1 || sampleRate > MAX_PCM_RATE) {
    throw new AudioDecodeError(`audio.sampleRate is ${sampleRate}; give the samples' rate in Hz, a whole number from 1 to ${MAX_PCM_RATE}`);
  }
  if (!Number.isInteger(channels) || channels < 1 || channels > 64) {
    throw new AudioDecodeError(`audio.channels is ${channels}; give a whole number of interleaved channels from 1 to 64`);
  }
  if (pcm.length % channels !== 0) {
    throw new AudioDecodeError(`audio.pcm holds ${pcm.length} samples, not a whole number of ${channels}-channel frames`);
  }
  const resampler = new StreamingResampler(sampleRate, targetRate);
  const frames = pcm.length / channels;
  for (let f0 = 0; f0 < frames; f0 += PCM_BLOCK_FRAMES) {
    const n = Math.min(PCM_BLOCK_FRAMES, frames - f0);
    const mono = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      let sum = 0;
      for (let c = 0; c < channels; c++) sum += pcm[(f0 + i) * channels + c];
      mono[i] = sum / channels;
    }
    yield resampler.push(mono);
  }
  yield resampler.flush();
}

export async function prepareAudio(ctx: PrepareAudioContext, source: AudioSource, options: PrepareAudioOptions): Promise<PreparedAudio> {
  const { extractor, tokensPerChunk } = ctx;
  const rate = extractor.config.samplingRate;
  const chunkSamples = extractor.config.nSamples;
  const maxChunks = Math.max(0, Math.floor(options.maxChunks));
  const t0 = performance.now();
  let info: AudioStreamInfo = { sampleRate: rate, channels: 1, format: 'pcm', decoder: 'wav' };
  let meta: Pick<PreparedAudio['meta'], 'format' | 'decoder'> = { format: 'pcm', decoder: 'pcm' };
  let blocks: AsyncIterable<Float32Array> | Iterable<Float32Array>;
  if (isPcm(source)) {
    blocks = pcmBlocks(source, rate);
    info = { sampleRate: source.sampleRate, channels: source.channels ?? 1, format: 'pcm', decoder: 'wav' };
  } else {
    const bytes = source instanceof Uint8Array ? source : new Uint8Array(await source.arrayBuffer());
    if (!ctx.decode) throw new AudioDecodeError('this encoder decodes no audio files; send the samples as { pcm, sampleRate }');
    blocks = ctx.decode(bytes, rate, {
      onInfo: (i) => {
        info = i;
        meta = { format: i.format, decoder: i.decoder };
      },
    });
  }
  const chunks: PreparedAudioChunk[] = [];
  let featuresMs = 0;
  let buffer = new Float32Array(chunkSamples);
  let filled = 0;
  let total = 0;
  const finish = async () => {
    if (filled < chunkSamples) buffer.fill(extractor.config.paddingValue, filled);
    const index = chunks.length;
    const f0 = performance.now();
    const key = await contentKey(ctx.chunkIdentity, new Uint8Array(buffer.buffer));
    ctx.keep(key, extractor.extract(buffer));
    featuresMs += performance.now() - f0;
    chunks.push({ media: { key, numTokens: tokensPerChunk }, index, start: (index * chunkSamples) / rate });
    buffer = new Float32Array(chunkSamples);
    filled = 0;
  };
  try {
    for await (const block of blocks) {
      for (let i = 0; i < block.length; ) {
        if (filled === 0 && chunks.length >= maxChunks) {
          throw new AudioTooLongError(total / rate, (maxChunks * chunkSamples) / rate, tokensPerChunk, options.contextWindow);
        }
        const n = Math.min(block.length - i, chunkSamples - filled);
        const part = block.subarray(i, i + n);
        for (let j = 0; j < n; j++) {
          if (!Number.isFinite(part[j])) {
            throw new AudioDecodeError(
              `the audio has a sample that is not a number (${part[j]}) at ${((total + j) / rate).toFixed(3)} s; send finite samples in [-1, 1]`,
            );
          }
        }
        buffer.set(part, filled);
        filled += n;
        total += n;
        i += n;
        if (filled === chunkSamples) await finish();
      }
    }
    if (total === 0) throw new AudioDecodeError('the audio holds no samples (0 seconds)');
    if (filled > 0) await finish();
  } catch (e) {
    for (const c of chunks) ctx.drop(c.media.key);
    throw e;
  }
  const decodeMs = performance.now() - t0 - featuresMs;
  return {
    meta: { duration: total / rate, sampleRate: info.sampleRate, channels: info.channels, ...meta },
    chunks,
    decodeMs,
    featuresMs,
  };
}
