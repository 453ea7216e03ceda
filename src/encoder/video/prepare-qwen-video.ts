// A Qwen-VL video inside the encoder, up to its frame groups as media items (src/processor/qwen-video.ts
// has the family's rules):
//
//   clip bytes/Blob ─ clip key ── in knownClips? ─► known: nothing decoded
//                   ─ open ─ sampleQwenFrames ─ one size for all frames (qwenVideoSize, from the container's
//                     size and the sampled count) ─ decode each sampled frame and resize it at once (RGB u8)
//   frame list      ─ decode each image ─ the same size for all (they must share their size) ─ resize
//   ─► frames padded to the temporal patch with the last ─► one group per temporal patch: key =
//      blake3(group identity ‖ size ‖ its frames' pixels), kept as u8 until its encode
//
// The vision tower attends within each frame group (every Qwen-VL layer's attention is per temporal
// patch), so a group's embeddings depend only on its own pixels: the same group in two clips is one cache
// entry, and a group is encoded alone, as an image is. A clip's key names the decoder too (WebCodecs and
// ffmpeg convert colours slightly differently).

import { contentKey } from '../../cache/content-key';
import { InvalidMessageError, VideoDecodeError } from '../../errors';
import { type ImageDecoder, type RawImage, toRgb } from '../../processor/image-decode';
import type { QwenImageProcessorConfig } from '../../processor/qwen-image-processor';
import { qwenGroupTimestamps, qwenVideoSize, sampleQwenFrames, type QwenVideoConfig } from '../../processor/qwen-video';
import { resampleRgbTorchBicubic } from '../../processor/resample-torch';
import type { PatchGrid } from '../../processor/smart-resize';
import { frameThumbnail } from '../../processor/video-frames';
import type { PreparedVideo, PreparedVideoFrame, PrepareVideoOptions, VideoMetaInfo, VideoSource } from '../../protocol/encoder';
import { dropKeptOnFailure, frameListTiming, isFrameList, openUnknownClip } from './prepare-video';
import type { VideoBackend } from './video-backend';

/** One temporal patch of a video, resized: its frames' RGB pixels [h·w·3] u8, normalised when it is encoded. */
export interface QwenFrameGroup {
  framesU8: Uint8Array[];
  grid: PatchGrid;
  tokens: number;
}

export interface QwenVideoContext {
  video: QwenVideoConfig;
  image: QwenImageProcessorConfig;
  /** Identity of a group's embeddings (the tower and the normalisation); group keys hash its pixels under it. */
  groupIdentity: string;
  /** Identity of a clip's sampling, resizing and decoding (group identity + video settings + decoder). */
  clipIdentity: string;
  backend: VideoBackend | undefined;
  decodeImage: ImageDecoder;
  ffmpegPath?: string;
  keep(key: string, group: QwenFrameGroup): void;
  drop(key: string): void;
}

/** Sample, decode, resize and keep a video's frame groups; on failure nothing it kept stays behind. */
export function prepareQwenVideo(ctx: QwenVideoContext, source: VideoSource, options: PrepareVideoOptions = {}): Promise<PreparedVideo> {
  return dropKeptOnFailure(ctx, (tracking) => prepareTracked(tracking, source, options));
}

interface Resized {
  rgb: Uint8Array;
  index: number;
  seconds: number;
  thumbnail?: PreparedVideoFrame['thumbnail'];
}

async function prepareTracked(ctx: QwenVideoContext, source: VideoSource, options: PrepareVideoOptions): Promise<PreparedVideo> {
  const t0 = performance.now();
  const c = ctx.image;
  const geometry = { patchSize: c.patchSize, mergeSize: c.mergeSize, temporalPatchSize: c.temporalPatchSize };
  const resize = (raw: RawImage, size: [number, number], where: string, first: { width: number; height: number }): Uint8Array => {
    if (raw.width !== first.width || raw.height !== first.height) {
      throw new InvalidMessageError(
        `${where} is ${raw.width} x ${raw.height} pixels but the video's first frame is ${first.width} x ${first.height}; a video's frames share one size`,
      );
    }
    return resampleRgbTorchBicubic(toRgb(raw), size[1], size[0]).data as Uint8Array;
  };
  const thumb = (raw: RawImage) => (options.thumbnailEdge ? { thumbnail: frameThumbnail(raw, options.thumbnailEdge) } : {});

  if (isFrameList(source)) {
    const { timestamps, duration } = frameListTiming(source);
    const raws: RawImage[] = [];
    for (const f of source.frames) raws.push(f.image instanceof Uint8Array ? await ctx.decodeImage(f.image) : f.image);
    const first = raws[0]!;
    const size = qwenVideoSize(raws.length, first.height, first.width, ctx.video, geometry);
    const frames = raws.map((raw, i) => ({
      rgb: resize(raw, size, `video frames[${i}]`, first),
      index: i,
      seconds: timestamps[i]!,
      ...thumb(raw),
    }));
    const meta: VideoMetaInfo = {
      numFrames: raws.length,
      fps: 0,
      duration,
      width: first.width,
      height: first.height,
      codec: 'frames',
      container: 'frames',
      decoder: 'frames',
    };
    const groups = await keepGroups(ctx, frames, size);
    return { known: false, meta, frames: groups, numDecoded: raws.length, demuxMs: 0, decodeMs: performance.now() - t0 };
  }

  const opened = await openUnknownClip(ctx, source, options);
  if (!('clip' in opened)) return opened;
  const { clipKey, clip, backend } = opened;
  try {
    const t1 = performance.now();
    const { meta } = clip;
    const indices = sampleQwenFrames(meta.numFrames, meta.fps, ctx.video, c.temporalPatchSize);
    const size = qwenVideoSize(indices.length, meta.height, meta.width, ctx.video, geometry);
    const frames: Resized[] = [];
    for await (const raw of clip.frames(indices)) {
      const index = indices[frames.length]!;
      frames.push({ rgb: resize(raw, size, `frame ${index}`, meta), index, seconds: index / meta.fps, ...thumb(raw) });
    }
    if (frames.length !== indices.length) {
      throw new VideoDecodeError(`the clip gave ${frames.length} of its ${indices.length} sampled frames; it may be cut short.`);
    }
    const groups = await keepGroups(ctx, frames, size);
    return {
      clipKey,
      known: false,
      meta: { ...meta, decoder: backend.name },
      frames: groups,
      numDecoded: frames.length,
      demuxMs: t1 - t0,
      decodeMs: performance.now() - t1,
    };
  } finally {
    clip.close();
  }
}

/**
 * The frames padded to the temporal patch with the last, one kept group per patch. A group's entry has its
 * first frame's index and thumbnail, and the mean of its first and last frame's seconds (the timestamp
 * Qwen3-VL's prompt writes).
 */
async function keepGroups(ctx: QwenVideoContext, frames: readonly Resized[], size: [number, number]): Promise<PreparedVideoFrame[]> {
  const c = ctx.image;
  const T = c.temporalPatchSize;
  const padded = [...frames];
  while (padded.length % T !== 0) padded.push(padded[padded.length - 1]!);
  const seconds = qwenGroupTimestamps(
    frames.map((f) => f.seconds),
    T,
  );
  const grid: PatchGrid = { t: 1, h: size[0] / c.patchSize, w: size[1] / c.patchSize };
  const tokens = (grid.h * grid.w) / c.mergeSize ** 2;
  const header = new Uint8Array(new Uint32Array([size[0], size[1]]).buffer);
  const out: PreparedVideoFrame[] = [];
  for (let g = 0; g < padded.length / T; g++) {
    const members = padded.slice(g * T, (g + 1) * T);
    const bytes = new Uint8Array(header.length + members.reduce((a, f) => a + f.rgb.length, 0));
    bytes.set(header);
    let o = header.length;
    for (const f of members) {
      bytes.set(f.rgb, o);
      o += f.rgb.length;
    }
    const key = await contentKey(ctx.groupIdentity, bytes);
    ctx.keep(key, { framesU8: members.map((f) => f.rgb), grid, tokens });
    out.push({
      media: { key, grid, numTokens: tokens },
      index: members[0]!.index,
      timestamp: seconds[g]!,
      ...(members[0]!.thumbnail ? { thumbnail: members[0]!.thumbnail } : {}),
    });
  }
  return out;
}
