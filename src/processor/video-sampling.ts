// video-sampling.ts: which frames of a clip SmolVLM2 looks at. Follows HF `SmolVLMVideoProcessor.sample_frames`
// (video_processing_smolvlm.py) and `VideoMetadata.timestamps` (video_utils.py), with Python's and numpy's
// arithmetic reproduced exactly, because the sampled count and timestamps end up in the prompt text:
//
//   estimated = int(round(fps * duration))            Python round(): ties to EVEN (round(2.5) == 2)
//   desired   = max(1, min(estimated, max_frames))
//   [start, end] = [0, total - 1], or, when duration - 2 * skip_secs > max_frames * fps (a long clip),
//                  [int(skip_secs * video_fps), int(total - skip_secs * video_fps)], clamped; an empty range
//                  falls back to [0, total - 1]
//   indices   = unique(linspace(start, end, desired, dtype=int))     i * step + start in float64, last = end,
//                                                                    truncated; sorted and deduplicated
//   timestamps[i] = indices[i] / video_fps            (seconds; what "Frame from MM:SS" prints)
//
// `metadata` is what a decoder reports (HF's pyav/decord backends): total frames, the average frame rate,
// and duration = total / fps. Counts are known from the container alone, before any frame is decoded
// (docs/design.md invariant 2).

import { InternalError } from '../errors';
import type { VideoProcessorConfig } from './video-config';

export interface VideoMetadata {
  /** Frames in the clip (video packets, in presentation order). */
  numFrames: number;
  /** Average frame rate (frames per second). */
  fps: number;
  /** Seconds: numFrames / fps for a decoded clip. */
  duration: number;
}

export interface FrameSample {
  /** Sampled frame indices, ascending, distinct. */
  indices: number[];
  /** indices[i] / fps, in seconds. */
  timestamps: number[];
}

/** Python 3 round() of a float to an integer: nearest, ties to even. */
function pythonRound(x: number): number {
  const f = Math.floor(x);
  const d = x - f; // exact for |x| < 2^52
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/** numpy.linspace(start, stop, num, dtype=int) for num >= 1 (float64 steps, endpoint exact, truncated). */
function linspaceInt(start: number, stop: number, num: number): number[] {
  if (!Number.isInteger(num) || num < 1) throw new InternalError(`linspaceInt: num must be a positive integer, got ${num}`);
  const div = num - 1;
  const step = div > 0 ? (stop - start) / div : 0;
  const out: number[] = [];
  for (let i = 0; i < num; i++) out.push(Math.trunc(div > 0 && i === div ? stop : i * step + start));
  return out;
}

/** HF SmolVLM `sample_frames`: the frame indices to keep, and their timestamps. */
export function sampleFrames(meta: VideoMetadata, config: Pick<VideoProcessorConfig, 'fps' | 'maxFrames' | 'skipSecs'>): FrameSample {
  const { numFrames: total, fps: videoFps, duration } = meta;
  if (!Number.isInteger(total) || total < 1 || !(videoFps > 0) || !(duration > 0)) {
    throw new InternalError(`sampleFrames: metadata ${JSON.stringify(meta)} must have frames >= 1, fps > 0 and duration > 0`);
  }
  const estimated = Math.trunc(pythonRound(config.fps * duration));
  const desired = Math.max(1, Math.min(estimated, config.maxFrames));
  let start = 0;
  let end = total - 1;
  if (config.skipSecs > 0 && duration - 2 * config.skipSecs > config.maxFrames * config.fps) {
    start = Math.trunc(config.skipSecs * videoFps);
    end = Math.trunc(total - config.skipSecs * videoFps);
  }
  start = Math.max(0, start);
  end = Math.min(end, total - 1);
  if (start >= end) [start, end] = [0, total - 1];
  const indices = [...new Set(linspaceInt(start, end, desired))].sort((a, b) => a - b);
  return { indices, timestamps: indices.map((i) => i / videoFps) };
}
