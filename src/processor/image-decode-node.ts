// image-decode-node.ts: image bytes → pixels in Node, with sharp (libvips). Node only; browser code uses
// decodeImageBrowser from image-decode.ts.
//
// Peak memory: the header is read first (sharp.metadata, no pixel decode). When the processor's `shrinkTo`
// asks for a smaller size, libvips shrinks while decoding (JPEG/WebP shrink-on-load, otherwise a streamed
// sequential-read box shrink + lanczos3 reduce), so the full-resolution pixels never exist in memory at
// once: a 10000x10000 image never becomes the 400 MB RGBA buffer a plain decode would make.

import type { Metadata } from 'sharp';
import { ImageDecodeError } from '../errors';
import { importOptional } from '../optional-dependency';
import { checkPixelLimit, MAX_DECODE_PIXELS, type DecodedImage, type DecodeOptions } from './image-decode';

export async function decodeImageNode(bytes: Uint8Array, options: DecodeOptions = {}): Promise<DecodedImage> {
  if (bytes.length === 0) throw new ImageDecodeError('image has 0 bytes; send the file contents, not an empty buffer.');
  // sharp is an optional peer dependency (Node only), loaded at first use.
  const { default: sharp } = await importOptional('sharp', 'image decoding in Node', () => import('sharp'));
  const input = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const sharpOptions = { limitInputPixels: MAX_DECODE_PIXELS, ignoreIcc: true, autoOrient: true } as const;
  let meta: Metadata;
  try {
    // Header only: no pixel limit here, so an oversized image gets ImageTooLargeError with its size below.
    meta = await sharp(input, { ...sharpOptions, limitInputPixels: false }).metadata();
  } catch (e) {
    throw notAnImage(bytes.length, e);
  }
  // metadata() reports the stored size; autoOrient swaps it for EXIF orientations 5..8.
  const sourceWidth = meta.autoOrient?.width ?? meta.width;
  const sourceHeight = meta.autoOrient?.height ?? meta.height;
  if (!sourceWidth || !sourceHeight) throw notAnImage(bytes.length, new Error(`no size in the ${meta.format} header`));
  checkPixelLimit(sourceWidth, sourceHeight);
  const target = options.shrinkTo?.({ width: sourceWidth, height: sourceHeight });

  let pipeline = sharp(input, sharpOptions);
  if (target && (target.width < sourceWidth || target.height < sourceHeight)) {
    pipeline = pipeline.resize({ width: target.width, height: target.height, fit: 'fill', kernel: 'lanczos3' });
  }
  // 8-bit output; grayscale stays 1-2 channels, anything else (CMYK, 16-bit, palette) becomes sRGB.
  if (meta.space !== 'b-w') pipeline = pipeline.toColourspace('srgb');
  try {
    const { data, info } = await pipeline.raw({ depth: 'uchar' }).toBuffer({ resolveWithObject: true });
    const channels = info.channels;
    if (channels < 1 || channels > 4) throw new Error(`decoder returned ${channels} channels`);
    return {
      width: info.width,
      height: info.height,
      channels: channels as 1 | 2 | 3 | 4,
      data: new Uint8Array(data.buffer, data.byteOffset, data.byteLength),
      sourceWidth,
      sourceHeight,
    };
  } catch (e) {
    throw notAnImage(bytes.length, e);
  }
}

function notAnImage(numBytes: number, e: unknown): ImageDecodeError {
  return new ImageDecodeError(
    `${numBytes} bytes could not be decoded as an image (${(e as Error).message ?? String(e)}); ` +
      'send a PNG, JPEG, GIF, WebP, AVIF or TIFF file.',
    { cause: e },
  );
}
