// The image preprocessing of the Qwen-VL families (HF `Qwen2VLImageProcessorFast`, which transformers and
// vLLM load for Qwen2.5-VL and Qwen3-VL): RGB (alpha over white), the smart resize to multiples of
// patch × merge within the pixel budget, torchvision's bicubic antialiased resize (resample-torch.ts),
// rescale and normalise fused as the fast processor fuses them ((x − mean·255) / (std·255) in float32),
// then the patch rows the tower reads (qwen-patches.ts), the image repeated to the temporal patch.

import { ModelConfigError } from '../errors';
import type { Json } from '../model/config-fields';
import { type DecodedImage, toRgb } from './image-decode';
import { flattenImagePatches, type PatchGeometry } from './qwen-patches';
import { resampleRgbTorchBicubic } from './resample-torch';
import { imagePatchGrid, type PatchGrid } from './smart-resize';

export interface QwenImageProcessorConfig {
  patchSize: number;
  temporalPatchSize: number;
  mergeSize: number;
  minPixels: number;
  maxPixels: number;
  mean: readonly [number, number, number];
  std: readonly [number, number, number];
  rescaleFactor: number;
}

export interface QwenProcessedImage {
  /** [grid.t·grid.h·grid.w, 3·T·P·P] patch rows, merge block by merge block. */
  patches: Float32Array;
  grid: PatchGrid;
  /** LM tokens: one per merge block. */
  tokens: number;
  /** [height, width] after the smart resize. */
  resized: [number, number];
}

/** HF Qwen2VLImageProcessorFast's defaults (size: 56² to 28²·1280 pixels; CLIP's mean and std). */
const DEFAULTS = {
  patch_size: 14,
  temporal_patch_size: 2,
  merge_size: 2,
  shortest_edge: 56 * 56,
  longest_edge: 28 * 28 * 1280,
  image_mean: [0.48145466, 0.4578275, 0.40821073],
  image_std: [0.26862954, 0.26130258, 0.27577711],
  rescale_factor: 1 / 255,
};

/**
 * preprocessor_config.json → the settings. The pixel budget is `size` {shortest_edge, longest_edge}
 * (Qwen3-VL's files), overridden by `min_pixels` / `max_pixels` where given (Qwen2.5-VL's), as HF does.
 */
export function parseQwenImageProcessorConfig(json: Json): QwenImageProcessorConfig {
  const num = (key: string, v: unknown, fallback: number): number => {
    if (v === undefined || v === null) return fallback;
    if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0) {
      throw new ModelConfigError(`preprocessor_config.json: ${key} must be a positive number, found ${JSON.stringify(v)}`);
    }
    return v;
  };
  const triple = (key: string, v: unknown, fallback: number[]): [number, number, number] => {
    const x = v ?? fallback;
    if (!Array.isArray(x) || x.length !== 3 || !x.every((e) => typeof e === 'number' && Number.isFinite(e))) {
      throw new ModelConfigError(`preprocessor_config.json: ${key} must be three numbers, found ${JSON.stringify(v)}`);
    }
    return [x[0], x[1], x[2]];
  };
  const size = (json.size && typeof json.size === 'object' ? json.size : {}) as Json;
  const config: QwenImageProcessorConfig = {
    patchSize: num('patch_size', json.patch_size, DEFAULTS.patch_size),
    temporalPatchSize: num('temporal_patch_size', json.temporal_patch_size, DEFAULTS.temporal_patch_size),
    mergeSize: num('merge_size', json.merge_size, DEFAULTS.merge_size),
    minPixels: num('min_pixels', json.min_pixels, num('size.shortest_edge', size.shortest_edge, DEFAULTS.shortest_edge)),
    maxPixels: num('max_pixels', json.max_pixels, num('size.longest_edge', size.longest_edge, DEFAULTS.longest_edge)),
    mean: triple('image_mean', json.image_mean, DEFAULTS.image_mean),
    std: triple('image_std', json.image_std, DEFAULTS.image_std),
    rescaleFactor: num('rescale_factor', json.rescale_factor, DEFAULTS.rescale_factor),
  };
  if (config.minPixels > config.maxPixels) {
    throw new ModelConfigError(
      `preprocessor_config.json: the pixel budget's minimum ${config.minPixels} exceeds its maximum ${config.maxPixels}`,
    );
  }
  return config;
}

/** One image → its patch rows, patch grid and token count. */
export function processQwenImage(image: DecodedImage, c: QwenImageProcessorConfig): QwenProcessedImage {
  const { grid, tokens, resized } = imagePatchGrid(image.height, image.width, {
    factor: c.patchSize * c.mergeSize,
    minPixels: c.minPixels,
    maxPixels: c.maxPixels,
    patchSize: c.patchSize,
    mergeSize: c.mergeSize,
  });
  const [h, w] = resized;
  const rgb = resampleRgbTorchBicubic(toRgb(image), w, h);
  const patches = flattenImagePatches(normalizeQwenRgb(rgb.data, c), grid, patchGeometry(c));
  return { patches, grid, tokens, resized };
}

/** The patch and merge sizes of the processor, as qwen-patches.ts takes them. */
export function patchGeometry(c: QwenImageProcessorConfig): PatchGeometry {
  return { channels: 3, patchSize: c.patchSize, temporalPatchSize: c.temporalPatchSize, mergeSize: c.mergeSize };
}

/**
 * Resized RGB pixels [h·w·3] → [3, h, w] in float32, as the fast processor fuses its rescale and
 * normalise: (x − mean / rescale_factor) / (std / rescale_factor).
 */
export function normalizeQwenRgb(rgb: Uint8Array | Uint8ClampedArray, c: QwenImageProcessorConfig): Float32Array {
  const f = Math.fround;
  const mean = c.mean.map((m) => f(f(m) * (1 / c.rescaleFactor)));
  const std = c.std.map((s) => f(f(s) * (1 / c.rescaleFactor)));
  const n = rgb.length / 3;
  const chw = new Float32Array(3 * n);
  for (let i = 0; i < n; i++) {
    for (let ch = 0; ch < 3; ch++) chw[ch * n + i] = f(f(rgb[i * 3 + ch]! - mean[ch]!) / std[ch]!);
  }
  return chw;
}
