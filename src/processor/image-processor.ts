// image-processor.ts: decoded pixels → Idefics3 tiles, matching HF `Idefics3ImageProcessor` with PIL
// resampling (resample.ts is bit-exact with Pillow's Resample.c). Sizes come from image-layout.ts.
//
//   RGB (composited over white) ─resize→ resized ─resize→ encoderSize ─crop→ rows x cols tiles (row-major)
//                                                              └─resize→ T x T global image (last tile)
//   u8 tiles [numTiles, 3, T, T] ─(x * rescale_factor - mean) / std, in f32 as numpy does→ pixelValues
//
// Every resize is a separate Pillow resize, as in HF (two Lanczos passes in a row are NOT fused: fusing would
// change the pixels). A non-split image is the T x T image itself (rows = cols = 0).

import { InternalError } from '../errors';
import type { DecodedImage } from './image-decode';
import { toRgb } from './image-decode';
import { imageLayout, type ImageLayout, type Size } from './image-layout';
import type { ImageProcessorConfig } from './processor-config';
import { resampleRgb, type RgbImage } from './resample';

export interface ProcessedImage {
  layout: ImageLayout;
  /** [numTiles, 3, T, T] u8 channels-first: grid tiles row-major, then the global image. */
  tilesU8: Uint8Array;
  /** [numTiles, 3, T, T] f32 channels-first, rescaled and normalised. */
  pixelValues: Float32Array;
  /**
   * [numTiles, T, T] u8, 1 = real pixel, 0 = padding; null when nothing is padded. Every tile of a split or
   * single image is exactly T x T (HF pads only across the images of a batch), so one request never pads
   * and this is always null here; the field exists for callers that batch images of different tile counts.
   */
  pixelMask: Uint8Array | null;
}

/**
 * Images above this many pixels may be shrunk while decoding (see shrinkTarget). Below it the decode is full
 * size and the result is bit-exact with HF + PIL. 4096 x 4096 = 16.8 MP (50 MB as RGB).
 */
export const PRESHRINK_MIN_PIXELS = 4096 * 4096;
/** A pre-shrunk image keeps at least this many source pixels per output pixel of the first resize. */
export const PRESHRINK_GAP = 2;

/**
 * The decode size for a large image: per side min(source, PRESHRINK_GAP x first-resize size), applied only
 * above PRESHRINK_MIN_PIXELS. Deviation from HF, for such images only: HF Lanczos-resizes the full-resolution
 * image once; we let the decoder (libvips lanczos3 / the browser's 'high' resize) shrink to at least twice
 * the final size first and then apply the exact PIL Lanczos. The second stage does the band-limiting, so
 * the difference is small (a few levels on fine texture), and peak memory stays near the shrunk image
 * (about 50 MB for size.longest_edge = 2048) instead of the full decode (400 MB RGBA at 10000 x 10000).
 * Layouts and token counts always come from the source size, so they are unaffected.
 */
export function shrinkTarget(source: Size, config: ImageProcessorConfig): Size | undefined {
  if (!config.doResize || source.width * source.height <= PRESHRINK_MIN_PIXELS) return undefined;
  const resized = imageLayout(source.width, source.height, config, 1).resized;
  const width = Math.min(source.width, PRESHRINK_GAP * resized.width);
  const height = Math.min(source.height, PRESHRINK_GAP * resized.height);
  return width < source.width || height < source.height ? { width, height } : undefined;
}

/** Resize + split to u8 tiles. `image` may be a decoder-shrunk version of the source (see shrinkTarget). */
export function imageToTiles(image: DecodedImage, config: ImageProcessorConfig): { layout: ImageLayout; tilesU8: Uint8Array } {
  const layout = imageLayout(image.sourceWidth, image.sourceHeight, config, 1);
  const T = layout.tileSize;
  const filter = config.resample;
  let img: RgbImage = toRgb(image);
  const resizeTo = (s: Size): void => {
    if (img.width !== s.width || img.height !== s.height) img = resampleRgb(img, s.width, s.height, filter);
  };
  if (config.doResize) resizeTo(layout.resized);
  // Without do_resize a decoder never shrinks, so the image is at source size here.
  resizeTo(layout.encoderSize);
  const tileElems = 3 * T * T;
  const tiles = new Uint8Array(layout.numTiles * tileElems);
  let t = 0;
  for (let r = 0; r < layout.rows; r++) {
    for (let c = 0; c < layout.cols; c++) copyTileChw(img, c * T, r * T, T, tiles, t++ * tileElems);
  }
  resizeTo({ width: T, height: T });
  copyTileChw(img, 0, 0, T, tiles, t++ * tileElems);
  if (t !== layout.numTiles) throw new InternalError(`imageToTiles wrote ${t} tiles but the layout has ${layout.numTiles}`);
  return { layout, tilesU8: tiles };
}

/** Copies the T x T square at (x0, y0) of an HWC RGB image into CHW at out[offset]. */
function copyTileChw(img: RgbImage, x0: number, y0: number, T: number, out: Uint8Array, offset: number): void {
  if (x0 + T > img.width || y0 + T > img.height) {
    throw new InternalError(`tile at (${x0}, ${y0}) size ${T} is outside the ${img.width}x${img.height} image`);
  }
  const plane = T * T;
  for (let y = 0; y < T; y++) {
    let src = ((y0 + y) * img.width + x0) * 3;
    const dst = offset + y * T;
    for (let x = 0; x < T; x++, src += 3) {
      out[dst + x] = img.data[src]!;
      out[dst + plane + x] = img.data[src + 1]!;
      out[dst + 2 * plane + x] = img.data[src + 2]!;
    }
  }
}

/**
 * u8 CHW tiles → f32, as HF numpy does: x.astype(float64) * rescale_factor → float32, then
 * (x - float32(mean)) / float32(std) in float32. Each channel is a 256-entry lookup table.
 */
export function normalizeTiles(
  tilesU8: Uint8Array,
  tileSize: number,
  config: Pick<ImageProcessorConfig, 'doRescale' | 'rescaleFactor' | 'doNormalize' | 'imageMean' | 'imageStd'>,
): Float32Array {
  const plane = tileSize * tileSize;
  if (tilesU8.length % (3 * plane) !== 0) {
    throw new InternalError(`normalizeTiles: ${tilesU8.length} bytes is not a whole number of 3x${tileSize}x${tileSize} tiles`);
  }
  const luts = [0, 1, 2].map((ch) => {
    const lut = new Float32Array(256);
    const mean = Math.fround(config.imageMean[ch]!);
    const std = Math.fround(config.imageStd[ch]!);
    for (let v = 0; v < 256; v++) {
      let x = config.doRescale ? Math.fround(v * config.rescaleFactor) : v;
      if (config.doNormalize) x = Math.fround(Math.fround(x - mean) / std);
      lut[v] = x;
    }
    return lut;
  });
  const out = new Float32Array(tilesU8.length);
  for (let base = 0; base < tilesU8.length; base += 3 * plane) {
    for (let ch = 0; ch < 3; ch++) {
      const lut = luts[ch]!;
      const o = base + ch * plane;
      for (let i = 0; i < plane; i++) out[o + i] = lut[tilesU8[o + i]!]!;
    }
  }
  return out;
}

/** The whole image processor for one decoded image. `imageSeqLen` fills layout.numImageTokens. */
export function processImage(image: DecodedImage, config: ImageProcessorConfig, imageSeqLen: number): ProcessedImage {
  const { layout: l, tilesU8 } = imageToTiles(image, config);
  const layout = { ...l, numImageTokens: l.numTiles * imageSeqLen };
  return { layout, tilesU8, pixelValues: normalizeTiles(tilesU8, layout.tileSize, config), pixelMask: null };
}
