// processor-config.ts: the image-processor and processor settings of an Idefics3 / SmolVLM checkpoint,
// validated. Reads preprocessor_config.json (HF `Idefics3ImageProcessor`; newer checkpoints may nest it as
// processor_config.json["image_processor"]) and processor_config.json (`image_seq_len`), and cross-checks
// both against config.json when present, because a mismatch would break the placeholder contract
// (image tokens per tile != embeddings per tile) long after loading.

import { ProcessorConfigError } from '../errors';
import { readJson, type ModelFiles } from './files';
import type { PixelNormalization } from './pixel-normalization';
import { resampleFilterFromPil, type ResampleFilter } from './resample';
import { checkVideoTileSize, parseVideoProcessorConfig, type VideoProcessorConfig } from './video-config';

export interface ImageProcessorConfig extends PixelNormalization {
  doResize: boolean;
  /** size.longest_edge: the first resize scales the longest side to exactly this (up or down). */
  longestEdge: number;
  resample: ResampleFilter;
  doImageSplitting: boolean;
  /** max_image_size.longest_edge: side of every tile and of the global image. */
  tileSize: number;
  doPad: boolean;
}

export interface ProcessorConfig {
  image: ImageProcessorConfig;
  /** `<image>` tokens per tile (HF `image_seq_len`). */
  imageSeqLen: number;
  /** Token strings of HF `Idefics3Processor` (fixed there, not read from a file). */
  imageToken: string;
  fakeImageToken: string;
  globalImageToken: string;
  /** SmolVLM2 video settings (video-config.ts); undefined when the checkpoint has no video support. */
  video?: VideoProcessorConfig;
}

// HF Idefics3ImageProcessor defaults (used when a key is absent).
const IMAGENET_STANDARD = [0.5, 0.5, 0.5] as const;
const DEFAULT_LONGEST_EDGE = 4 * 364;
const DEFAULT_TILE = 364;
/** Largest longest_edge accepted: every image is resized to it, so a huge value is a memory bomb. */
const MAX_EDGE = 16384;
// HF Idefics3Processor's default when processor_config.json has no image_seq_len.
const DEFAULT_IMAGE_SEQ_LEN = 169;

type Json = Record<string, unknown>;

function bool(c: Json, file: string, key: string, fallback: boolean): boolean {
  const v = c[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'boolean') throw new ProcessorConfigError(`${file}: ${key} must be true or false, found ${JSON.stringify(v)}`);
  return v;
}

function posNum(c: Json, file: string, key: string, fallback: number): number {
  const v = c[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !(v > 0) || !Number.isFinite(v)) {
    throw new ProcessorConfigError(`${file}: ${key} must be a finite positive number, found ${JSON.stringify(v)}`);
  }
  return v;
}

function edge(c: Json, file: string, key: string, fallback: number): number {
  const v = c[key];
  if (v === undefined || v === null) return fallback;
  const le = typeof v === 'object' ? (v as Json).longest_edge : undefined;
  if (typeof le !== 'number' || !Number.isInteger(le) || le < 1 || le > MAX_EDGE) {
    throw new ProcessorConfigError(
      `${file}: ${key} must be {"longest_edge": <integer from 1 to ${MAX_EDGE}>} for an Idefics3 image processor, found ${JSON.stringify(v)}`,
    );
  }
  return le;
}

function triple(c: Json, file: string, key: string): readonly [number, number, number] {
  const v = c[key];
  if (v === undefined || v === null) return IMAGENET_STANDARD;
  const arr = typeof v === 'number' ? [v, v, v] : v;
  if (!Array.isArray(arr) || arr.length !== 3 || !arr.every((x) => typeof x === 'number' && Number.isFinite(x))) {
    throw new ProcessorConfigError(`${file}: ${key} must be a number or 3 numbers (RGB), found ${JSON.stringify(v)}`);
  }
  return [arr[0], arr[1], arr[2]] as const;
}

export function parseImageProcessorConfig(c: Json, file = 'preprocessor_config.json'): ImageProcessorConfig {
  const type = c.image_processor_type;
  if (typeof type === 'string' && !/^(Idefics3|SmolVLM)ImageProcessor(Fast|Pil)?$/.test(type)) {
    throw new ProcessorConfigError(`${file}: image_processor_type '${type}' is not an Idefics3/SmolVLM image processor`);
  }
  const resample = c.resample ?? 1;
  if (typeof resample !== 'number')
    throw new ProcessorConfigError(`${file}: resample must be a PIL filter number, found ${JSON.stringify(resample)}`);
  const std = triple(c, file, 'image_std');
  if (std.some((s) => s === 0)) throw new ProcessorConfigError(`${file}: image_std ${JSON.stringify(std)} contains 0`);
  return {
    doConvertRgb: bool(c, file, 'do_convert_rgb', true),
    doResize: bool(c, file, 'do_resize', true),
    longestEdge: edge(c, file, 'size', DEFAULT_LONGEST_EDGE),
    resample: resampleFilterFromPil(resample),
    doImageSplitting: bool(c, file, 'do_image_splitting', true),
    tileSize: edge(c, file, 'max_image_size', DEFAULT_TILE),
    doRescale: bool(c, file, 'do_rescale', true),
    rescaleFactor: posNum(c, file, 'rescale_factor', 1 / 255),
    doNormalize: bool(c, file, 'do_normalize', true),
    imageMean: triple(c, file, 'image_mean'),
    imageStd: std,
    doPad: bool(c, file, 'do_pad', true),
  };
}

/** Reads and cross-checks the processor settings of a checkpoint. */
export async function loadProcessorConfig(files: ModelFiles): Promise<ProcessorConfig> {
  const pre = await readJson(files, 'preprocessor_config.json');
  const proc = await readJson(files, 'processor_config.json');
  const model = await readJson(files, 'config.json');
  const nested = proc?.image_processor;
  const imageJson = pre ?? (nested && typeof nested === 'object' ? (nested as Json) : undefined);
  if (!imageJson) {
    throw new ProcessorConfigError(
      `preprocessor_config.json is missing from ${files.where} (and processor_config.json has no "image_processor"); ` +
        'the image processor settings are needed to split images into tiles.',
    );
  }
  const image = parseImageProcessorConfig(imageJson, pre ? 'preprocessor_config.json' : 'processor_config.json image_processor');

  // Tokens per tile implied by the model: (image_size / patch_size)^2 / scale_factor^2.
  const vision = model?.vision_config as Json | undefined;
  let implied: number | undefined;
  if (vision && typeof vision.image_size === 'number' && typeof vision.patch_size === 'number') {
    const scale = typeof model?.scale_factor === 'number' ? model.scale_factor : 2;
    implied = Math.trunc(Math.trunc(vision.image_size / vision.patch_size) ** 2 / scale ** 2);
    if (vision.image_size !== image.tileSize) {
      throw new ProcessorConfigError(
        `max_image_size.longest_edge is ${image.tileSize} but config.json vision_config.image_size is ${vision.image_size}; ` +
          'tiles would not fit the vision encoder. The checkpoint files do not belong together.',
      );
    }
  }
  const seq = proc?.image_seq_len;
  if (seq !== undefined && (typeof seq !== 'number' || !Number.isInteger(seq) || seq < 1)) {
    throw new ProcessorConfigError(`processor_config.json: image_seq_len must be a positive integer, found ${JSON.stringify(seq)}`);
  }
  const imageSeqLen = (seq as number | undefined) ?? implied ?? DEFAULT_IMAGE_SEQ_LEN;
  if (implied !== undefined && imageSeqLen !== implied) {
    throw new ProcessorConfigError(
      `processor_config.json image_seq_len is ${imageSeqLen} but config.json implies ${implied} tokens per tile ` +
        '((image_size / patch_size)^2 / scale_factor^2); the prompt would not match the encoder output.',
    );
  }
  const imageFile = pre ? 'preprocessor_config.json' : 'processor_config.json image_processor';
  // Video (SmolVLM2): video_preprocessor_config.json when present, else the image processor's file.
  const ownVideo = await readJson(files, 'video_preprocessor_config.json');
  const videoFile = 'video_preprocessor_config.json';
  const video = ownVideo
    ? parseVideoProcessorConfig(ownVideo, videoFile, parseImageProcessorConfig({ ...ownVideo, image_processor_type: undefined }, videoFile))
    : parseVideoProcessorConfig(imageJson, imageFile, image);
  checkVideoTileSize(video, typeof vision?.image_size === 'number' ? vision.image_size : undefined);
  return {
    image,
    imageSeqLen,
    imageToken: '<image>',
    fakeImageToken: '<fake_token_around_image>',
    globalImageToken: '<global-img>',
    ...(video ? { video } : {}),
  };
}
