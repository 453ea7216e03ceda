// resample.ts: Pillow-compatible separable resampling of 8-bit RGB images (PIL `Image.resize`).
// Follows Pillow's `src/libImaging/Resample.c` (ImagingResample, precompute_coeffs, normalize_coeffs_8bpc,
// ImagingResample{Horizontal,Vertical}_8bpc) so that pixel values match HF Python's image processors, which
// resize with PIL (Idefics3: resample=1, LANCZOS):
//   - separable: a horizontal pass over only the source rows the vertical pass reads, then a vertical pass;
//   - filter support is scaled by the downscale factor (antialiasing); upscaling uses the bare support;
//   - pixel centres at +0.5 (output x samples source centre (x + 0.5) * inSize / outSize);
//   - weights normalised per output pixel, then turned into 22-bit fixed point (rounded away from zero);
//   - each pass accumulates in integers starting from half (1 << 21), shifts right by 22 (floor) and clips
//     to [0, 255]: the intermediate image is 8-bit, exactly as in Pillow.
// Data layout: interleaved RGB u8, row-major: data[(y * width + x) * 3 + c].

import { InternalError, UnsupportedModelError } from '../errors';

export interface RgbImage {
  width: number;
  height: number;
  /** [height, width, 3] u8, row-major, interleaved. */
  data: Uint8Array;
}

/** PIL resampling filters by their `PIL.Image.Resampling` number (the `resample` field of HF configs). */
export type ResampleFilter = 'box' | 'bilinear' | 'hamming' | 'bicubic' | 'lanczos';

const PRECISION_BITS = 32 - 8 - 2;
const HALF = 1 << (PRECISION_BITS - 1);
const ONE = 1 << PRECISION_BITS;

function sinc(x: number): number {
  if (x === 0) return 1;
  const px = x * Math.PI;
  return Math.sin(px) / px;
}

// Filters and supports as in Resample.c (`struct filter`).
const FILTERS: Record<ResampleFilter, { support: number; fn: (x: number) => number }> = {
  box: { support: 0.5, fn: (x) => (x > -0.5 && x <= 0.5 ? 1 : 0) },
  bilinear: {
    support: 1,
    fn: (x) => {
      const a = Math.abs(x);
      return a < 1 ? 1 - a : 0;
    },
  },
  hamming: {
    support: 1,
    fn: (x) => {
      const a = Math.abs(x);
      if (a === 0) return 1;
      if (a >= 1) return 0;
      const px = a * Math.PI;
      // Pillow writes 0.54f + 0.46f: float constants promoted to double.
      return (Math.sin(px) / px) * (Math.fround(0.54) + Math.fround(0.46) * Math.cos(px));
    },
  },
  bicubic: {
    support: 2,
    fn: (x) => {
      const a = -0.5;
      const t = Math.abs(x);
      if (t < 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
      if (t < 2) return (((t - 5) * t + 8) * t - 4) * a;
      return 0;
    },
  },
  lanczos: { support: 3, fn: (x) => (x >= -3 && x < 3 ? sinc(x) * sinc(x / 3) : 0) },
};

/** Maps HF's `resample` number (PIL.Image.Resampling) to a filter; NEAREST (0) is not implemented. */
export function resampleFilterFromPil(resample: number): ResampleFilter {
  const byNumber: Record<number, ResampleFilter> = { 1: 'lanczos', 2: 'bilinear', 3: 'bicubic', 4: 'box', 5: 'hamming' };
  const f = byNumber[resample];
  if (!f) {
    throw new UnsupportedModelError(
      `preprocessor_config.json: resample ${resample} is not supported; Tessera implements PIL filters ` +
        '1 (LANCZOS), 2 (BILINEAR), 3 (BICUBIC), 4 (BOX) and 5 (HAMMING).',
    );
  }
  return f;
}

/** Per-output-pixel source windows and fixed-point weights for one axis (Pillow `precompute_coeffs`). */
interface Coeffs {
  /** Taps per output pixel (stride of `weights`). */
  kSize: number;
  /** [outSize] first source index of each window. */
  start: Int32Array;
  /** [outSize] number of source pixels in each window. */
  count: Int32Array;
  /** [outSize, kSize] weights in 22-bit fixed point. */
  weights: Int32Array;
}

function precomputeCoeffs(inSize: number, outSize: number, filter: ResampleFilter): Coeffs {
  const { support: baseSupport, fn } = FILTERS[filter];
  // Box is (0, inSize): in0 = 0, in1 = inSize (floats in Pillow; exact for these sizes).
  const scale = inSize / outSize;
  const filterScale = Math.max(scale, 1);
  const support = baseSupport * filterScale;
  const kSize = Math.ceil(support) * 2 + 1;
  const start = new Int32Array(outSize);
  const count = new Int32Array(outSize);
  const weights = new Int32Array(outSize * kSize);
  const k = new Float64Array(kSize);
  const ss = 1 / filterScale;
  for (let xx = 0; xx < outSize; xx++) {
    const center = (xx + 0.5) * scale;
    // C casts truncate toward zero; the clamps make that the same as Math.trunc here.
    let xmin = Math.trunc(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    let xmax = Math.trunc(center + support + 0.5);
    if (xmax > inSize) xmax = inSize;
    xmax -= xmin;
    let ww = 0;
    for (let x = 0; x < xmax; x++) {
      const w = fn((x + xmin - center + 0.5) * ss);
      k[x] = w;
      ww += w;
    }
    for (let x = 0; x < xmax; x++) {
      const w = ww !== 0 ? k[x]! / ww : k[x]!;
      // normalize_coeffs_8bpc: round half away from zero, then truncate.
      weights[xx * kSize + x] = w < 0 ? Math.trunc(-0.5 + w * ONE) : Math.trunc(0.5 + w * ONE);
    }
    start[xx] = xmin;
    count[xx] = xmax;
  }
  return { kSize, start, count, weights };
}

function clip8(ss: number): number {
  // Pillow: clip8_lookups[ss >> PRECISION_BITS] (arithmetic shift = floor), clamped to [0, 255].
  const v = ss >> PRECISION_BITS;
  return v < 0 ? 0 : Math.min(v, 255);
}

/** Horizontal pass over source rows [rowStart, rowStart + numRows). */
function resampleHorizontal(src: RgbImage, outWidth: number, rowStart: number, numRows: number, c: Coeffs): RgbImage {
  const out = new Uint8Array(outWidth * numRows * 3);
  const { kSize, start, count, weights } = c;
  const inRow = src.width * 3;
  const s = src.data;
  for (let y = 0; y < numRows; y++) {
    const rowBase = (y + rowStart) * inRow;
    const outBase = y * outWidth * 3;
    for (let xx = 0; xx < outWidth; xx++) {
      const kBase = xx * kSize;
      const n = count[xx]!;
      let p = rowBase + start[xx]! * 3;
      let s0 = HALF;
      let s1 = HALF;
      let s2 = HALF;
      for (let x = 0; x < n; x++, p += 3) {
        const w = weights[kBase + x]!;
        s0 += s[p]! * w;
        s1 += s[p + 1]! * w;
        s2 += s[p + 2]! * w;
      }
      const o = outBase + xx * 3;
      out[o] = clip8(s0);
      out[o + 1] = clip8(s1);
      out[o + 2] = clip8(s2);
    }
  }
  return { width: outWidth, height: numRows, data: out };
}

/** Vertical pass; `rowOffset` is subtracted from the window starts (the horizontal pass skipped those rows). */
function resampleVertical(src: RgbImage, outHeight: number, rowOffset: number, c: Coeffs): RgbImage {
  const width = src.width;
  const rowLen = width * 3;
  const out = new Uint8Array(rowLen * outHeight);
  const { kSize, start, count, weights } = c;
  const s = src.data;
  for (let yy = 0; yy < outHeight; yy++) {
    const kBase = yy * kSize;
    const n = count[yy]!;
    const rowBase = (start[yy]! - rowOffset) * rowLen;
    const o = yy * rowLen;
    for (let i = 0; i < rowLen; i++) {
      let ss = HALF;
      for (let y = 0, p = rowBase + i; y < n; y++, p += rowLen) ss += s[p]! * weights[kBase + y]!;
      out[o + i] = clip8(ss);
    }
  }
  return { width, height: outHeight, data: out };
}

/**
 * Resizes an RGB image to outWidth x outHeight exactly as Pillow's `Image.resize(size, filter)` does for
 * mode "RGB" (no box, no reducing_gap). Same size returns a copy, as Pillow does.
 */
export function resampleRgb(src: RgbImage, outWidth: number, outHeight: number, filter: ResampleFilter): RgbImage {
  if (!Number.isInteger(outWidth) || !Number.isInteger(outHeight) || outWidth < 1 || outHeight < 1) {
    throw new InternalError(`resampleRgb: output size ${outWidth}x${outHeight} must be positive integers`);
  }
  if (src.data.length !== src.width * src.height * 3) {
    throw new InternalError(
      `resampleRgb: ${src.width}x${src.height} RGB needs ${src.width * src.height * 3} bytes but data has ${src.data.length}`,
    );
  }
  const needH = outWidth !== src.width;
  const needV = outHeight !== src.height;
  if (!needH && !needV) return { width: src.width, height: src.height, data: src.data.slice() };
  const vert = precomputeCoeffs(src.height, outHeight, filter);
  let img = src;
  let rowOffset = 0;
  if (needH) {
    // Only rows some output row reads (ybox_first .. ybox_last in Pillow).
    const first = vert.start[0]!;
    const last = vert.start[outHeight - 1]! + vert.count[outHeight - 1]!;
    img = resampleHorizontal(src, outWidth, first, last - first, precomputeCoeffs(src.width, outWidth, filter));
    rowOffset = first;
  }
  if (needV) img = resampleVertical(img, outHeight, rowOffset, vert);
  return img;
}
