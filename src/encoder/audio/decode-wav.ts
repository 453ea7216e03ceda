// The WAV path of both audio decoders (decode-node.ts, decode-browser.ts): read here, no decoder needed,
// channels averaged into mono, then the band-limited resampler, block by block. And what a decoder reports
// about its source.

import { StreamingResampler } from '../../processor/audio/resample';
import { isWav, readWavInfo, wavMonoBlocks } from '../../processor/audio/wav';

/** What a decoder learns about its source. */
export interface AudioStreamInfo {
  sampleRate: number;
  channels: number;
  /** 'wav', or the container found in the bytes ('mp3', 'ogg', 'flac', 'mp4', 'webm', ...). */
  format: string;
  decoder: 'wav' | 'ffmpeg' | 'webcodecs';
}

/** The container of audio bytes from their first bytes (for reports; ffmpeg probes on its own). */
export function sniffAudioFormat(bytes: Uint8Array): string {
  const ascii = (o: number, n: number) => String.fromCharCode(...bytes.subarray(o, o + n));
  if (isWav(bytes)) return 'wav';
  if (ascii(0, 4) === 'OggS') return 'ogg';
  if (ascii(0, 4) === 'fLaC') return 'flac';
  if (ascii(4, 4) === 'ftyp') return 'mp4';
  if (bytes[0] === 0x1a && bytes[1] === 0x45 && bytes[2] === 0xdf && bytes[3] === 0xa3) return 'webm';
  if (ascii(0, 3) === 'ID3' || (bytes[0] === 0xff && (bytes[1] & 0xe0) === 0xe0))
    return bytes[1] === 0xf1 || bytes[1] === 0xf9 ? 'aac' : 'mp3';
  return 'unknown';
}

/** A WAV file's samples as mono float32 blocks at `targetRate` Hz. */
export function* decodeWav(
  bytes: Uint8Array,
  targetRate: number,
  where: string,
  onInfo: ((info: AudioStreamInfo) => void) | undefined,
  signal?: AbortSignal,
): Generator<Float32Array> {
  const info = readWavInfo(bytes, where);
  onInfo?.({ sampleRate: info.sampleRate, channels: info.numChannels, format: 'wav', decoder: 'wav' });
  const resampler = new StreamingResampler(info.sampleRate, targetRate);
  for (const block of wavMonoBlocks(bytes, info)) {
    signal?.throwIfAborted();
    yield resampler.push(block);
  }
  yield resampler.flush();
}
