// The Qwen2-VL-style patch rows (src/processor/qwen-patches.ts) against test/reference/qwen_patches.py's
// torch reshape and permute: frames whose values are their own flat index, so each row value must name the
// input value the reference put there (two video frames, four frames without merging, an image at patch 14).

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InvalidMessageError } from '../../src/errors';
import { flattenImagePatches, flattenPatches } from '../../src/processor/qwen-patches';

interface Case {
  name: string;
  frames: number;
  channels: number;
  patchSize: number;
  temporalPatchSize: number;
  mergeSize: number;
  grid: { h: number; w: number };
  shape: [number, number];
  source: number[];
}

const { cases } = JSON.parse(readFileSync(resolve(import.meta.dirname, '../fixtures/goldens/qwen-patches.json'), 'utf8')) as {
  cases: Case[];
};

describe('Qwen patch rows', () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s: every value where the reference puts it', (_name, c) => {
    const frameLen = c.channels * c.grid.h * c.patchSize * c.grid.w * c.patchSize;
    const frames = Array.from({ length: c.frames }, (_, f) => Float32Array.from({ length: frameLen }, (_, i) => f * frameLen + i));
    const g = { channels: c.channels, patchSize: c.patchSize, temporalPatchSize: c.temporalPatchSize, mergeSize: c.mergeSize };
    const rows = c.frames < c.temporalPatchSize ? flattenImagePatches(frames[0]!, c.grid, g) : flattenPatches(frames, c.grid, g);
    expect(rows.length).toBe(c.shape[0] * c.shape[1]);
    expect(Array.from(rows)).toEqual(c.source);
  });

  it('frames that do not fill the temporal patch, or a grid that does not merge, are named errors', () => {
    const g = { channels: 3, patchSize: 2, temporalPatchSize: 2, mergeSize: 2 };
    const frame = new Float32Array(3 * 4 * 4);
    expect(() => flattenPatches([frame], { h: 2, w: 2 }, g)).toThrow(InvalidMessageError);
    expect(() => flattenPatches([frame, frame], { h: 2, w: 3 }, g)).toThrow(/merge blocks/);
    expect(() => flattenPatches([frame, new Float32Array(5)], { h: 2, w: 2 }, g)).toThrow(/holds 5 values/);
  });
});
