// Video test inputs: the committed clips (scripts/make-test-clips.ts draws every frame's index into it),
// the 4-frame golden (test/reference/make_video_goldens.py), and an ffmpeg that counts its runs.

import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { RawImage } from '../../src/processor/image-decode';
import { CLIP_DIR } from '../../scripts/make-test-clips';
import { CLIP_HEIGHT, CLIP_WIDTH, countFrame, frameIndexOf } from './count-frames';
import { GOLDEN_DIR } from './goldens';

export { CLIP_WIDTH, CLIP_HEIGHT, countFrame, frameIndexOf };

export function clip(name: string): Uint8Array {
  return new Uint8Array(readFileSync(join(CLIP_DIR, name)));
}

/** A count frame as pixels (for frame lists). */
export function countFrameImage(index: number): RawImage {
  return { width: CLIP_WIDTH, height: CLIP_HEIGHT, channels: 3, data: countFrame(index) };
}

/**
 * Node decodes MP4/WebM with an ffmpeg program; `npm test` installs Debian's ffmpeg when run as root
 * (scripts/setup.mjs). Without it these tests cannot run: say so instead of failing obscurely.
 */
export function requireFfmpeg(): void {
  try {
    execFileSync('ffmpeg', ['-hide_banner', '-version'], { stdio: 'ignore' });
  } catch {
    throw new Error(
      'the video tests decode MP4/WebM in Node with ffmpeg, which is not on PATH: install it (Debian/Ubuntu: apt-get install ffmpeg; scripts/setup.mjs does this when run as root).',
    );
  }
}

/** An ffmpeg wrapper that appends a line to `log` per run (a test backend around the real program). */
export function countingFfmpeg(): { path: string; runs: () => string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-ffmpeg-'));
  const log = join(dir, 'runs.log');
  writeFileSync(log, '');
  const path = join(dir, 'ffmpeg');
  writeFileSync(path, `#!/bin/sh\necho "$*" >> '${log}'\nexec ffmpeg "$@"\n`);
  chmodSync(path, 0o755);
  return { path, runs: () => readFileSync(log, 'utf8').split('\n').filter(Boolean) };
}

export interface VideoGolden {
  frames: RawImage[];
  timestamps: number[];
  duration: number;
  prompt: string;
  inputIds: number[];
  tokens: number[];
  tiles: Uint8Array;
}

export function videoGolden(): VideoGolden {
  const input = JSON.parse(readFileSync(resolve(GOLDEN_DIR, 'tiny-video-input.json'), 'utf8'));
  const manifest = JSON.parse(readFileSync(resolve(GOLDEN_DIR, 'video-manifest.json'), 'utf8'));
  const [n, h, w] = input.frames.shape as number[];
  const all = new Uint8Array(readFileSync(resolve(GOLDEN_DIR, 'tiny-video-frames.u8.bin')));
  return {
    frames: Array.from({ length: n }, (_, k) => ({
      width: w,
      height: h,
      channels: 3 as const,
      data: all.subarray(k * w * h * 3, (k + 1) * w * h * 3),
    })),
    timestamps: input.frames.timestamps,
    duration: input.frames.duration,
    prompt: input.prompt,
    inputIds: input.input_ids,
    tokens: manifest.greedy['smolvlm2-video-tiny'].tokens,
    tiles: new Uint8Array(readFileSync(resolve(GOLDEN_DIR, 'tiny-video-tiles.u8.bin'))),
  };
}
