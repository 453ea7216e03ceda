// The patch rows a Qwen2-VL-style vision tower reads (HF Qwen2VLImageProcessor._preprocess, used by
// Qwen2.5-VL and Qwen3-VL): frames [C, H, W] of a resized, normalised image or video, H = gh·P and
// W = gw·P, are taken T at a time (the temporal patch; an image is its one frame repeated T times) and cut
// into P × P patches. Each patch is one row of C·T·P·P values (channel, then frame, then y, then x), and
// the rows go merge block by merge block, so the m × m patches that merge into one LM token are
// consecutive: row = ((ti·(gh/m) + bh)·(gw/m) + bw)·m² + mh·m + mw for patch (bh·m + mh, bw·m + mw) of
// frame group ti. test/reference/qwen_patches.py writes the reference order the unit test reads.

import { InvalidMessageError } from '../errors';
import type { PatchGrid } from './smart-resize';

export interface PatchGeometry {
  channels: number;
  patchSize: number;
  temporalPatchSize: number;
  mergeSize: number;
}

/** frames: each [C, gh·P, gw·P] channel-first; their count a multiple of the temporal patch. */
export function flattenPatches(frames: readonly Float32Array[], grid: Omit<PatchGrid, 't'>, g: PatchGeometry): Float32Array {
  const { channels: C, patchSize: P, temporalPatchSize: T, mergeSize: m } = g;
  const H = grid.h * P;
  const W = grid.w * P;
  if (frames.length === 0 || frames.length % T !== 0) {
    throw new InvalidMessageError(`${frames.length} frame(s) do not fill temporal patches of ${T}`);
  }
  if (grid.h % m !== 0 || grid.w % m !== 0) {
    throw new InvalidMessageError(`a ${grid.h} x ${grid.w} patch grid does not split into ${m} x ${m} merge blocks`);
  }
  for (const f of frames) {
    if (f.length !== C * H * W) throw new InvalidMessageError(`a frame holds ${f.length} values, not ${C} x ${H} x ${W}`);
  }
  const rowLen = C * T * P * P;
  const out = new Float32Array((frames.length / T) * grid.h * grid.w * rowLen);
  let o = 0;
  for (let ti = 0; ti < frames.length / T; ti++) {
    for (let bh = 0; bh < grid.h / m; bh++) {
      for (let bw = 0; bw < grid.w / m; bw++) {
        for (let mh = 0; mh < m; mh++) {
          for (let mw = 0; mw < m; mw++) {
            const y0 = (bh * m + mh) * P;
            const x0 = (bw * m + mw) * P;
            for (let c = 0; c < C; c++) {
              for (let t = 0; t < T; t++) {
                const frame = frames[ti * T + t]!;
                for (let py = 0; py < P; py++) {
                  const base = (c * H + y0 + py) * W + x0;
                  for (let px = 0; px < P; px++) out[o++] = frame[base + px]!;
                }
              }
            }
          }
        }
      }
    }
  }
  return out;
}

/** An image's rows: its one frame repeated to the temporal patch. */
export function flattenImagePatches(image: Float32Array, grid: Omit<PatchGrid, 't'>, g: PatchGeometry): Float32Array {
  return flattenPatches(Array<Float32Array>(g.temporalPatchSize).fill(image), grid, g);
}
