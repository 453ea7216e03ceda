// An audio part in the encoder: decoded as a stream to mono at the feature extractor's rate, cut into
// chunks of n_samples (30 s), each chunk a media item of its own (docs/internals.md "Audio"). Two ways to
// make a chunk's log-mel features (PrepareAudioOptions.features):
//
//   whole-clip (default)  as HF's VoxtralProcessor and vLLM do: the log-mel of the whole clip, zero-padded to
//                         whole chunks, cut into chunks. A chunk's frames read the samples [its start - 200,
//                         its end + 40) (n_fft / 2 before; the last frame's window past the end), reflected at
//                         the clip's two ends, and the floor is the clip's largest value - 8. Its key names
//                         exactly that:
//                           key = blake3(clip-chunk identity ‖ blake3(window samples) ‖ the floor, or
//                                        "unclamped" when no value of the chunk is below it)
//                         so a hit is always what a fresh encode gives, and a recording that grows keeps a
//                         chunk whenever its window did not change and the floor did not move (or does not
//                         touch it). Features are final only when the clip has ended (the floor).
//   per-chunk             each chunk's log-mel on its own (reflected at its own edges, its own floor): keyed by
//                         the chunk's PCM and featurized as soon as its samples are in, for live streaming; it
//                         departs from the references at every chunk edge and wherever the clip's floor would
//                         have clamped differently (docs/internals.md says by how much).
//
// Decoding stops with AudioTooLongError at the first chunk past maxChunks (a 2-hour file is neither decoded
// whole nor held). Samples that are not finite (NaN PCM) are an AudioDecodeError naming where.

import { checksum, contentKey } from '../../cache/content-key';
import { AudioDecodeError, AudioTooLongError } from '../../errors';
import { DYNAMIC_RANGE, finishLogMel, type LogMelExtractor } from '../../processor/audio/log-mel';
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
  /** Everything a per-chunk feature chunk's embeddings depend on besides its samples (encoder weights, dtype, feature config). */
  chunkIdentity: string;
  /** The same for a chunk of a whole-clip log-mel (its key then names its window and the clip's floor). */
  clipChunkIdentity: string;
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
  const features = options.features ?? 'whole-clip';
  const chunks: PreparedAudioChunk[] = [];
  const cut = features === 'per-chunk' ? perChunk(ctx) : wholeClip(ctx);
  let featuresMs = 0;
  let buffer = new Float32Array(chunkSamples);
  let filled = 0;
  let total = 0;
  const timed = async (work: () => Promise<void>) => {
    const f0 = performance.now();
    await work();
    featuresMs += performance.now() - f0;
  };
  try {
    for await (const block of blocks) {
      for (let i = 0; i < block.length; ) {
        if (filled === 0 && cut.count() >= maxChunks) {
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
        await timed(() => cut.samples(buffer, filled));
        if (filled === chunkSamples) {
          await timed(() => cut.chunk(buffer, filled));
          buffer = new Float32Array(chunkSamples);
          filled = 0;
        }
      }
    }
    if (total === 0) throw new AudioDecodeError('the audio holds no samples (0 seconds)');
    if (filled > 0) await timed(() => cut.chunk(buffer.fill(extractor.config.paddingValue, filled), filled));
    await timed(async () => {
      for (const [index, key] of (await cut.end()).entries()) {
        chunks.push({ media: { key, numTokens: tokensPerChunk }, index, start: (index * chunkSamples) / rate });
      }
    });
  } catch (e) {
    for (const key of cut.kept()) ctx.drop(key);
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

/** How an audio part's samples become keyed chunk features. */
interface ChunkCutter {
  /** Chunks completed so far. */
  count(): number;
  /** The chunk being filled now holds `filled` samples (`buffer`'s start). */
  samples(buffer: Float32Array, filled: number): Promise<void>;
  /** A chunk is complete: `buffer` (padded to a whole chunk), of which `filled` samples are the clip's. */
  chunk(buffer: Float32Array, filled: number): Promise<void>;
  /** The clip has ended: every chunk's key, in order (its features kept under it). */
  end(): Promise<string[]>;
  /** Keys kept so far (dropped again if the part fails). */
  kept(): string[];
}

/** Each chunk's features on its own, keyed by its PCM as soon as it is complete. */
function perChunk(ctx: PrepareAudioContext): ChunkCutter {
  const keys: string[] = [];
  return {
    count: () => keys.length,
    samples: async () => {},
    chunk: async (buffer) => {
      const key = await contentKey(ctx.chunkIdentity, new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength));
      ctx.keep(key, ctx.extractor.extract(buffer));
      keys.push(key);
    },
    end: async () => keys,
    kept: () => keys,
  };
}

/** A complete chunk waiting for the samples after it that its last frame reads. */
interface Waiting {
  samples: Float32Array;
  /** The `before` samples ahead of it (the previous chunk's last ones), or undefined for the first chunk. */
  ahead: Float32Array | undefined;
}

/**
 * A chunk of a whole-clip log-mel: its raw log10 mel values (float64 until the clip's floor is known, as the
 * references compute them) and the digest of the window they read.
 */
interface ClipChunk {
  raw: Float64Array;
  min: number;
  max: number;
  windowDigest: string;
}

/**
 * The whole clip's log-mel cut into chunks: a chunk's raw values as soon as the samples after it are in
 * (or the clip ends), its features and key when the clip ends (the floor is the clip's).
 */
function wholeClip(ctx: PrepareAudioContext): ChunkCutter {
  const { extractor } = ctx;
  const { nSamples: N, paddingValue } = extractor.config;
  const before = extractor.before;
  const after = extractor.after;
  const done: ClipChunk[] = [];
  const keys: string[] = [];
  let waiting: Waiting | undefined;
  let numChunks = 0;
  let lastTail: Float32Array | undefined;

  /** Raw values of a chunk from the samples ahead of it, its own and the `after` samples past it. */
  const compute = async (w: Waiting, next: (j: number) => number) => {
    const window = new Float32Array(before + N + after);
    // Ahead of the first chunk, the clip reflects: x[-j] = x[j].
    for (let j = 0; j < before; j++) window[j] = w.ahead ? w.ahead[j] : w.samples[before - j];
    window.set(w.samples, before);
    for (let j = 0; j < after; j++) window[before + N + j] = next(j);
    const raw = new Float64Array(extractor.config.featureSize * extractor.numFrames);
    const { min, max } = extractor.rawFrames(window, raw);
    done.push({ raw, min, max, windowDigest: await checksum(window) });
  };

  return {
    count: () => numChunks,
    samples: async (buffer, filled) => {
      // The chunk before this one can be computed once the samples its last frame reads are in.
      if (waiting && filled >= after) {
        const w = waiting;
        waiting = undefined;
        await compute(w, (j) => buffer[j]);
      }
    },
    chunk: async (buffer, filled) => {
      numChunks++;
      if (waiting) {
        // The clip ended within `after` samples of the chunk before: past its end, padding.
        const w = waiting;
        waiting = undefined;
        await compute(w, (j) => (j < filled ? buffer[j] : paddingValue));
      }
      waiting = { samples: buffer.slice(), ahead: lastTail };
      lastTail = buffer.slice(N - before);
    },
    end: async () => {
      if (waiting) {
        // The last chunk: past the padded clip's end, reflected (x[P - 1 + j] = x[P - 1 - j]).
        const w = waiting;
        waiting = undefined;
        await compute(w, (j) => w.samples[N - 2 - j]);
      }
      const floor = Math.max(...done.map((c) => c.max)) - DYNAMIC_RANGE;
      for (const c of done) {
        const clamps = floor > c.min;
        const key = await contentKey(
          ctx.clipChunkIdentity,
          new TextEncoder().encode(`${c.windowDigest}\0${clamps ? `floor ${floorBits(floor)}` : 'unclamped'}`),
        );
        ctx.keep(key, finishLogMel(c.raw, clamps ? floor : -Infinity));
        keys.push(key);
      }
      return keys;
    },
    kept: () => keys,
  };
}

/** The floor's exact float64 bits, as hex (the key must name the value, not a rounding of it). */
function floorBits(floor: number): string {
  const bytes = new Uint8Array(new Float64Array([floor]).buffer);
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}
