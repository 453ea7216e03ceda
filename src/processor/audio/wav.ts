// WAV (RIFF/WAVE) without dependencies: integer PCM of 8 (unsigned), 16, 24 or 32 bits and IEEE float of
// 32 or 64 bits, plain or WAVE_FORMAT_EXTENSIBLE, any channel count, read as mono float32 in blocks (the
// channels averaged), so a long file is converted a block at a time rather than as one float32 array.
// Chunks other than `fmt ` and `data` are skipped (their odd sizes padded, as RIFF says).

import { AudioDecodeError } from '../../errors';

export interface WavInfo {
  sampleRate: number;
  numChannels: number;
  /** Bits per sample as stored. */
  bitsPerSample: number;
  encoding: 'int' | 'float';
  /** Sample frames (one sample of every channel) in the data chunk. */
  numFrames: number;
  /** Where the data chunk's samples start in the file. */
  dataOffset: number;
}

const FORMAT_PCM = 1;
const FORMAT_FLOAT = 3;
const FORMAT_EXTENSIBLE = 0xfffe;

const ascii = (b: Uint8Array, at: number) => String.fromCharCode(b[at], b[at + 1], b[at + 2], b[at + 3]);

/** The format, and where the data chunk's samples start. */
export type WavHeader = Omit<WavInfo, 'numFrames'> & {
  /** The data chunk's size as its header says (a streamed file's may be a placeholder). */
  declaredDataBytes: number;
};

/** True when `bytes` starts as a WAV file does. */
export function isWav(bytes: Uint8Array): boolean {
  return bytes.length >= 12 && ascii(bytes, 0) === 'RIFF' && ascii(bytes, 8) === 'WAVE';
}

/**
 * The header of a WAV file from its first bytes, or undefined while they do not reach the data chunk's
 * header yet (a stream: read more and ask again). `where` names the input in errors.
 */
export function readWavHeader(bytes: Uint8Array, where = 'the audio'): WavHeader | undefined {
  if (bytes.length < 12) return undefined;
  if (!isWav(bytes)) throw new AudioDecodeError(`${where} is not a WAV file (no RIFF/WAVE header in its first 12 bytes)`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let fmt: Omit<WavInfo, 'numFrames' | 'dataOffset'> | undefined;
  for (let at = 12; at + 8 <= bytes.length; ) {
    const id = ascii(bytes, at);
    const size = view.getUint32(at + 4, true);
    const body = at + 8;
    if (id === 'fmt ') {
      if (body + size > bytes.length) return undefined;
      if (size < 16) throw new AudioDecodeError(`${where}: its fmt chunk is cut short (${size} bytes)`);
      let format = view.getUint16(body, true);
      if (format === FORMAT_EXTENSIBLE && size >= 40) format = view.getUint16(body + 24, true); // the sub-format GUID's first field
      const numChannels = view.getUint16(body + 2, true);
      const sampleRate = view.getUint32(body + 4, true);
      const bitsPerSample = view.getUint16(body + 14, true);
      const int = format === FORMAT_PCM && [8, 16, 24, 32].includes(bitsPerSample);
      const float = format === FORMAT_FLOAT && (bitsPerSample === 32 || bitsPerSample === 64);
      if (!int && !float) {
        throw new AudioDecodeError(
          `${where}: WAV format ${format} with ${bitsPerSample}-bit samples is not read here (integer PCM of 8, 16, 24 or 32 bits, or float of 32 or 64); convert it, e.g. ffmpeg -i in.wav -c:a pcm_s16le out.wav`,
        );
      }
      if (numChannels < 1 || sampleRate < 1) {
        throw new AudioDecodeError(`${where}: the fmt chunk says ${numChannels} channels at ${sampleRate} Hz`);
      }
      fmt = { sampleRate, numChannels, bitsPerSample, encoding: int ? 'int' : 'float' };
    } else if (id === 'data') {
      if (!fmt) throw new AudioDecodeError(`${where}: the data chunk comes before any fmt chunk`);
      return { ...fmt, dataOffset: body, declaredDataBytes: size };
    }
    at = body + size + (size % 2);
  }
  return undefined;
}

/** The format and where the samples are, for a whole file in memory; `where` names the input in errors. */
export function readWavInfo(bytes: Uint8Array, where = 'the audio'): WavInfo {
  if (!isWav(bytes)) throw new AudioDecodeError(`${where} is not a WAV file (no RIFF/WAVE header in its first 12 bytes)`);
  const header = readWavHeader(bytes, where);
  if (!header) throw new AudioDecodeError(`${where}: no data chunk (the file is cut short, or not a WAV file)`);
  const { declaredDataBytes, ...info } = header;
  const frameBytes = (info.bitsPerSample / 8) * info.numChannels;
  // A size past the end (a recording cut off, or a streamed header's placeholder) keeps the whole frames there.
  const available = Math.min(declaredDataBytes, bytes.length - info.dataOffset);
  const numFrames = Math.floor(available / frameBytes);
  if (numFrames === 0) throw new AudioDecodeError(`${where} holds no audio (its data chunk has no whole sample frame)`);
  return { ...info, numFrames };
}

/** The samples as mono float32 in [-1, 1], `blockFrames` frames at a time (the last block may be shorter). */
export function* wavMonoBlocks(bytes: Uint8Array, info: WavInfo, blockFrames = 65536): Generator<Float32Array> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const bytesPer = info.bitsPerSample / 8;
  const read = sampleReader(view, info);
  const scale = 1 / info.numChannels;
  for (let f0 = 0; f0 < info.numFrames; f0 += blockFrames) {
    const n = Math.min(blockFrames, info.numFrames - f0);
    const out = new Float32Array(n);
    let at = info.dataOffset + f0 * bytesPer * info.numChannels;
    for (let i = 0; i < n; i++) {
      let sum = 0;
      for (let c = 0; c < info.numChannels; c++, at += bytesPer) sum += read(at);
      out[i] = sum * scale;
    }
    yield out;
  }
}

function sampleReader(view: DataView, info: WavInfo): (at: number) => number {
  if (info.encoding === 'float') return info.bitsPerSample === 32 ? (at) => view.getFloat32(at, true) : (at) => view.getFloat64(at, true);
  switch (info.bitsPerSample) {
    case 8:
      return (at) => (view.getUint8(at) - 128) / 128;
    case 16:
      return (at) => view.getInt16(at, true) / 32768;
    case 24:
      return (at) => (view.getUint8(at) | (view.getUint8(at + 1) << 8) | (view.getInt8(at + 2) << 16)) / 8388608;
    default:
      return (at) => view.getInt32(at, true) / 2147483648;
  }
}
