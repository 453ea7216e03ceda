// Audio parts of OpenAI-style messages -> what the encoder takes (protocol AudioSource):
//   { type: 'input_audio', input_audio: { data: base64, format: 'wav' | 'mp3' } }   (OpenAI's)
//   { type: 'audio', audio: bytes | Blob | File | { pcm: Float32Array, sampleRate, channels? } }
//   { type: 'audio_url', audio_url: { url } }                                       (vLLM's)
// Sizes are measured against media.maxAudioBytes before anything is decoded; URLs go through
// fetch-media.ts (the request's signal, a timeout, the byte cap, optionally no private hosts). As for
// images, nothing about identity comes from a URL or a name: chunk keys hash the decoded samples.

import { InvalidMessageError } from '../../errors';
import type { AudioSource } from '../../protocol/encoder';
import { base64Bytes, dataUrlBytes } from './data-url';
import { audioFetchLimit, fetchMedia } from './fetch-media';
import type { MediaPolicy } from './media-options';

const FORMATS = ['wav', 'mp3', 'flac', 'ogg', 'opus', 'm4a', 'aac', 'webm', 'mp4'];

function sizeOf(v: unknown): number | undefined {
  if (v instanceof Uint8Array || v instanceof ArrayBuffer) return v.byteLength;
  if (ArrayBuffer.isView(v)) return v.byteLength;
  if (typeof Blob !== 'undefined' && v instanceof Blob) return v.size;
  return undefined;
}

function tooLarge(where: string, size: number, policy: MediaPolicy): InvalidMessageError {
  return new InvalidMessageError(
    `${where} is ${size} bytes, over media.maxAudioBytes (${policy.maxAudioBytes}); send a shorter or smaller recording.`,
  );
}

/** An `audio` part's payload; `where` names the part in errors. */
export function audioSourceOf(audio: unknown, where: string, policy: MediaPolicy): AudioSource {
  const size = sizeOf(audio);
  if (size !== undefined && size > policy.maxAudioBytes) throw tooLarge(`${where}.audio`, size, policy);
  if (audio instanceof Uint8Array) return audio;
  if (audio instanceof ArrayBuffer) return new Uint8Array(audio);
  if (ArrayBuffer.isView(audio) && !(audio instanceof Float32Array))
    return new Uint8Array(audio.buffer, audio.byteOffset, audio.byteLength);
  if (typeof Blob !== 'undefined' && audio instanceof Blob) return audio;
  const pcm = audio as { pcm?: unknown; sampleRate?: unknown; channels?: unknown } | null;
  if (pcm && typeof pcm === 'object' && 'pcm' in pcm) {
    if (!(pcm.pcm instanceof Float32Array))
      throw new InvalidMessageError(`${where}.audio.pcm must be a Float32Array of samples in [-1, 1].`);
    if (typeof pcm.sampleRate !== 'number') throw new InvalidMessageError(`${where}.audio.sampleRate must be the samples' rate in Hz.`);
    if (pcm.pcm.byteLength > policy.maxAudioBytes) throw tooLarge(`${where}.audio.pcm`, pcm.pcm.byteLength, policy);
    return { pcm: pcm.pcm, sampleRate: pcm.sampleRate, ...(pcm.channels !== undefined ? { channels: pcm.channels as number } : {}) };
  }
  throw new InvalidMessageError(
    `${where}.audio must be audio file bytes (Uint8Array/ArrayBuffer), a Blob/File, or { pcm: Float32Array, sampleRate, channels? }.`,
  );
}

/** OpenAI's input_audio: base64 data and its format. */
export function inputAudioBytes(part: unknown, where: string, policy: MediaPolicy): Uint8Array {
  const input = (part as { input_audio?: { data?: unknown; format?: unknown } }).input_audio;
  if (!input || typeof input !== 'object') throw new InvalidMessageError(`${where}.input_audio must be { data: base64, format }.`);
  if (typeof input.data !== 'string') throw new InvalidMessageError(`${where}.input_audio.data must be the audio file as a base64 string.`);
  if (input.format !== undefined && (typeof input.format !== 'string' || !FORMATS.includes(input.format))) {
    throw new InvalidMessageError(`${where}.input_audio.format is ${JSON.stringify(input.format)}; use one of ${FORMATS.join(', ')}.`);
  }
  const bound = Math.floor((input.data.replace(/[\t\n\f\r =]/g, '').length * 3) / 4);
  if (bound > policy.maxAudioBytes) throw tooLarge(`${where}.input_audio.data`, bound, policy);
  // The container is read from the bytes themselves; format only has to be one Tessera reads.
  return base64Bytes(input.data, `${where}.input_audio.data`);
}

/** vLLM's audio_url: a data: URL's payload, or an http(s)/blob: download under the media policy. */
export async function audioUrlBytes(
  part: unknown,
  where: string,
  policy: MediaPolicy,
  signal: AbortSignal | undefined,
): Promise<Uint8Array> {
  const ref = (part as { audio_url?: unknown }).audio_url;
  const url = typeof ref === 'string' ? ref : (ref as { url?: unknown } | null)?.url;
  if (typeof url !== 'string') throw new InvalidMessageError(`${where}.audio_url.url must be a string.`);
  if (/^data:/i.test(url)) return dataUrlBytes(url, policy.maxAudioBytes, `${where}.audio_url.url`, 'audio');
  return fetchMedia(url, policy, signal, audioFetchLimit(policy));
}
