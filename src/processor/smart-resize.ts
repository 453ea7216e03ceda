// The image size a Qwen2-VL-style processor resizes to (Qwen2-VL, Qwen2.5-VL, Qwen3-VL): both sides a
// multiple of `factor` (patch size × merge size), the area within [minPixels, maxPixels], the aspect
// ratio kept as closely as that allows. Written from HF `smart_resize` (image_processing_qwen2_vl.py).
// Python's round() rounds halves to even, and so does roundHalfEven here: 42 / 28 = 1.5 rounds to 2,
// 70 / 28 = 2.5 rounds to 2 as well. The image's grid of patches and its token count follow from the
// size; test/reference/qwen_smart_resize.py writes the reference cases the unit test reads.

import { InvalidMessageError } from '../errors';
import { roundHalfEven } from '../round-half-even';

export interface SmartResizeOptions {
  /** patch_size × merge_size: 28 for Qwen2-VL and Qwen2.5-VL, 32 for Qwen3-VL. */
  factor: number;
  minPixels: number;
  maxPixels: number;
}

/** The largest ratio of the longer side to the shorter one the processor takes (HF refuses more). */
const MAX_ASPECT_RATIO = 200;

/** [height, width] after the resize. */
export function smartResize(height: number, width: number, o: SmartResizeOptions): [number, number] {
  if (!(Number.isInteger(height) && Number.isInteger(width) && height > 0 && width > 0)) {
    throw new InvalidMessageError(`an image of ${width} x ${height} pixels has no area to resize`);
  }
  const ratio = Math.max(height, width) / Math.min(height, width);
  if (ratio > MAX_ASPECT_RATIO) {
    throw new InvalidMessageError(
      `an image of ${width} x ${height} pixels is ${ratio.toFixed(1)} times longer than it is wide; ` +
        `this processor takes at most ${MAX_ASPECT_RATIO}: crop or pad it first`,
    );
  }
  const f = o.factor;
  let h = roundHalfEven(height / f) * f;
  let w = roundHalfEven(width / f) * f;
  if (h * w > o.maxPixels) {
    const beta = Math.sqrt((height * width) / o.maxPixels);
    h = Math.max(f, Math.floor(height / beta / f) * f);
    w = Math.max(f, Math.floor(width / beta / f) * f);
  } else if (h * w < o.minPixels) {
    const beta = Math.sqrt(o.minPixels / (height * width));
    h = Math.ceil((height * beta) / f) * f;
    w = Math.ceil((width * beta) / f) * f;
  }
  return [h, w];
}

/** An image's patch grid after the resize: t = 1 (one frame, repeated to the temporal patch), h and w in patches. */
export interface PatchGrid {
  t: number;
  h: number;
  w: number;
}

/** The grid of an image and its LM tokens: t·h·w patches, merged merge × merge into one token each. */
export function imagePatchGrid(
  height: number,
  width: number,
  o: SmartResizeOptions & { patchSize: number; mergeSize: number },
): { grid: PatchGrid; tokens: number; resized: [number, number] } {
  const resized = smartResize(height, width, o);
  const grid = { t: 1, h: resized[0] / o.patchSize, w: resized[1] / o.patchSize };
  return { grid, tokens: (grid.t * grid.h * grid.w) / (o.mergeSize * o.mergeSize), resized };
}
