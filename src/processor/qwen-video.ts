// Video in the Qwen-VL families (HF `Qwen2VLVideoProcessor`, which Qwen2.5-VL loads, and
// `Qwen3VLVideoProcessor`): which frames of a clip are taken, the size every frame is resized to, and the
// frame groups of the temporal patch. Python's and numpy's arithmetic is reproduced where it decides a count
// or a size (round() and numpy's round() tie to even; int() truncates).
//
//   Qwen2.5-VL   frames: at `fps` (2) frames per second, as Qwen2VLVideoProcessor.sample_frames does when
//                given fps: n = total / video_fps · fps within [min_frames, max_frames] and the clip, floored
//                to a multiple of the temporal patch; indices = arange(0, total, total / n), truncated.
//                size: each frame's own smart resize within the image pixel budget (the checkpoint has no
//                video_preprocessor_config.json, so HF's video processor reads preprocessor_config.json).
//                time: seconds per frame group = temporal_patch / 2 (HF's and vLLM's default fps of 2).
//   Qwen3-VL     frames: n = int(total / video_fps · fps) within [min_frames, max_frames] and the clip;
//                indices = numpy.linspace(0, total - 1, n).round(). size: one resize for the whole clip,
//                whose frames · height · width stay within video_preprocessor_config.json's budget.
//                time: each frame group's timestamp (the mean of its first and last frame's) is written
//                in the prompt, "<0.8 seconds>".
//
// A frame count that does not fill the temporal patch is padded by repeating the last frame. vLLM's
// default video loader takes 32 evenly spaced frames instead (its Qwen3-VL processor samples at 2 fps
// only for clips of at most 32 frames); transformers' rule is the one followed here.

import { InvalidMessageError, ModelConfigError } from '../errors';
import type { Json } from '../model/config-fields';
import { roundHalfEven } from '../round-half-even';
import type { QwenImageProcessorConfig } from './qwen-image-processor';
import { smartResize } from './smart-resize';

export interface QwenVideoConfig {
  family: 'qwen2_5_vl' | 'qwen3_vl';
  /** Frames sampled per second of clip. */
  fps: number;
  minFrames: number;
  maxFrames: number;
  /** Pixel budget: per frame (Qwen2.5-VL), or frames · height · width of the whole clip (Qwen3-VL). */
  minPixels: number;
  maxPixels: number;
}

/** HF Qwen2VLVideoProcessor's and Qwen3VLVideoProcessor's class defaults. */
const DEFAULTS = { fps: 2, min_frames: 4, max_frames: 768 };
/** Qwen3VLVideoProcessor's `size` default, when video_preprocessor_config.json has none. */
const QWEN3_SIZE = { shortest_edge: 128 * 32 * 32, longest_edge: 32 * 32 * 768 };

/**
 * The video settings: Qwen3-VL's video_preprocessor_config.json (`video`), or for Qwen2.5-VL the image
 * processor's pixel budget (HF's fallback to preprocessor_config.json).
 */
export function parseQwenVideoConfig(
  family: QwenVideoConfig['family'],
  image: QwenImageProcessorConfig,
  video: Json | undefined,
): QwenVideoConfig {
  const v = video ?? {};
  const num = (key: string, fallback: number): number => {
    const x = v[key] ?? fallback;
    if (typeof x !== 'number' || !Number.isFinite(x) || x <= 0) {
      throw new ModelConfigError(`video_preprocessor_config.json: ${key} must be a positive number, found ${JSON.stringify(x)}`);
    }
    return x;
  };
  for (const key of ['patch_size', 'temporal_patch_size', 'merge_size'] as const) {
    const mine = { patch_size: image.patchSize, temporal_patch_size: image.temporalPatchSize, merge_size: image.mergeSize }[key];
    if (v[key] !== undefined && v[key] !== mine) {
      throw new ModelConfigError(
        `video_preprocessor_config.json ${key} is ${String(v[key])} but preprocessor_config.json has ${mine}; Tessera runs one tower for both`,
      );
    }
  }
  const size = (v.size && typeof v.size === 'object' ? v.size : {}) as Json;
  const budget =
    family === 'qwen3_vl'
      ? {
          minPixels: num('min_pixels', (size.shortest_edge as number) ?? QWEN3_SIZE.shortest_edge),
          maxPixels: num('max_pixels', (size.longest_edge as number) ?? QWEN3_SIZE.longest_edge),
        }
      : { minPixels: image.minPixels, maxPixels: image.maxPixels };
  const config: QwenVideoConfig = {
    family,
    fps: num('fps', DEFAULTS.fps),
    minFrames: num('min_frames', DEFAULTS.min_frames),
    maxFrames: num('max_frames', DEFAULTS.max_frames),
    ...budget,
  };
  if (config.minFrames > config.maxFrames) {
    throw new ModelConfigError(`video_preprocessor_config.json: min_frames ${config.minFrames} exceeds max_frames ${config.maxFrames}`);
  }
  return config;
}

/** The frame indices of a clip of `total` frames at `videoFps` the family's processor takes (ascending, distinct). */
export function sampleQwenFrames(total: number, videoFps: number, c: QwenVideoConfig, temporalPatch: number): number[] {
  if (!(Number.isInteger(total) && total >= 1 && videoFps > 0)) {
    throw new InvalidMessageError(`a clip of ${total} frames at ${videoFps} fps has no frames to sample`);
  }
  if (c.family === 'qwen3_vl') {
    let n = Math.trunc((total / videoFps) * c.fps);
    n = Math.min(Math.min(Math.max(n, c.minFrames), c.maxFrames), total);
    // numpy.linspace(0, total - 1, n): i · step, the last exactly total - 1; .round() ties to even.
    const step = n > 1 ? (total - 1) / (n - 1) : 0;
    const indices = Array.from({ length: n }, (_, i) => roundHalfEven(n > 1 && i === n - 1 ? total - 1 : i * step));
    return [...new Set(indices)];
  }
  const cap = Math.floor(Math.min(c.maxFrames, total) / temporalPatch) * temporalPatch;
  let n = (total / videoFps) * c.fps;
  n = Math.min(Math.min(Math.max(n, c.minFrames), cap), total);
  n = Math.floor(n / temporalPatch) * temporalPatch;
  if (n < 1) n = Math.min(total, temporalPatch);
  // torch.arange(0, total, total / n).int(): n steps (the float step can yield one index more, past the
  // clip's end; it is not taken).
  const step = total / n;
  return Array.from({ length: n }, (_, i) => Math.min(total - 1, Math.trunc(i * step)));
}

/**
 * [height, width] every frame of a video of `numFrames` frames of `height` × `width` is resized to: each
 * frame's smart resize (Qwen2.5-VL), or Qwen3-VL's over the whole clip (frames rounded to the temporal
 * patch, times the area, within the budget).
 */
export function qwenVideoSize(
  numFrames: number,
  height: number,
  width: number,
  c: QwenVideoConfig,
  g: { patchSize: number; mergeSize: number; temporalPatchSize: number },
): [number, number] {
  const factor = g.patchSize * g.mergeSize;
  if (c.family === 'qwen2_5_vl') return smartResize(height, width, { factor, minPixels: c.minPixels, maxPixels: c.maxPixels });
  const T = g.temporalPatchSize;
  if (numFrames < T) {
    throw new InvalidMessageError(`a Qwen3-VL video needs at least ${T} frames (the temporal patch); this one has ${numFrames}`);
  }
  if (height < factor || width < factor) {
    throw new InvalidMessageError(
      `a Qwen3-VL video's frames must be at least ${factor} x ${factor} pixels; these are ${width} x ${height}`,
    );
  }
  let h = roundHalfEven(height / factor) * factor;
  let w = roundHalfEven(width / factor) * factor;
  const t = roundHalfEven(numFrames / T) * T;
  if (t * h * w > c.maxPixels) {
    const beta = Math.sqrt((numFrames * height * width) / c.maxPixels);
    h = Math.max(factor, Math.floor(height / beta / factor) * factor);
    w = Math.max(factor, Math.floor(width / beta / factor) * factor);
  } else if (t * h * w < c.minPixels) {
    const beta = Math.sqrt(c.minPixels / (numFrames * height * width));
    h = Math.ceil((height * beta) / factor) * factor;
    w = Math.ceil((width * beta) / factor) * factor;
  }
  return [h, w];
}

/**
 * Qwen3-VL's timestamp of each frame group: the mean of its first and last frame's seconds, the frame
 * list padded with its last frame (HF Qwen3VLProcessor._calculate_timestamps).
 */
export function qwenGroupTimestamps(seconds: readonly number[], groupSize: number): number[] {
  const padded = [...seconds];
  while (padded.length % groupSize !== 0) padded.push(padded[padded.length - 1]!);
  const out: number[] = [];
  for (let i = 0; i < padded.length; i += groupSize) out.push((padded[i]! + padded[i + groupSize - 1]!) / 2);
  return out;
}

/**
 * Python's f"{x:.1f}": the exact binary value rounded to tenths, ties to even. Ties are exactly the
 * values whose quadruple is an odd integer (0.25, 0.75, 1.25, ...: no other tenth-and-a-half is exact in
 * binary), where JavaScript's toFixed rounds up instead.
 */
export function pythonFixed1(x: number): string {
  const q = 4 * x;
  if (Number.isInteger(q) && Math.abs(q) % 2 === 1) {
    const tenths = roundHalfEven(x * 10);
    return (tenths / 10).toFixed(1);
  }
  return x.toFixed(1);
}
