// The Qwen2-VL-style resize (src/processor/smart-resize.ts) against test/reference/qwen_smart_resize.py's
// cases: Qwen2.5-VL's and Qwen3-VL's defaults and a small budget, on sizes under min_pixels, over
// max_pixels, at Python's round-half-to-even edges (42 and 70 px at factor 28) and past the 200:1 ratio.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidMessageError } from '../../src/errors';
import { imagePatchGrid, smartResize } from '../../src/processor/smart-resize';

interface Case {
  setting: string;
  factor: number;
  minPixels: number;
  maxPixels: number;
  height: number;
  width: number;
  resized: [number, number] | null;
}

const { cases } = JSON.parse(readFileSync(resolve(import.meta.dirname, '../fixtures/goldens/qwen-smart-resize.json'), 'utf8')) as {
  cases: Case[];
};

describe('smart resize', () => {
  it('gives the reference size for every case, and refuses the ones the reference refuses', () => {
    expect(cases.length).toBeGreaterThan(60);
    for (const c of cases) {
      const run = () => smartResize(c.height, c.width, c);
      if (c.resized === null) expect(run, `${c.setting} ${c.height}x${c.width}`).toThrow(InvalidMessageError);
      else expect(run(), `${c.setting} ${c.height}x${c.width}`).toEqual(c.resized);
    }
    // The cases reach every branch: rounded only, shrunk to the budget, grown to the minimum, refused.
    const qwen25 = cases.filter((c) => c.setting === 'qwen2_5_vl' && c.resized);
    expect(qwen25.some((c) => c.resized![0] * c.resized![1] < c.height * c.width * 0.5)).toBe(true);
    expect(qwen25.some((c) => c.resized![0] * c.resized![1] > c.height * c.width * 2)).toBe(true);
    expect(cases.some((c) => c.resized === null)).toBe(true);
  });

  it("the reference's budgets are the real checkpoints' (test/fixtures/models preprocessor_config.json)", () => {
    const pre = (name: string) =>
      JSON.parse(readFileSync(resolve(import.meta.dirname, `../fixtures/models/${name}/preprocessor_config.json`), 'utf8'));
    const budget = (setting: string) => cases.find((c) => c.setting === setting)!;
    const q25 = pre('Qwen2.5-VL-3B-Instruct');
    expect(budget('qwen2_5_vl-3b-instruct')).toMatchObject({
      factor: q25.patch_size * q25.merge_size,
      minPixels: q25.min_pixels,
      maxPixels: q25.max_pixels,
    });
    const q3 = pre('Qwen3-VL-2B-Instruct');
    expect(budget('qwen3_vl')).toMatchObject({
      factor: q3.patch_size * q3.merge_size,
      minPixels: q3.size.shortest_edge,
      maxPixels: q3.size.longest_edge,
    });
  });

  it("a 448 x 448 image is 32 x 32 patches of 14 px, 256 tokens after Qwen2.5-VL's 2 x 2 merge", () => {
    const o = { factor: 28, minPixels: 56 * 56, maxPixels: 28 * 28 * 1280, patchSize: 14, mergeSize: 2 };
    expect(imagePatchGrid(448, 448, o)).toEqual({ grid: { t: 1, h: 32, w: 32 }, tokens: 256, resized: [448, 448] });
    expect(imagePatchGrid(720, 1280, o)).toEqual({ grid: { t: 1, h: 52, w: 92 }, tokens: 1196, resized: [728, 1288] });
  });

  it('an image with no area is a named error', () => {
    const o = { factor: 28, minPixels: 3136, maxPixels: 1003520 };
    expect(() => smartResize(0, 10, o)).toThrow(InvalidMessageError);
    expect(() => smartResize(10.5, 10, o)).toThrow(/no area/);
  });
});
