// video-frames.ts: one decoded video frame -> the u8 tile the vision encoder takes, as HF
// `SmolVLMVideoProcessor` resizes frames (no tiling: every frame is one global image):
//
//   RGB (alpha over white) ─resize→ longest edge := video longestEdge, other side int(.) rounded up to even
//                          ─resize→ tileSize x tileSize ─CHW→ [3, T, T] u8
//
// Both resizes use the configured interpolation (BICUBIC for SmolVLM2, whose LANCZOS the torch video path
// cannot do) with antialiasing, on uint8 pixels. On CPU, torch >= 2.1 resizes uint8 images with its native
// antialiased kernels, which reproduce Pillow's resampler (separable, fixed-point, rounded between passes),
// so resample.ts's Pillow-exact code is used; HF on a GPU or older torch resizes in float and rounds once,
// within a level or so of this. A resize to the size an image already has is skipped (torchvision returns
// the input unchanged). Also the thumbnails the engine reports for each sampled frame.

import { InternalError } from '../errors';
import { toRgb, type RawImage } from './image-decode';
import { longestEdgeResize, MAX_IMAGE_SIZE, type ImageLayout, type Size } from './image-layout';
import { normalizeTiles } from './image-processor';
import { resampleRgb, type RgbImage } from './resample';
import type { VideoProcessorConfig } from './video-config';

/**
 * HF's video `get_resize_output_image_size`: longest side := min(4096, longestEdge), the other int(.) and
 * rounded up to even. That is the image rule (image-layout.ts) at a longest edge <= 4096, whose extra cap
 * at 4096 then never applies.
 */
export function videoResizeSize(source: Size, longestEdge: number): Size {
  return longestEdgeResize(source, Math.min(MAX_IMAGE_SIZE, longestEdge));
}

/** The layout of one frame: a single untiled image of imageSeqLen tokens. */
export function videoFrameLayout(source: Size, video: VideoProcessorConfig, imageSeqLen: number): ImageLayout {
  const T = video.tileSize;
  return {
    source,
    resized: videoResizeSize(source, video.longestEdge),
    encoderSize: { width: T, height: T },
    rows: 0,
    cols: 0,
    numTiles: 1,
    tileSize: T,
    numImageTokens: imageSeqLen,
  };
}

/** Decoded frame -> [3, T, T] u8 channels-first (the same tile layout images use). */
export function frameToTile(frame: RawImage, video: VideoProcessorConfig): Uint8Array {
  let img: RgbImage = toRgb(frame);
  const resizeTo = (s: Size): void => {
    if (img.width !== s.width || img.height !== s.height) img = resampleRgb(img, s.width, s.height, video.resample);
  };
  resizeTo(videoResizeSize(img, video.longestEdge));
  const T = video.tileSize;
  resizeTo({ width: T, height: T });
  const plane = T * T;
  const out = new Uint8Array(3 * plane);
  for (let i = 0; i < plane; i++) {
    out[i] = img.data[i * 3]!;
    out[plane + i] = img.data[i * 3 + 1]!;
    out[2 * plane + i] = img.data[i * 3 + 2]!;
  }
  return out;
}

/** [3, T, T] u8 -> normalized f32, exactly as image tiles are (image-processor.ts normalizeTiles). */
export function normalizeFrameTile(tileU8: Uint8Array, video: VideoProcessorConfig): Float32Array {
  return normalizeTiles(tileU8, video.tileSize, video.normalize);
}

/** A small RGBA picture of a sampled frame (for a page to show beside the answer). */
export interface FrameThumbnail {
  width: number;
  height: number;
  /** [height, width, 4] RGBA, opaque. */
  rgba: Uint8ClampedArray;
}

/** The frame scaled so its longest side is `edge` px (never enlarged), bilinear. */
export function frameThumbnail(frame: RawImage, edge: number): FrameThumbnail {
  if (!Number.isInteger(edge) || edge < 1) throw new InternalError(`frameThumbnail: edge ${edge} must be a positive integer`);
  const rgb = toRgb(frame);
  const scale = Math.min(1, edge / Math.max(rgb.width, rgb.height));
  const width = Math.max(1, Math.round(rgb.width * scale));
  const height = Math.max(1, Math.round(rgb.height * scale));
  const small = width === rgb.width && height === rgb.height ? rgb : resampleRgb(rgb, width, height, 'bilinear');
  const rgba = new Uint8ClampedArray(width * height * 4);
  for (let i = 0; i < width * height; i++) {
    rgba[i * 4] = small.data[i * 3]!;
    rgba[i * 4 + 1] = small.data[i * 3 + 1]!;
    rgba[i * 4 + 2] = small.data[i * 3 + 2]!;
    rgba[i * 4 + 3] = 255;
  }
  return { width, height, rgba };
}
