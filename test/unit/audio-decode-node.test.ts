// Audio decoding in Node (src/encoder/audio/decode-node.ts): WAV read here, the rest through ffmpeg, both
// streamed to mono 16 kHz. A lossless file must give the tone sampled at 16 kHz (within the 16-bit
// quantization and the resampler's error); lossy ones the same tone (its length, level and pitch); a video
// file its first audio track; files without audio, broken files and a missing ffmpeg fail by name.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeAudioNode } from '../../src/encoder/audio/decode-node';
import { AudioDecodeError, FfmpegMissingError } from '../../src/errors';
import { RealFft } from '../../src/processor/audio/fft';
import { requireFfmpeg } from '../helpers/video';

let dir: string;
beforeAll(() => {
  requireFfmpeg();
  dir = mkdtempSync(join(tmpdir(), 'tessera-audio-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ffmpeg = (args: string[]) => execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-y', ...args]);

/** 1.5 s of a 440 Hz tone (amplitude 0.5) at 44.1 kHz, stereo, encoded by ffmpeg into `name`. */
function toneFile(name: string, codecArgs: string[]): Uint8Array {
  const path = join(dir, name);
  ffmpeg(['-f', 'lavfi', '-i', 'aevalsrc=0.5*sin(2*PI*440*t)|0.5*sin(2*PI*440*t):s=44100:d=1.5', ...codecArgs, path]);
  return new Uint8Array(readFileSync(path));
}

async function decodeAll(bytes: Uint8Array, options = {}): Promise<Float32Array> {
  const parts: Float32Array[] = [];
  for await (const b of decodeAudioNode(bytes, 16000, options)) parts.push(b);
  return Float32Array.from(parts.flatMap((p) => [...p]));
}

const tone16k = (n: number) => Float32Array.from({ length: n }, (_, i) => 0.5 * Math.sin((2 * Math.PI * 440 * i) / 16000));

/** The strongest frequency in the middle 8192 samples at 16 kHz (1.95 Hz bins). */
function peakHz(x: Float32Array): number {
  const n = 8192;
  const start = Math.floor((x.length - n) / 2);
  const re = new Float64Array(n / 2 + 1);
  const im = new Float64Array(n / 2 + 1);
  new RealFft(n).transform(x.subarray(start, start + n), re, im);
  let best = 0;
  for (let k = 1; k <= n / 2; k++) if (re[k] ** 2 + im[k] ** 2 > re[best] ** 2 + im[best] ** 2) best = k;
  return (best * 16000) / n;
}

const rms = (x: Float32Array) => Math.sqrt(x.reduce((a, v) => a + v * v, 0) / x.length);

describe('audio in Node, to mono 16 kHz', () => {
  for (const [name, args] of [
    ['tone.wav', ['-c:a', 'pcm_s16le']],
    ['tone.flac', ['-c:a', 'flac']],
  ] as const) {
    it(`${name} (lossless): the tone sampled at 16 kHz, within 1e-4`, async () => {
      const got = await decodeAll(toneFile(name, [...args]));
      expect(got.length).toBe(24000);
      const want = tone16k(got.length);
      let worst = 0;
      for (let i = 200; i < got.length - 200; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
      expect(worst).toBeLessThan(1e-4);
    });
  }

  for (const [name, args] of [
    ['tone.mp3', ['-c:a', 'libmp3lame', '-b:a', '128k']],
    ['tone.ogg', ['-c:a', 'libopus', '-b:a', '64k']],
    ['tone.m4a', ['-c:a', 'aac', '-b:a', '128k']],
  ] as const) {
    it(`${name} (lossy): 1.5 s of the 440 Hz tone at its level`, async () => {
      const got = await decodeAll(toneFile(name, [...args]));
      expect(Math.abs(got.length - 24000)).toBeLessThan(1200); // codec padding, at most 75 ms
      expect(peakHz(got)).toBeCloseTo(440, -1);
      expect(rms(got.subarray(4000, 20000))).toBeCloseTo(0.5 / Math.SQRT2, 1);
    });
  }

  it('a video file: its first audio track', async () => {
    const path = join(dir, 'clip.mp4');
    ffmpeg([
      '-f',
      'lavfi',
      '-i',
      'testsrc=s=64x48:d=1.5:r=10',
      '-f',
      'lavfi',
      '-i',
      'aevalsrc=0.5*sin(2*PI*440*t):s=22050:d=1.5',
      '-c:v',
      'libx264',
      '-pix_fmt',
      'yuv420p',
      '-c:a',
      'aac',
      '-shortest',
      path,
    ]);
    const got = await decodeAll(new Uint8Array(readFileSync(path)));
    expect(Math.abs(got.length - 24000)).toBeLessThan(1200);
    expect(peakHz(got)).toBeCloseTo(440, -1);
  });

  it('no audio track, empty, damaged, no ffmpeg: named errors', async () => {
    const path = join(dir, 'silent.mp4');
    ffmpeg(['-f', 'lavfi', '-i', 'testsrc=s=64x48:d=0.5:r=10', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', path]);
    await expect(decodeAll(new Uint8Array(readFileSync(path)), { where: 'silent.mp4' })).rejects.toThrow(/silent.mp4 has no audio track/);
    await expect(decodeAll(new Uint8Array(0))).rejects.toThrow(AudioDecodeError);
    await expect(decodeAll(new TextEncoder().encode('not audio at all, just some text'))).rejects.toThrow(AudioDecodeError);
    const mp3 = toneFile('cut.mp3', ['-c:a', 'libmp3lame']);
    await expect(decodeAll(mp3, { ffmpegPath: '/nonexistent/ffmpeg' })).rejects.toThrow(FfmpegMissingError);
    await expect(decodeAll(mp3, { ffmpegPath: '/nonexistent/ffmpeg' })).rejects.toThrow(/decoding audio other than WAV/);
  });

  it('a stop (AbortSignal) ends decoding', async () => {
    const ac = new AbortController();
    ac.abort();
    await expect(decodeAll(toneFile('stop.flac', ['-c:a', 'flac']), { signal: ac.signal })).rejects.toMatchObject({ name: 'AbortError' });
    await expect(decodeAll(toneFile('stop.wav', ['-c:a', 'pcm_s16le']), { signal: ac.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });
  });
});
