// resample-torch.ts: torchvision's resize of an 8-bit RGB image with bicubic interpolation and
// antialiasing (`torchvision.transforms.v2.functional.resize(uint8 tensor, BICUBIC, antialias=True)`),
// which HF's fast image processors use (Qwen2VLImageProcessorFast: Qwen2.5-VL and Qwen3-VL, as transformers
// and vLLM load them). torchvision runs it on float32: the uint8 image is widened, resized by
// torch.nn.functional.interpolate(mode='bicubic', antialias=True) and clamped to [0, 255], then rounded
// half to even back to uint8. The interpolation (ATen's separable anti-aliased kernel) is:
//   - separable: a horizontal pass into a float32 intermediate, then a vertical pass;
//   - in each axis scale = in / out (float32), support = 2 · max(scale, 1), the output pixel x samples
//     centre = scale · (x + 0.5); taps run from max(trunc(centre - support + 0.5), 0) to
//     min(trunc(centre + support + 0.5), in), each weighted by the cubic with a = -0.5 (PIL's, not the
//     -0.75 of the non-antialiased bicubic) at (tap - centre + 0.5) / max(scale, 1), normalised to sum 1;
//   - every product and sum in float32, as ATen writes them (the filter's argument is formed in double).
// Unlike Pillow's resampler (resample.ts) there is no fixed point and no 8-bit intermediate, so the two
// differ by a level here and there; test/reference/qwen_image_processor.py runs torchvision itself.

import { roundHalfEven } from '../round-half-even';
import type { RgbImage } from './resample';

const f = Math.fround;

/**
 * The antialiasing cubic (a = -0.5), in float32 in ATen's two forms (cubic_convolution1 below 1,
 * cubic_convolution2 below 2): ((a + 2)·x − (a + 3))·x·x + 1 and ((a·x − 5a)·x + 8a)·x − 4a.
 */
function cubic(x: number): number {
  const a = -0.5;
  const t = f(Math.abs(x));
  if (t < 1) return f(f(f(f(f(f(a + 2) * t) - f(a + 3)) * t) * t) + 1);
  if (t < 2) return f(f(f(f(f(f(a * t) - f(5 * a)) * t) + f(8 * a)) * t) - f(4 * a));
  return 0;
}

interface Taps {
  /** First source index of each output index. */
  start: Int32Array;
  /** Taps per output index. */
  size: Int32Array;
  /** [out, maxSize] normalised weights. */
  weights: Float32Array;
  maxSize: number;
}

function taps(inSize: number, outSize: number): Taps {
  const scale = f(inSize / outSize);
  const wide = Math.max(scale, 1);
  const support = f(2 * wide);
  const inv = scale >= 1 ? f(1 / scale) : 1;
  const maxSize = Math.ceil(support) * 2 + 1;
  const start = new Int32Array(outSize);
  const size = new Int32Array(outSize);
  const weights = new Float32Array(outSize * maxSize);
  for (let i = 0; i < outSize; i++) {
    const center = f(scale * f(i + 0.5));
    const lo = Math.max(Math.trunc(f(f(center - support) + 0.5)), 0);
    const hi = Math.min(Math.trunc(f(f(center + support) + 0.5)), inSize);
    const n = hi - lo;
    let total = 0;
    for (let j = 0; j < n; j++) {
      // (j + lo − centre) in float32, then + 0.5 and × 1/scale in double (C++ promotes at the 0.5 literal),
      // rounded to float32 once as the filter takes it.
      const w = cubic(f((f(j + lo - center) + 0.5) * inv));
      weights[i * maxSize + j] = w;
      total = f(total + w);
    }
    if (total !== 0) for (let j = 0; j < n; j++) weights[i * maxSize + j] = f(weights[i * maxSize + j] / total);
    start[i] = lo;
    size[i] = n;
  }
  return { start, size, weights, maxSize };
}

/** One axis of the separable resize over a float32 [rows, cols, 3] image, along cols or along rows. */
function pass(src: Float32Array, rows: number, cols: number, t: Taps, outLen: number, alongRows: boolean): Float32Array {
  const [outRows, outCols] = alongRows ? [outLen, cols] : [rows, outLen];
  const out = new Float32Array(outRows * outCols * 3);
  // A tap steps one row (cols · 3 values) or one column (3 values) through the source.
  const tapStride = alongRows ? cols * 3 : 3;
  for (let r = 0; r < outRows; r++) {
    for (let c = 0; c < outCols; c++) {
      const i = alongRows ? r : c;
      const first = (alongRows ? t.start[i] * cols + c : r * cols + t.start[i]) * 3;
      const w0 = i * t.maxSize;
      for (let ch = 0; ch < 3; ch++) {
        let acc = f(src[first + ch] * t.weights[w0]);
        for (let j = 1; j < t.size[i]; j++) acc = f(acc + f(src[first + j * tapStride + ch] * t.weights[w0 + j]));
        out[(r * outCols + c) * 3 + ch] = acc;
      }
    }
  }
  return out;
}

/** torchvision's bicubic antialiased resize of `src` to outWidth × outHeight (see above). */
export function resampleRgbTorchBicubic(src: RgbImage, outWidth: number, outHeight: number): RgbImage {
  let img: Float32Array = Float32Array.from(src.data);
  let [rows, cols] = [src.height, src.width];
  if (outWidth !== cols) {
    img = pass(img, rows, cols, taps(cols, outWidth), outWidth, false);
    cols = outWidth;
  }
  if (outHeight !== rows) {
    img = pass(img, rows, cols, taps(rows, outHeight), outHeight, true);
    rows = outHeight;
  }
  const data = new Uint8Array(img.length);
  for (let i = 0; i < img.length; i++) data[i] = roundHalfEven(Math.min(255, Math.max(0, img[i])));
  return { width: outWidth, height: outHeight, data };
}
