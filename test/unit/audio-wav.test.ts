// WAV reading (src/processor/audio/wav.ts) against ffmpeg: the same clip written by ffmpeg in every sample
// format Tessera reads (and as WAVE_FORMAT_EXTENSIBLE, and with 3 channels), decoded by us and by ffmpeg
// (to float64, downmixed by averaging), must agree to the format's last bit. Broken files fail by name.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AudioDecodeError } from '../../src/errors';
import { readWavInfo, wavMonoBlocks } from '../../src/processor/audio/wav';
import { requireFfmpeg } from '../helpers/video';

let dir: string;
beforeAll(() => {
  requireFfmpeg();
  dir = mkdtempSync(join(tmpdir(), 'tessera-wav-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ffmpeg = (args: string[]) => execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...args]);

/** A 0.4 s clip of `channels` different tones at `rate`, written by ffmpeg as `codec` WAV. */
function writeClip(codec: string, rate: number, channels: number, extra: string[] = []): string {
  const path = join(dir, `${codec}-${rate}-${channels}${extra.length ? '-x' : ''}.wav`);
  const expr = Array.from({ length: channels }, (_, c) => `0.6*sin(2*PI*${220 * (c + 1)}*t)+0.2*sin(2*PI*3100*t)`).join('|');
  ffmpeg(['-f', 'lavfi', '-i', `aevalsrc=${expr}:s=${rate}:d=0.4`, '-c:a', codec, ...extra, path]);
  return path;
}

/** ffmpeg's own decoding of `path`: mono float64 (channels averaged). */
function ffmpegMono(path: string, channels: number): Float64Array {
  const raw = ffmpeg(['-i', path, '-f', 'f64le', '-c:a', 'pcm_f64le', '-']);
  const all = new Float64Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
  return Float64Array.from({ length: all.length / channels }, (_, i) => {
    let s = 0;
    for (let c = 0; c < channels; c++) s += all[i * channels + c];
    return s / channels;
  });
}

function ours(bytes: Uint8Array, block = 1000): Float32Array {
  const info = readWavInfo(bytes, 'clip.wav');
  return Float32Array.from([...wavMonoBlocks(bytes, info, block)].flatMap((b) => [...b]));
}

describe('WAV against ffmpeg', () => {
  for (const [codec, bits, tol] of [
    ['pcm_u8', 8, 1e-6],
    ['pcm_s16le', 16, 1e-6],
    ['pcm_s24le', 24, 1e-6],
    ['pcm_s32le', 32, 1e-6],
    ['pcm_f32le', 32, 1e-6],
    ['pcm_f64le', 64, 1e-6],
  ] as const) {
    it(`${codec}, stereo 44.1 kHz: same samples, in blocks`, () => {
      const path = writeClip(codec, 44100, 2);
      const bytes = new Uint8Array(readFileSync(path));
      const info = readWavInfo(bytes);
      expect([info.sampleRate, info.numChannels, info.bitsPerSample, info.numFrames]).toEqual([44100, 2, bits, 17640]);
      const got = ours(bytes);
      const want = ffmpegMono(path, 2);
      expect(got.length).toBe(want.length);
      let worst = 0;
      for (let i = 0; i < got.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
      expect(worst).toBeLessThan(tol);
    });
  }

  it('WAVE_FORMAT_EXTENSIBLE with 3 channels at 16 kHz', () => {
    const path = writeClip('pcm_s16le', 16000, 3);
    const bytes = new Uint8Array(readFileSync(path));
    expect(new DataView(bytes.buffer, bytes.byteOffset).getUint16(20, true)).toBe(0xfffe); // ffmpeg writes the extensible header for 3 channels
    const got = ours(bytes, 4096);
    const want = ffmpegMono(path, 3);
    let worst = 0;
    for (let i = 0; i < got.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
    expect(got.length).toBe(6400);
    expect(worst).toBeLessThan(1e-6);
  });
});

describe('broken WAV files fail by name', () => {
  const good = () => new Uint8Array(readFileSync(writeClip('pcm_s16le', 16000, 1)));

  it('not WAV, empty, a format it does not read, no data', () => {
    expect(() => readWavInfo(new Uint8Array(0))).toThrow(AudioDecodeError);
    expect(() => readWavInfo(new TextEncoder().encode('ID3 this is an mp3 file....'))).toThrow(/not a WAV file/);
    const alaw = new Uint8Array(readFileSync(writeClip('pcm_alaw', 8000, 1)));
    expect(() => readWavInfo(alaw)).toThrow(/WAV format 6 with 8-bit samples is not read here/);
    expect(() => readWavInfo(good().subarray(0, 40))).toThrow(AudioDecodeError);
  });

  it('cut off mid-data: the whole frames that are there', () => {
    const bytes = good();
    const info = readWavInfo(bytes);
    const cut = bytes.subarray(0, info.dataOffset + 2 * 1000 + 1);
    expect(readWavInfo(cut).numFrames).toBe(1000);
    expect(ours(cut).length).toBe(1000);
  });
});
