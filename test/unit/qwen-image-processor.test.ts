// The Qwen-VL image preprocessing (src/processor/qwen-image-processor.ts) with the real preprocessor
// configs: Qwen2.5-VL-3B's min_pixels / max_pixels and CLIP statistics, Qwen3-VL-2B's size {shortest_edge,
// longest_edge} and 0.5 / 0.5; the fused rescale + normalise on a solid image (every value of a channel is
// (level − mean·255) / (std·255)); the grid and token count of the smart resize; named errors.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ModelConfigError } from '../../src/errors';
import { parseQwenImageProcessorConfig, processQwenImage } from '../../src/processor/qwen-image-processor';
import { smartResize } from '../../src/processor/smart-resize';

const pre = (name: string) =>
  JSON.parse(readFileSync(resolve(import.meta.dirname, `../fixtures/models/${name}/preprocessor_config.json`), 'utf8'));

describe('Qwen-VL image processor', () => {
  it("reads Qwen2.5-VL-3B's and Qwen3-VL-2B's preprocessor configs", () => {
    expect(parseQwenImageProcessorConfig(pre('Qwen2.5-VL-3B-Instruct'))).toEqual({
      patchSize: 14,
      temporalPatchSize: 2,
      mergeSize: 2,
      minPixels: 3136,
      maxPixels: 12845056,
      mean: [0.48145466, 0.4578275, 0.40821073],
      std: [0.26862954, 0.26130258, 0.27577711],
      rescaleFactor: 1 / 255,
    });
    expect(parseQwenImageProcessorConfig(pre('Qwen3-VL-2B-Instruct'))).toMatchObject({
      patchSize: 16,
      minPixels: 65536,
      maxPixels: 16777216,
      mean: [0.5, 0.5, 0.5],
      std: [0.5, 0.5, 0.5],
    });
  });

  it('a solid image: the grid of the smart resize, and each channel normalised as the fast processor fuses it', () => {
    const c = parseQwenImageProcessorConfig(pre('Qwen2.5-VL-3B-Instruct'));
    const [width, height] = [150, 97];
    const data = new Uint8Array(width * height * 3);
    for (let i = 0; i < width * height; i++) data.set([255, 0, 128], i * 3);
    const out = processQwenImage({ width, height, channels: 3, data, sourceWidth: width, sourceHeight: height }, c);
    const [h, w] = smartResize(height, width, { factor: 28, minPixels: c.minPixels, maxPixels: c.maxPixels });
    expect(out.resized).toEqual([h, w]);
    expect(out.grid).toEqual({ t: 1, h: h / 14, w: w / 14 });
    expect(out.tokens).toBe(((h / 14) * (w / 14)) / 4);
    const row = 3 * 2 * 14 * 14;
    expect(out.patches.length).toBe(out.grid.h * out.grid.w * row);
    const f = Math.fround;
    const want = [255, 0, 128].map((level, ch) => f(f(level - f(f(c.mean[ch]) * 255)) / f(f(c.std[ch]) * 255)));
    // A row is channel-major: each channel's T·P·P values together.
    for (let ch = 0; ch < 3; ch++) {
      const block = out.patches.subarray(ch * 392, (ch + 1) * 392);
      expect(block.every((v) => v === want[ch])).toBe(true);
    }
  });

  it('names a config it cannot use', () => {
    expect(() => parseQwenImageProcessorConfig({ patch_size: -14 })).toThrow(ModelConfigError);
    expect(() => parseQwenImageProcessorConfig({ image_mean: [0.5, 0.5] })).toThrow(/three numbers/);
    expect(() => parseQwenImageProcessorConfig({ min_pixels: 1000, max_pixels: 10 })).toThrow(/exceeds its maximum/);
  });
});
