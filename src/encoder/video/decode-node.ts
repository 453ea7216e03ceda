// Video decoding in Node, where there is no WebCodecs:
//   animated GIF / WebP  sharp (libvips), one page at a time; durations from the per-frame delays
//   MP4 / WebM / MKV     mediabunny reads the container (the same metadata, hence the same sampling, as in a
//                        browser); an `ffmpeg` program decodes each sampled frame: `-ss` before `-i` seeks
//                        to the key frame before it and decodes forward, and `-frames:v 1` stops right
//                        after it, so only the sampled frames (and the runs leading to them) are decoded.
// No ffmpeg: FfmpegMissingError, which says what to install (GIF/WebP still work).
//
// ffmpeg reads a file (an MP4 may keep its index at the end, which a pipe cannot seek to): the clip is
// written once to a private temporary directory, removed when the clip is closed. Frame i is asked for at
// the midpoint between frames i-1 and i: ffmpeg outputs the first frame at or after -ss, and the midpoint
// keeps container rounding from picking a neighbour.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createWriteStream } from 'node:fs';
import { VideoDecodeError, VideoEmptyError } from '../../errors';
import { importOptional } from '../../optional-dependency';
import { startFfmpeg } from '../ffmpeg-process';
import type { RawImage } from '../../processor/image-decode';
import { demuxClip } from './demux';
import { isAnimatedImage, type ClipMeta, type OpenedClip, type VideoBackend, type VideoBackendOptions } from './video-backend';

async function bytesOf(source: Uint8Array | Blob): Promise<Uint8Array> {
  return source instanceof Uint8Array ? source : new Uint8Array(await source.arrayBuffer());
}

/** Browsers show a GIF frame with a delay under 20 ms for 100 ms; so does this (libvips reports 0 for none). */
const MIN_DELAY_MS = 20;
const DEFAULT_DELAY_MS = 100;

async function openAnimated(source: Uint8Array | Blob, kind: 'gif' | 'webp'): Promise<OpenedClip> {
  const { default: sharp } = await importOptional('sharp', 'animated GIF/WebP video in Node', () => import('sharp'));
  const bytes = await bytesOf(source);
  let meta: Awaited<ReturnType<ReturnType<typeof sharp>['metadata']>>;
  try {
    meta = await sharp(bytes, { animated: true }).metadata();
  } catch (e) {
    throw new VideoDecodeError(
      `${bytes.length} bytes could not be read as an animated ${kind.toUpperCase()} (${(e as Error).message}); the file may be damaged.`,
      { cause: e },
    );
  }
  const numFrames = meta.pages ?? 1;
  const delays = Array.from({ length: numFrames }, (_, i) => {
    const d = meta.delay?.[i] ?? 0;
    return d < MIN_DELAY_MS ? DEFAULT_DELAY_MS : d;
  });
  const span = delays.reduce((a, b) => a + b, 0) / 1000;
  if (!(span > 0)) throw new VideoEmptyError(numFrames, span);
  const fps = numFrames / span;
  const clipMeta: ClipMeta = {
    numFrames,
    fps,
    duration: numFrames / fps,
    width: meta.width ?? 0,
    height: meta.pageHeight ?? meta.height ?? 0,
    codec: kind,
    container: kind.toUpperCase(),
  };
  return {
    meta: clipMeta,
    async *frames(indices: readonly number[]): AsyncGenerator<RawImage> {
      for (const i of indices) {
        try {
          const { data, info } = await sharp(bytes, { page: i, pages: 1 })
            .toColourspace('srgb')
            .raw({ depth: 'uchar' })
            .toBuffer({ resolveWithObject: true });
          yield {
            width: info.width,
            height: info.height,
            channels: info.channels as RawImage['channels'],
            data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
          };
        } catch (e) {
          throw new VideoDecodeError(`frame ${i} of the animated ${kind.toUpperCase()} could not be decoded (${(e as Error).message}).`, {
            cause: e,
          });
        }
      }
    },
    close: () => {},
  };
}

/** Run ffmpeg to the end; resolves with its stdout, or rejects with FfmpegMissingError or VideoDecodeError. */
async function runFfmpeg(command: string, args: string[], what: string): Promise<Buffer> {
  const run = startFfmpeg(command, args, 'video');
  const out: Buffer[] = [];
  for await (const b of run.stdout as AsyncIterable<Buffer>) out.push(b);
  const code = await run.exited;
  if (code !== 0) {
    throw new VideoDecodeError(`ffmpeg could not decode ${what} (exit code ${code}: ${run.why()}); the file may be cut short or damaged.`);
  }
  return Buffer.concat(out);
}

async function openWithFfmpeg(source: Uint8Array | Blob, ffmpeg: string): Promise<OpenedClip> {
  const clip = await demuxClip(source);
  clip.input.dispose(); // the packet table is all ffmpeg needs from it
  await runFfmpeg(ffmpeg, ['-hide_banner', '-version'], 'anything');
  const dir = await mkdtemp(join(tmpdir(), 'tessera-video-'));
  const file = join(dir, 'clip');
  try {
    if (source instanceof Uint8Array) await writeFile(file, source);
    else await pipeline(Readable.fromWeb(source.stream() as import('node:stream/web').ReadableStream), createWriteStream(file));
  } catch (e) {
    await rm(dir, { recursive: true, force: true });
    throw e;
  }
  const { width, height } = clip.meta;
  const t0 = clip.timestamps[0]!;
  return {
    meta: clip.meta,
    async *frames(indices: readonly number[]): AsyncGenerator<RawImage> {
      for (const i of indices) {
        const at = i === 0 ? 0 : (clip.timestamps[i - 1]! + clip.timestamps[i]!) / 2 - t0;
        const args = [
          '-hide_banner',
          '-nostdin',
          '-v',
          'error',
          '-ss',
          at.toFixed(6),
          '-i',
          file,
          '-frames:v',
          '1',
          '-f',
          'rawvideo',
          '-pix_fmt',
          'rgb24',
          'pipe:1',
        ];
        const data = await runFfmpeg(ffmpeg, args, `frame ${i} of the ${clip.meta.codec} clip`);
        if (data.length !== width * height * 3) {
          throw new VideoDecodeError(
            `ffmpeg returned ${data.length} bytes for frame ${i}, but a ${width}x${height} RGB frame has ${width * height * 3}; the file may be cut short.`,
          );
        }
        yield { width, height, channels: 3, data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) };
      }
    },
    close: () => void rm(dir, { recursive: true, force: true }),
  };
}

export const nodeVideoBackend: VideoBackend = {
  name: 'ffmpeg+sharp',
  async open(source: Uint8Array | Blob, options: VideoBackendOptions = {}): Promise<OpenedClip> {
    const animated = await isAnimatedImage(source);
    if (animated) return openAnimated(source, animated);
    return openWithFfmpeg(source, options.ffmpegPath ?? 'ffmpeg');
  },
};
