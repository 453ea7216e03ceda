// A video inside the encoder (worker or in-process), up to the point where its frames are media items like
// images (docs/design.md: "video frames ... encoded by WGSL kernels in Web Workers"):
//
//   clip bytes/Blob ─ clip key = blake3(clip identity ‖ bytes)  ── in knownClips? ─► known: nothing decoded
//                   ─ open (container metadata) ─ sampleFrames (SmolVLM2's rule) ─ decode the sampled frames,
//                     one at a time ─► tile [3, T, T] u8 ─ frame key = blake3(frame identity ‖ tile) ─► kept
//   frame list      ─ decode each image ─► tile ─► frame key ─► kept          (no clip key: used as given)
//
// A frame's key depends only on its tile's pixels and the encoder, so the same frame in two clips, or twice
// in one clip, is one cache entry (and one encode). The clip key includes the decoder's name: WebCodecs and
// ffmpeg convert colours slightly differently, so their frame keys differ.

import { contentKey, contentKeyOfChunks } from '../../cache/content-key';
import { InvalidMessageError, VideoDecodeError } from '../../errors';
import type { ImageDecoder, RawImage } from '../../processor/image-decode';
import type { ImageLayout } from '../../processor/image-layout';
import type { VideoProcessorConfig } from '../../processor/video-config';
import { frameThumbnail, frameToTile, videoFrameLayout } from '../../processor/video-frames';
import { sampleFrames } from '../../processor/video-sampling';
import type { PreparedVideo, PreparedVideoFrame, PrepareVideoOptions, VideoFramesSource, VideoSource } from '../../protocol/encoder';
import type { OpenedClip, VideoBackend } from './video-backend';

interface PreparedFrameTile {
  layout: ImageLayout;
  /** [1, 3, T, T] u8. */
  tilesU8: Uint8Array;
}

export interface VideoPrepareContext {
  video: VideoProcessorConfig;
  imageSeqLen: number;
  /** Identity of a frame's embeddings (encoder + frame normalisation); frame keys hash their tile under it. */
  frameIdentity: string;
  /** Identity of a clip's sampling and decoding (frame identity + video config + decoder name). */
  clipIdentity: string;
  backend: VideoBackend | undefined;
  decodeImage: ImageDecoder;
  ffmpegPath?: string;
  /** Keep a frame's tile until it is encoded or forgotten. */
  keep(key: string, frame: PreparedFrameTile): void;
  /** Drop tiles kept by a prepareVideo that then failed. */
  drop(key: string): void;
}

export function isFrameList(source: VideoSource): source is VideoFramesSource {
  return !(source instanceof Uint8Array) && !(typeof Blob !== 'undefined' && source instanceof Blob);
}

/** Validated timestamps and duration of a frame list (InvalidMessageError names what is wrong). */
export function frameListTiming(list: VideoFramesSource): { timestamps: number[]; duration: number } {
  if (!Array.isArray(list?.frames) || list.frames.length === 0)
    throw new InvalidMessageError('a video given as frames needs a non-empty frames array of { image, timestamp }.');
  const timestamps = list.frames.map((f, i) => {
    const t = f?.timestamp;
    if (typeof t !== 'number' || !Number.isFinite(t) || t < 0)
      throw new InvalidMessageError(`video frames[${i}].timestamp must be a number of seconds >= 0, got ${JSON.stringify(t)}.`);
    if (i > 0 && t < list.frames[i - 1]!.timestamp)
      throw new InvalidMessageError(
        `video frames[${i}].timestamp ${t} is before frames[${i - 1}]'s ${list.frames[i - 1]!.timestamp}; give frames in time order.`,
      );
    return t;
  });
  const n = timestamps.length;
  const last = timestamps[n - 1]!;
  const duration = list.duration ?? (n > 1 ? last + (last - timestamps[n - 2]!) : last);
  if (typeof duration !== 'number' || !Number.isFinite(duration) || duration < last) {
    throw new InvalidMessageError(
      `video duration must be a number of seconds >= the last frame's timestamp ${last}, got ${JSON.stringify(list.duration)}.`,
    );
  }
  return { timestamps, duration };
}

/**
 * A clip's key, and the clip opened by the backend (the caller closes it); when the caller already knows
 * the clip (options.knownClips), the answer that says so, with nothing opened.
 */
export async function openUnknownClip(
  ctx: { backend: VideoBackend | undefined; clipIdentity: string; ffmpegPath?: string },
  source: Uint8Array | Blob,
  options: PrepareVideoOptions,
): Promise<PreparedVideo | { clipKey: string; clip: OpenedClip; backend: VideoBackend }> {
  const backend = ctx.backend;
  if (!backend) throw new VideoDecodeError('this encoder has no video decoder; send the frames as a list of images with timestamps.');
  const clipKey = await clipKeyOf(ctx.clipIdentity, source);
  if (options.knownClips?.includes(clipKey)) return { clipKey, known: true, frames: [], numDecoded: 0, demuxMs: 0, decodeMs: 0 };
  return { clipKey, clip: await backend.open(source, { ffmpegPath: ctx.ffmpegPath }), backend };
}

async function clipKeyOf(identity: string, source: Uint8Array | Blob): Promise<string> {
  if (source instanceof Uint8Array) return contentKey(identity, source);
  const reader = source.stream().getReader();
  async function* chunks(): AsyncGenerator<Uint8Array> {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  }
  return contentKeyOfChunks(identity, source.size, chunks());
}

async function frameOf(
  ctx: VideoPrepareContext,
  raw: RawImage,
  index: number,
  timestamp: number,
  thumbnailEdge: number | undefined,
): Promise<PreparedVideoFrame> {
  const tile = frameToTile(raw, ctx.video);
  const key = await contentKey(ctx.frameIdentity, tile);
  const layout = videoFrameLayout({ width: raw.width, height: raw.height }, ctx.video, ctx.imageSeqLen);
  ctx.keep(key, { layout, tilesU8: tile });
  return {
    media: { key, layout, numTokens: ctx.imageSeqLen },
    index,
    timestamp,
    ...(thumbnailEdge ? { thumbnail: frameThumbnail(raw, thumbnailEdge) } : {}),
  };
}

/** Runs `prepare` with a context whose keeps are undone if it fails: nothing kept stays behind. */
export async function dropKeptOnFailure<T, C extends { keep(key: string, item: T): void; drop(key: string): void }, R>(
  ctx: C,
  prepare: (tracking: C) => Promise<R>,
): Promise<R> {
  const kept: string[] = [];
  const tracking: C = {
    ...ctx,
    keep: (key: string, item: T) => {
      kept.push(key);
      ctx.keep(key, item);
    },
  };
  try {
    return await prepare(tracking);
  } catch (e) {
    for (const key of kept) ctx.drop(key);
    throw e;
  }
}

/** Sample, decode and keep a video's frames; on failure nothing it kept stays behind. */
export function prepareVideo(ctx: VideoPrepareContext, source: VideoSource, options: PrepareVideoOptions = {}): Promise<PreparedVideo> {
  return dropKeptOnFailure(ctx, (tracking) => prepareTracked(tracking, source, options));
}

async function prepareTracked(ctx: VideoPrepareContext, source: VideoSource, options: PrepareVideoOptions): Promise<PreparedVideo> {
  const t0 = performance.now();
  if (isFrameList(source)) {
    const { timestamps, duration } = frameListTiming(source);
    const frames: PreparedVideoFrame[] = [];
    for (const [i, f] of source.frames.entries()) {
      const raw = f.image instanceof Uint8Array ? await ctx.decodeImage(f.image) : f.image;
      frames.push(await frameOf(ctx, raw, i, timestamps[i]!, options.thumbnailEdge));
    }
    const { width, height } = frames[0]!.media.layout!.source;
    return {
      known: false,
      meta: { numFrames: frames.length, fps: 0, duration, width, height, codec: 'frames', container: 'frames', decoder: 'frames' },
      frames,
      numDecoded: frames.length,
      demuxMs: 0,
      decodeMs: performance.now() - t0,
    };
  }
  const opened = await openUnknownClip(ctx, source, options);
  if (!('clip' in opened)) return opened;
  const { clipKey, clip, backend } = opened;
  try {
    const t1 = performance.now();
    const sample = sampleFrames(clip.meta, ctx.video);
    const frames: PreparedVideoFrame[] = [];
    let k = 0;
    for await (const raw of clip.frames(sample.indices)) {
      frames.push(await frameOf(ctx, raw, sample.indices[k]!, sample.timestamps[k]!, options.thumbnailEdge));
      k++;
    }
    return {
      clipKey,
      known: false,
      meta: { ...clip.meta, decoder: backend.name },
      frames,
      numDecoded: frames.length,
      demuxMs: t1 - t0,
      decodeMs: performance.now() - t1,
    };
  } finally {
    clip.close();
  }
}
