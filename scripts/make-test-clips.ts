// Writes the small video clips the tests use (test/fixtures/video/, committed) with ffmpeg and sharp,
// deterministically: every frame is drawn here and says its own index, so a test can check that decoding
// returned exactly the sampled frames. Run again only to change them: `npx tsx scripts/make-test-clips.ts`
// (needs ffmpeg: Debian `apt-get install ffmpeg`; the tests themselves read the committed files).
//
// Frame i (80 x 48): a 4 x 4 grid of 20 x 12 cells; cell k (row-major) is white when bit k of i is set,
// black otherwise (test/helpers/count-frames.ts draws it and reads it back, robust to lossy coding).
//
//   count-4s.mp4         H.264, 20 frames at 5 fps (4 s)            count-4s-vp9.webm / count-4s-vp8.webm: VP9 / VP8
//   count-4s-faststart.mp4  the same with its index (moov) first: cut short, its frames go missing, not its index
//   count-half.mp4       H.264, 5 frames at 10 fps (0.5 s: shorter than one sampling interval)
//   count-12s.mp4        H.264, 24 frames at 2 fps (longer than the tiny checkpoint's max_frames 8)
//   two-hours.mp4        H.264, 7200 frames at 1 fps (2 hours), a key frame every 30 frames
//   count-4s-hevc.mp4    H.265: a codec Chromium's WebCodecs cannot decode here (ffmpeg can)
//   audio-only.m4a       AAC, no video track
//   zero-seconds.mp4     count-4s.mp4 cut to its first frame with every duration set to 0 (a 0-second clip)
//   count.gif/.webp      animated, 8 frames, 500 ms each (4 s)

import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import { CLIP_HEIGHT, CLIP_WIDTH, countFrame } from '../test/helpers/count-frames';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const CLIP_DIR = join(root, 'test/fixtures/video');
const BITEXACT = ['-fflags', '+bitexact', '-flags:v', '+bitexact', '-map_metadata', '-1', '-threads', '1'];

function encode(file: string, numFrames: number, fps: number, codec: string[]): void {
  const raw = new Uint8Array(numFrames * CLIP_WIDTH * CLIP_HEIGHT * 3);
  for (let i = 0; i < numFrames; i++) raw.set(countFrame(i), i * CLIP_WIDTH * CLIP_HEIGHT * 3);
  const args = [
    '-hide_banner',
    '-loglevel',
    'error',
    '-f',
    'rawvideo',
    '-pix_fmt',
    'rgb24',
    '-s',
    `${CLIP_WIDTH}x${CLIP_HEIGHT}`,
    '-r',
    String(fps),
    '-i',
    '-',
  ];
  execFileSync('ffmpeg', [...args, ...codec, '-pix_fmt', 'yuv420p', ...BITEXACT, '-y', join(CLIP_DIR, file)], {
    input: raw,
    maxBuffer: 1 << 30,
  });
}

const H264 = ['-c:v', 'libx264', '-preset', 'veryfast'];

/** Boxes of an ISO BMFF file, walked into the containers on the way to `path` (e.g. moov/trak/mdia/mdhd). */
function findBox(buf: Buffer, path: string[], start = 0, end = buf.length): number {
  for (let at = start; at + 8 <= end; ) {
    const size = buf.readUInt32BE(at);
    const type = buf.toString('latin1', at + 4, at + 8);
    if (size < 8) break;
    if (type === path[0]) return path.length === 1 ? at : findBox(buf, path.slice(1), at + 8, at + size);
    at += size;
  }
  throw new Error(`box ${path.join('/')} not found`);
}

/** count-4s.mp4 reduced to a clip that lasts 0 seconds: one sample, and every duration field 0. */
function zeroSecondClip(): void {
  const tmp = join(tmpdir(), `tessera-one-frame-${process.pid}.mp4`);
  execFileSync('ffmpeg', [
    '-hide_banner',
    '-loglevel',
    'error',
    '-i',
    join(CLIP_DIR, 'count-4s.mp4'),
    '-frames:v',
    '1',
    '-c',
    'copy',
    ...BITEXACT,
    '-y',
    tmp,
  ]);
  const buf = Buffer.from(readFileSync(tmp));
  rmSync(tmp);
  const zeroDuration = (box: number, v1Offset: number, v0Offset: number) => {
    const version = buf[box + 8]!;
    if (version === 1) buf.writeBigUInt64BE(0n, box + v1Offset);
    else buf.writeUInt32BE(0, box + v0Offset);
  };
  zeroDuration(findBox(buf, ['moov', 'mvhd']), 32, 24);
  zeroDuration(findBox(buf, ['moov', 'trak', 'tkhd']), 36, 28);
  zeroDuration(findBox(buf, ['moov', 'trak', 'mdia', 'mdhd']), 32, 24);
  const stts = findBox(buf, ['moov', 'trak', 'mdia', 'minf', 'stbl', 'stts']);
  const entries = buf.readUInt32BE(stts + 12);
  for (let e = 0; e < entries; e++) buf.writeUInt32BE(0, stts + 16 + e * 8 + 4); // sample_delta
  try {
    const elst = findBox(buf, ['moov', 'trak', 'edts', 'elst']);
    zeroDuration(elst, 16, 16); // first entry's segment_duration
  } catch {
    // no edit list
  }
  writeFileSync(join(CLIP_DIR, 'zero-seconds.mp4'), buf);
}

async function animated(file: string, numFrames: number, delayMs: number): Promise<void> {
  const frames = new Uint8Array(numFrames * CLIP_WIDTH * CLIP_HEIGHT * 3);
  for (let i = 0; i < numFrames; i++) frames.set(countFrame(i), i * CLIP_WIDTH * CLIP_HEIGHT * 3);
  const img = sharp(frames, { raw: { width: CLIP_WIDTH, height: CLIP_HEIGHT * numFrames, channels: 3, pageHeight: CLIP_HEIGHT } });
  const delay = Array(numFrames).fill(delayMs);
  const bytes = file.endsWith('.gif')
    ? await img.gif({ delay, loop: 0 }).toBuffer()
    : await img.webp({ delay, loop: 0, lossless: true }).toBuffer();
  writeFileSync(join(CLIP_DIR, file), bytes);
}

export async function makeTestClips(): Promise<void> {
  mkdirSync(CLIP_DIR, { recursive: true });
  encode('count-4s.mp4', 20, 5, H264);
  encode('count-4s-faststart.mp4', 20, 5, [...H264, '-movflags', '+faststart']);
  encode('count-4s-vp9.webm', 20, 5, ['-c:v', 'libvpx-vp9', '-row-mt', '0', '-b:v', '200k']);
  encode('count-4s-vp8.webm', 20, 5, ['-c:v', 'libvpx', '-b:v', '200k']);
  encode('count-half.mp4', 5, 10, H264);
  encode('count-12s.mp4', 24, 2, H264);
  // A key frame every 30 s: seeking to a sampled frame decodes at most 30 frames (the browser test counts them).
  encode('two-hours.mp4', 7200, 1, [...H264, '-g', '30']);
  encode('count-4s-hevc.mp4', 20, 5, [
    '-c:v',
    'libx265',
    '-preset',
    'veryfast',
    '-x265-params',
    'log-level=error:pools=1:frame-threads=1',
    '-tag:v',
    'hvc1',
  ]);
  execFileSync('ffmpeg', [
    '-hide_banner',
    '-loglevel',
    'error',
    '-f',
    'lavfi',
    '-i',
    'sine=frequency=440:duration=1:sample_rate=16000',
    '-c:a',
    'aac',
    ...BITEXACT,
    '-y',
    join(CLIP_DIR, 'audio-only.m4a'),
  ]);
  zeroSecondClip();
  await animated('count.gif', 8, 500);
  await animated('count.webp', 8, 500);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await makeTestClips();
  console.log(`wrote the test clips to ${CLIP_DIR}`);
}
