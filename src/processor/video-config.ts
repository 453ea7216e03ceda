// video-config.ts: the video settings of a SmolVLM2 checkpoint (HF `SmolVLMVideoProcessor`), validated.
// Read from video_preprocessor_config.json when the checkpoint has one, else preprocessor_config.json (the
// upstream SmolVLM2 repositories keep them there). A checkpoint without `video_sampling` (SmolVLM v1,
// Idefics3) has no video support: `parseVideoProcessorConfig` returns undefined.
//
// How HF reads them (`SmolVLMVideoProcessor.__init__`, transformers 4.5x and 5.x alike):
//   num_frames (max frames) = video_sampling.max_frames       fps = video_sampling.fps
//   size = video_sampling.video_size, EXCEPT that a top-level "size" replaces it ("for BC"): the real
//   SmolVLM2 files have size.longest_edge 2048 beside video_size.longest_edge 512, so frames are first
//   resized to a longest edge of 2048 (up or down), then squashed to max_image_size x max_image_size.
//   resample 1 (PIL LANCZOS) is not available to the torch video path, which falls back to BICUBIC.

import { ProcessorConfigError } from '../errors';
import type { PixelNormalization } from './pixel-normalization';
import type { ResampleFilter } from './resample';

export interface VideoProcessorConfig {
  /** Frames sampled per second of video (video_sampling.fps). */
  fps: number;
  /** Most frames sampled from one clip (video_sampling.max_frames). */
  maxFrames: number;
  /** Seconds skipped at each end of a clip long enough for it (HF `sample_frames` skip_secs, default 1). */
  skipSecs: number;
  /** First resize: the longest side becomes this (even-rounded other side), as HF's effective `size`. */
  longestEdge: number;
  /** Second resize: every frame becomes tileSize x tileSize (max_image_size.longest_edge); no tiling. */
  tileSize: number;
  /** The interpolation the torch video path uses for the configured resample. */
  resample: Extract<ResampleFilter, 'bilinear' | 'bicubic'>;
  /** Rescale / normalize / convert-to-RGB settings for frames (the image processor's unless a video file overrides them). */
  normalize: PixelNormalization;
}

type Json = Record<string, unknown>;

/** HF SmolVLMVideoProcessor class defaults, used when a key is absent. */
const DEFAULT_TILE = 364;
const DEFAULT_SKIP_SECS = 1;

function positive(v: unknown, file: string, key: string, integer: boolean): number {
  if (typeof v !== 'number' || !(v > 0) || !Number.isFinite(v) || (integer && !Number.isInteger(v))) {
    throw new ProcessorConfigError(`${file}: ${key} must be a positive ${integer ? 'integer' : 'number'}, found ${JSON.stringify(v)}`);
  }
  return v;
}

function longestEdgeOf(v: unknown, file: string, key: string): number {
  const le = v && typeof v === 'object' ? (v as Json).longest_edge : undefined;
  if (typeof le !== 'number' || !Number.isInteger(le) || le < 1) {
    throw new ProcessorConfigError(
      `${file}: ${key} must be {"longest_edge": <positive integer>} for a SmolVLM video processor, found ${JSON.stringify(v)}`,
    );
  }
  return le;
}

/** The torch interpolation HF's video path uses for a PIL resample number (LANCZOS falls back to BICUBIC). */
function videoResample(v: unknown, file: string): VideoProcessorConfig['resample'] {
  const r = v ?? 1;
  if (r === 1 || r === 3) return 'bicubic';
  if (r === 2) return 'bilinear';
  throw new ProcessorConfigError(
    `${file}: resample ${JSON.stringify(v)} has no torch video interpolation here; SmolVLM video frames support 1 (LANCZOS, run as BICUBIC), 2 (BILINEAR) and 3 (BICUBIC).`,
  );
}

/**
 * Video settings from a (video_)preprocessor_config.json object; undefined when it has no video_sampling.
 * `normalize`: the rescale/normalize settings that apply to frames (parsed from the same file).
 */
export function parseVideoProcessorConfig(
  c: Json,
  file: string,
  normalize: VideoProcessorConfig['normalize'],
): VideoProcessorConfig | undefined {
  const sampling = c.video_sampling;
  if (sampling === undefined || sampling === null) return undefined;
  if (typeof sampling !== 'object' || Array.isArray(sampling)) {
    throw new ProcessorConfigError(
      `${file}: video_sampling must be an object {fps, max_frames, video_size}, found ${JSON.stringify(sampling)}`,
    );
  }
  const s = sampling as Json;
  const sizeSource = c.size !== undefined && c.size !== null ? 'size' : 'video_sampling.video_size';
  return {
    fps: positive(s.fps, file, 'video_sampling.fps', false),
    maxFrames: positive(s.max_frames, file, 'video_sampling.max_frames', true),
    skipSecs: DEFAULT_SKIP_SECS,
    longestEdge: longestEdgeOf(sizeSource === 'size' ? c.size : s.video_size, file, sizeSource),
    tileSize:
      c.max_image_size === undefined || c.max_image_size === null ? DEFAULT_TILE : longestEdgeOf(c.max_image_size, file, 'max_image_size'),
    resample: videoResample(c.resample, file),
    normalize,
  };
}

/** Frames must be the vision tower's input size (config.json vision_config.image_size). */
export function checkVideoTileSize(video: VideoProcessorConfig | undefined, visionImageSize: number | undefined): void {
  if (video && visionImageSize !== undefined && video.tileSize !== visionImageSize) {
    throw new ProcessorConfigError(
      `max_image_size.longest_edge for video frames is ${video.tileSize} but config.json vision_config.image_size is ${visionImageSize}; ` +
        'frames would not fit the vision encoder. The checkpoint files do not belong together.',
    );
  }
}
