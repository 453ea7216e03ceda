// image-layout.ts: every size the Idefics3 image processor produces, from the image's width and height and
// the config alone (docs/design.md invariant 2: counts before work). No pixels are touched here.
// Matches HF `Idefics3ImageProcessor` (image_processing_idefics3.py and the PIL backend):
//
//   source w x h
//     │ resize (size.longest_edge = L): longest side := L (also UPscales); the other side keeps the aspect
//     │   ratio, truncated, and is rounded UP to even (`_resize_output_size_rescale_to_max_len`); then capped
//     │   at MAX_IMAGE_SIZE (`_resize_output_size_scale_below_upper_bound`)
//     ▼
//   w1 x h1
//     │ resize_for_vision_encoder (T = max_image_size.longest_edge): longest side := ceil(side / T) * T,
//     │   other := ceil(trunc(longest / aspect) / T) * T
//     ▼
//   w2 x h2  (multiples of T)
//     │ split_image: if w2 > T or h2 > T → rows = h2 / T, cols = w2 / T tiles (row-major) + global image
//     │   (w2 x h2 resized to T x T); else a single T x T image (rows = cols = 0)
//     ▼
//   numTiles = rows * cols + 1, each T x T → image_seq_len <image> tokens per tile

import { InternalError } from '../errors';
import type { ImageProcessorConfig } from './processor-config';

/** HF's absolute cap on the first resize (image_processing_idefics3.py MAX_IMAGE_SIZE, "4k resolution"). */
export const MAX_IMAGE_SIZE = 4096;

export interface Size {
  width: number;
  height: number;
}

export interface ImageLayout {
  source: Size;
  /** After the longest-edge resize (equal to source when do_resize is false). */
  resized: Size;
  /** After resize_for_vision_encoder (multiples of the tile size), or the tile square when not splitting. */
  encoderSize: Size;
  /** Tile grid; 0 x 0 means a single image with no grid (HF `_prompt_single_image`). */
  rows: number;
  cols: number;
  /** rows * cols + 1 (the global image), or 1. */
  numTiles: number;
  tileSize: number;
  /** numTiles * imageSeqLen: placeholder tokens, i.e. embeddings the encoder must return. */
  numImageTokens: number;
}

/** HF `_resize_output_size_rescale_to_max_len` followed by `_resize_output_size_scale_below_upper_bound`. */
export function longestEdgeResize(source: Size, longestEdge: number): Size {
  let { width, height } = source;
  const aspect = width / height;
  if (width >= height) {
    width = longestEdge;
    height = Math.trunc(width / aspect);
    if (height % 2 !== 0) height += 1;
  } else {
    height = longestEdge;
    width = Math.trunc(height * aspect);
    if (width % 2 !== 0) width += 1;
  }
  height = Math.max(height, 1);
  width = Math.max(width, 1);
  // Scale below the upper bound (uses the aspect of the size just computed, as HF does).
  const aspect2 = width / height;
  if (width >= height && width > MAX_IMAGE_SIZE) {
    width = MAX_IMAGE_SIZE;
    height = Math.trunc(width / aspect2);
  } else if (height > width && height > MAX_IMAGE_SIZE) {
    height = MAX_IMAGE_SIZE;
    width = Math.trunc(height * aspect2);
  }
  return { width: Math.max(width, 1), height: Math.max(height, 1) };
}

/** HF `resize_for_vision_encoder`: both sides to multiples of the tile size, keeping the aspect roughly. */
export function visionEncoderResize(size: Size, tileSize: number): Size {
  let { width, height } = size;
  const aspect = width / height;
  if (width >= height) {
    width = Math.ceil(width / tileSize) * tileSize;
    height = Math.trunc(width / aspect);
    height = Math.ceil(height / tileSize) * tileSize;
  } else {
    height = Math.ceil(height / tileSize) * tileSize;
    width = Math.trunc(height * aspect);
    width = Math.ceil(width / tileSize) * tileSize;
  }
  return { width, height };
}

/** The full layout of one image; `imageSeqLen` is `<image>` tokens per tile. */
export function imageLayout(width: number, height: number, config: ImageProcessorConfig, imageSeqLen: number): ImageLayout {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new InternalError(`imageLayout: image size ${width}x${height} must be positive integers`);
  }
  const source = { width, height };
  const T = config.tileSize;
  const resized = config.doResize ? longestEdgeResize(source, config.longestEdge) : source;
  let encoderSize: Size;
  let rows = 0;
  let cols = 0;
  if (config.doImageSplitting) {
    encoderSize = visionEncoderResize(resized, T);
    if (encoderSize.width > T || encoderSize.height > T) {
      rows = encoderSize.height / T;
      cols = encoderSize.width / T;
    }
  } else {
    // The PIL/torchvision backends resize a non-split image straight to the tile square.
    encoderSize = { width: T, height: T };
  }
  const numTiles = rows * cols + 1;
  return { source, resized, encoderSize, rows, cols, numTiles, tileSize: T, numImageTokens: numTiles * imageSeqLen };
}
