// The transformers.js peer's input files (bench/audio/audio-peer.ts), made by the driver in Node.

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The peer's input: transformers.js takes PCM, so ffmpeg decodes the same MP3 (and the two WAVs) to
 * 16 kHz mono little-endian f32 here, in Node, outside its timings.
 */
export function makePeerPcm(dir: string): void {
  // -t: the source's length, so an MP3's trailing frame padding cannot make a second 30 s chunk.
  for (const [from, to, seconds] of [
    ['clip-30s.mp3', 'clip-30s-16k.f32', '30'],
    ['warm-2s.wav', 'warm-2s-16k.f32', '2'],
    ['rec-30s.wav', 'rec-30s-16k.f32', '30'],
  ]) {
    if (existsSync(join(dir, to))) continue;
    execFileSync('ffmpeg', [
      '-hide_banner',
      '-loglevel',
      'error',
      '-i',
      join(dir, from),
      '-t',
      seconds,
      '-ac',
      '1',
      '-ar',
      '16000',
      '-f',
      'f32le',
      '-y',
      join(dir, to),
    ]);
  }
}
