// image-decode.ts: image bytes → 8-bit pixels, and pixels → RGB composited over white (HF `convert_to_rgb`).
// The browser/worker decoder lives here (createImageBitmap + OffscreenCanvas); the Node decoder (sharp) is in
// image-decode-node.ts so that browser bundles never import sharp.
//
// Orientation: EXIF orientation is applied (like HF `load_image`, which calls `ImageOps.exif_transpose`).
// Colour: embedded ICC profiles are ignored (PIL does not colour-manage either).

import { ImageDecodeError, ImageTooLargeError } from '../errors';
import type { RgbImage } from './resample';
import type { Size } from './image-layout';

/** Decoded pixels, interleaved, row-major: data[(y * width + x) * channels + c]. */
export interface RawImage {
  width: number;
  height: number;
  /** 1 gray, 2 gray+alpha, 3 RGB, 4 RGBA. */
  channels: 1 | 2 | 3 | 4;
  data: Uint8Array | Uint8ClampedArray;
}

/** A decoded image plus the size of the image it was decoded from (larger when the decoder shrank it). */
export interface DecodedImage extends RawImage {
  /** The source image's size after EXIF orientation: what HF would see, and what layouts are computed from. */
  sourceWidth: number;
  sourceHeight: number;
}

export interface DecodeOptions {
  /**
   * Called with the oriented source size once it is known; may return a smaller size to decode to (the
   * decoder then shrinks while decoding instead of holding the full image). Return undefined for full size.
   */
  shrinkTo?: (source: Size) => Size | undefined;
}

export type ImageDecoder = (bytes: Uint8Array, options?: DecodeOptions) => Promise<DecodedImage>;

/** Largest image the decoders accept: 0x3FFF x 0x3FFF, sharp's default limit (about 268 megapixels). */
export const MAX_DECODE_PIXELS = 0x3fff * 0x3fff;

/**
 * Pixels → RGB. Alpha is composited over opaque white with Pillow's integer arithmetic
 * (`Image.alpha_composite(white, rgba)` in AlphaComposite.c), as HF `convert_to_rgb` does.
 *
 * Deviation: HF resizes the RGBA image first (PIL premultiplies alpha for the resize) and composites the
 * tiles afterwards; we composite first. Compositing over white is linear in premultiplied space, so the two
 * orders differ only by rounding (about 1 level) on semi-transparent pixels; opaque images are unaffected.
 */
export function toRgb(img: RawImage): RgbImage {
  const { width, height, channels, data } = img;
  const n = width * height;
  if (data.length !== n * channels) {
    throw new ImageDecodeError(`decoded image claims ${width}x${height}x${channels} but has ${data.length} bytes; the decoder is broken.`);
  }
  if (channels === 3 && data instanceof Uint8Array) return { width, height, data };
  const out = new Uint8Array(n * 3);
  if (channels === 3) {
    out.set(data);
    return { width, height, data: out };
  }
  for (let i = 0; i < n; i++) {
    let r: number;
    let g: number;
    let b: number;
    let a: number;
    if (channels === 1 || channels === 2) {
      r = g = b = data[i * channels]!;
      a = channels === 2 ? data[i * 2 + 1]! : 255;
    } else {
      r = data[i * 4]!;
      g = data[i * 4 + 1]!;
      b = data[i * 4 + 2]!;
      a = data[i * 4 + 3]!;
    }
    if (a !== 255) {
      r = overWhite(r, a);
      g = overWhite(g, a);
      b = overWhite(b, a);
    }
    out[i * 3] = r;
    out[i * 3 + 1] = g;
    out[i * 3 + 2] = b;
  }
  return { width, height, data: out };
}

/** Pillow AlphaComposite.c with dst = opaque white: coef1 = a << 7, coef2 = (255 - a) << 7, 7-bit precision. */
function overWhite(v: number, a: number): number {
  if (a === 0) return 255;
  const t = v * (a << 7) + 255 * ((255 - a) << 7) + (0x80 << 7);
  return (((t >> 8) + t) >> 8) >> 7;
}

export function checkPixelLimit(width: number, height: number): void {
  if (width * height > MAX_DECODE_PIXELS) throw new ImageTooLargeError(width, height, MAX_DECODE_PIXELS);
}

/**
 * Browser / worker decoder. createImageBitmap decodes (orientation from EXIF, no premultiplication, no colour
 * conversion); when `shrinkTo` asks for a smaller size a second createImageBitmap resizes with
 * resizeQuality 'high' before any pixels reach JS, so the JS heap holds only the shrunk RGBA.
 * Caveat: a 2D canvas stores premultiplied alpha in most browsers, so semi-transparent pixels can lose a
 * little precision in drawImage/getImageData even with premultiplyAlpha 'none'.
 */
export async function decodeImageBrowser(bytes: Uint8Array, options: DecodeOptions = {}): Promise<DecodedImage> {
  if (bytes.length === 0) throw new ImageDecodeError('image has 0 bytes; send the file contents, not an empty buffer.');
  const blob = new Blob([bytes as Uint8Array<ArrayBuffer>]);
  const bitmapOptions: ImageBitmapOptions = {
    imageOrientation: 'from-image',
    premultiplyAlpha: 'none',
    colorSpaceConversion: 'none',
  };
  let bitmap: ImageBitmap;
  try {
    bitmap = await createImageBitmap(blob, bitmapOptions);
  } catch (e) {
    throw new ImageDecodeError(
      `${bytes.length} bytes could not be decoded as an image (${(e as Error).message || String(e)}); ` +
        'send a PNG, JPEG, GIF or WebP file.',
      { cause: e },
    );
  }
  const sourceWidth = bitmap.width;
  const sourceHeight = bitmap.height;
  try {
    checkPixelLimit(sourceWidth, sourceHeight);
    const target = options.shrinkTo?.({ width: sourceWidth, height: sourceHeight });
    if (target && (target.width < sourceWidth || target.height < sourceHeight)) {
      const small = await createImageBitmap(bitmap, {
        ...bitmapOptions,
        imageOrientation: 'none',
        resizeWidth: target.width,
        resizeHeight: target.height,
        resizeQuality: 'high',
      });
      bitmap.close();
      bitmap = small;
    }
    const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
    const ctx = canvas.getContext('2d', { willReadFrequently: true });
    if (!ctx) throw new ImageDecodeError('OffscreenCanvas 2D context is unavailable in this environment; decode images elsewhere.');
    ctx.drawImage(bitmap, 0, 0);
    const pixels = ctx.getImageData(0, 0, bitmap.width, bitmap.height);
    return {
      width: pixels.width,
      height: pixels.height,
      channels: 4,
      data: pixels.data,
      sourceWidth,
      sourceHeight,
    };
  } finally {
    bitmap.close();
  }
}
