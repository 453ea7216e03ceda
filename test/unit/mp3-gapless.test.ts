// The gapless trim an MP3's LAME tag asks for (src/encoder/audio/mp3-gapless.ts), on files ffmpeg's LAME
// encoder writes: MPEG-1 stereo and MPEG-2 mono (frames of 1152 and 576 samples), behind an ID3v2 tag;
// what is kept is exactly the samples that were encoded. A file without the tag gives nothing to trim by.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MP3_DECODER_DELAY, mp3Gapless } from '../../src/encoder/audio/mp3-gapless';

const dir = mkdtempSync(join(tmpdir(), 'tessera-mp3-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function mp3(name: string, rate: number, channels: number, seconds: number, extra: string[] = []): Uint8Array {
  const path = join(dir, name);
  execFileSync('ffmpeg', [
    '-v',
    'error',
    '-y',
    '-f',
    'lavfi',
    '-i',
    `sine=frequency=440:duration=${seconds}:sample_rate=${rate}`,
    '-ac',
    String(channels),
    '-c:a',
    'libmp3lame',
    ...extra,
    path,
  ]);
  return new Uint8Array(readFileSync(path));
}

describe('mp3Gapless', () => {
  it('keeps exactly the encoded samples of MPEG-1 stereo and MPEG-2 mono files, skipping the encoder and decoder delays', () => {
    for (const [rate, channels, seconds] of [
      [44100, 2, 3],
      [22050, 1, 2.5],
    ] as const) {
      const bytes = mp3(`tone-${rate}.mp3`, rate, channels, seconds);
      expect(String.fromCharCode(...bytes.subarray(0, 3))).toBe('ID3'); // the tag is skipped
      const g = mp3Gapless(bytes)!;
      expect(g.keep).toBe(Math.round(rate * seconds));
      // LAME's own delay is 576 samples; every decoder adds its 529.
      expect(g.skip).toBe(576 + MP3_DECODER_DELAY);
    }
  });

  it('gives nothing to trim by for a file without a Xing/Info tag, or bytes that are not MP3', () => {
    expect(mp3Gapless(mp3('plain.mp3', 44100, 1, 1, ['-write_xing', '0']))).toBeUndefined();
    expect(mp3Gapless(new TextEncoder().encode('not an mp3 at all'))).toBeUndefined();
    expect(mp3Gapless(new Uint8Array(0))).toBeUndefined();
  });
});
