// Audio decoding in Node, where there is no WebCodecs, streamed to mono PCM at the feature extractor's rate:
//   WAV        read here (src/processor/audio/wav.ts), no dependencies
//   the rest   an `ffmpeg` program (MP3, Ogg/Opus, FLAC, AAC/M4A, WebM, and the first audio track of a
//              video file): it decodes, and writes float32 WAV to a pipe at the file's own rate and channel
//              count, which this reads as it comes
// The channels are averaged into mono here in both cases (as librosa's to_mono does; ffmpeg's own
// downmix weighs stereo by 1/√2 each, a louder mix).
// Both go through the band-limited resampler (src/processor/audio/resample.ts), block by block, so a long
// recording is never held as float32 whole. No ffmpeg: FfmpegMissingError, which says what to install.
//
// ffmpeg reads a file (an M4A may keep its index at the end, which a pipe cannot seek to): the bytes are
// written once to a private temporary directory, removed when decoding ends or stops.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AudioDecodeError } from '../../errors';
import { StreamingResampler } from '../../processor/audio/resample';
import { isWav, readWavHeader } from '../../processor/audio/wav';
import { decodeWav, sniffAudioFormat, type AudioStreamInfo } from './decode-wav';
import { exactTrackEnd } from './track-end';
import { startFfmpeg } from '../ffmpeg-process';

export interface AudioDecodeOptions {
  /** The ffmpeg program (default 'ffmpeg' on PATH). */
  ffmpegPath?: string;
  signal?: AbortSignal;
  /** Names the input in errors (default 'the audio'). */
  where?: string;
  /** Told the source's own rate and channels once they are known (before the first block). */
  onInfo?: (info: AudioStreamInfo) => void;
}

/** The audio in `bytes` as mono float32 blocks at `targetRate` Hz. */
export async function* decodeAudioNode(
  bytes: Uint8Array,
  targetRate: number,
  options: AudioDecodeOptions = {},
): AsyncGenerator<Float32Array> {
  const where = options.where ?? 'the audio';
  if (bytes.length === 0) throw new AudioDecodeError(`${where} is empty (0 bytes)`);
  if (isWav(bytes)) {
    yield* decodeWav(bytes, targetRate, where, options.onInfo, options.signal);
    return;
  }
  // ffmpeg trims an MP4 edit list's priming and an MP3's LAME delay and padding, not an AAC track's last
  // padded frame: stop at the end the container states (track-end.ts).
  const end = await exactTrackEnd(bytes);
  yield* decodeWithFfmpeg(bytes, targetRate, options.ffmpegPath ?? 'ffmpeg', where, options.signal, end, (rate, channels) =>
    options.onInfo?.({ sampleRate: rate, channels, format: sniffAudioFormat(bytes), decoder: 'ffmpeg' }),
  );
}

async function* decodeWithFfmpeg(
  bytes: Uint8Array,
  targetRate: number,
  ffmpeg: string,
  where: string,
  signal: AbortSignal | undefined,
  endSeconds: number | undefined,
  onInfo: (sampleRate: number, channels: number) => void,
): AsyncGenerator<Float32Array> {
  signal?.throwIfAborted();
  const dir = await mkdtemp(join(tmpdir(), 'tessera-audio-'));
  const file = join(dir, 'input');
  let run: ReturnType<typeof startFfmpeg> | undefined;
  const onAbort = () => run?.kill();
  try {
    await writeFile(file, bytes);
    const args = ['-hide_banner', '-nostdin', '-v', 'error', '-i', file, '-map', '0:a:0', '-c:a', 'pcm_f32le', '-f', 'wav', 'pipe:1'];
    run = startFfmpeg(ffmpeg, args, 'audio');
    signal?.addEventListener('abort', onAbort, { once: true });
    let head: Uint8Array = new Uint8Array(0);
    let resampler: StreamingResampler | undefined;
    let channels = 1;
    let carry: Uint8Array = new Uint8Array(0); // the bytes of a sample frame split between two reads
    let samples = 0;
    let limit = Infinity; // source-rate frames to keep (the track's exact end)
    try {
      for await (const chunk of run.stdout as AsyncIterable<Buffer>) {
        let data = new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        if (!resampler) {
          head = concat(head, data);
          const header = readWavHeader(head, `ffmpeg's output for ${where}`);
          if (!header) continue;
          resampler = new StreamingResampler(header.sampleRate, targetRate);
          channels = header.numChannels;
          if (endSeconds !== undefined) limit = Math.round(endSeconds * header.sampleRate);
          onInfo(header.sampleRate, channels);
          data = head.subarray(header.dataOffset);
        }
        const all = concat(carry, data);
        const frameBytes = 4 * channels;
        const whole = all.length - (all.length % frameBytes);
        carry = all.slice(whole);
        if (whole === 0) continue;
        const interleaved = new Float32Array(all.buffer.slice(all.byteOffset, all.byteOffset + whole));
        const mono = new Float32Array(Math.max(0, Math.min(interleaved.length / channels, limit - samples)));
        if (mono.length === 0) continue;
        for (let i = 0; i < mono.length; i++) {
          let sum = 0;
          for (let c = 0; c < channels; c++) sum += interleaved[i * channels + c];
          mono[i] = sum / channels;
        }
        samples += mono.length;
        yield resampler.push(mono);
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
    const code = await run.exited;
    signal?.throwIfAborted();
    if (code !== 0) {
      const why = run.why();
      if (/matches no streams|does not contain any stream/i.test(why)) {
        throw new AudioDecodeError(`${where} has no audio track (ffmpeg: ${why})`);
      }
      throw new AudioDecodeError(
        `ffmpeg could not decode ${where} (exit code ${code}: ${why}); the file may be cut short, damaged, or not audio.`,
      );
    }
    if (!resampler || samples === 0) throw new AudioDecodeError(`${where} holds no audio samples`);
    yield resampler.flush();
  } finally {
    run?.kill(); // a consumer that stopped early leaves ffmpeg running otherwise
    await rm(dir, { recursive: true, force: true });
  }
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b;
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** decodeAudioNode as an encoder's audio decoder (EncoderCoreDeps.decodeAudio), with the engine's ffmpeg. */
export function nodeAudioDecoder(ffmpegPath: string | undefined) {
  return (bytes: Uint8Array, targetRate: number, options: Omit<AudioDecodeOptions, 'ffmpegPath'>) =>
    decodeAudioNode(bytes, targetRate, { ...options, ffmpegPath });
}
