// The Qwen-VL vision towers (src/model/qwen-vision-encoder.ts) against test/reference/qwen_vision.py
// (float64 PyTorch). Qwen2.5-VL (qwen2_5_vl-tiny): an image of whole windows, one whose right and bottom
// windows are partial (padding rows masked), and a video of two frame groups (full attention per frame in
// layers 1 and 3). Qwen3-VL (qwen3_vl-tiny): images smaller, larger and equal to the learned position grid
// (bilinear resampling) and a video, with both DeepStack levels. The patch rows are the golden's own, so
// only the tower is under test.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQwen25VlConfig } from '../../src/families/qwen2_5_vl/config';
import { parseQwen3VlConfig } from '../../src/families/qwen3_vl/config';
import type { ModelConfig } from '../../src/model/config';
import { NodeDirSource } from '../../src/io/model-source-node';
import { type LoadedModel, loadModelWithConfig } from '../../src/model/load';
import { QwenVisionEncoder } from '../../src/model/qwen-vision-encoder';
import type { PatchGrid } from '../../src/processor/smart-resize';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

interface Case {
  name: string;
  grid: PatchGrid;
  /** The case's slice of qwen-vision-patches.f32.bin, in floats. */
  patches: { offset: number; length: number };
  features: number[];
  deepstack: number[][];
  featureRows: number;
  f32VsF64MaxAbsDiff: number;
  maxAbs: number;
}

const goldens = resolve(import.meta.dirname, '../fixtures/goldens');
const golden = JSON.parse(readFileSync(`${goldens}/qwen-vision.json`, 'utf8')) as {
  models: Array<{ checkpoint: string; cases: Case[] }>;
};
const patchBytes = readFileSync(`${goldens}/qwen-vision-patches.f32.bin`);
const patchRows = new Float32Array(Uint8Array.from(patchBytes).buffer);
const PARSERS: Record<string, (c: Record<string, unknown>) => ModelConfig> = {
  'qwen2_5_vl-tiny': parseQwen25VlConfig,
  'qwen3_vl-tiny': parseQwen3VlConfig,
};
const gpu = useGpu();

const worstDiff = (got: Float32Array, want: number[]) => {
  expect(got.length).toBe(want.length);
  let worst = 0;
  for (let i = 0; i < got.length; i++) worst = Math.max(worst, Math.abs(got[i] - want[i]));
  return worst;
};

describe.each(golden.models.map((m) => [m.checkpoint, m] as const))('%s vision tower', (name, model) => {
  let loaded: LoadedModel;
  let encoder: QwenVisionEncoder;
  let config: ModelConfig;

  beforeAll(async () => {
    const source = new NodeDirSource(`${ensureTinyModels()}/${name}`);
    config = PARSERS[name](JSON.parse((await source.readText('config.json'))!));
    loaded = await loadModelWithConfig(gpu(), source, config, { kvCacheTokens: 256, maxTokensPerStep: 16, maxSeqs: 1 });
    encoder = new QwenVisionEncoder(gpu(), loaded.weights, config.qwenVision!);
  });
  afterAll(() => loaded?.destroy());

  it.each(model.cases.map((c) => [c.name, c] as const))('%s: features (and DeepStack levels) of the reference', async (_n, c) => {
    const got = await encoder.encode(patchRows.slice(c.patches.offset, c.patches.offset + c.patches.length), c.grid);
    expect(encoder.tokensFor(c.grid)).toBe(c.featureRows);
    expect(got.deepstack.length).toBe(c.deepstack.length);
    // f32 arithmetic in another order than torch's: a few times the reference's own f32-vs-f64 distance.
    const tolerance = Math.max(20 * c.f32VsF64MaxAbsDiff, 1e-4 * c.maxAbs);
    expect(worstDiff(got.embeddings, c.features)).toBeLessThan(tolerance);
    got.deepstack.forEach((level, i) => {
      expect(worstDiff(level, c.deepstack[i])).toBeLessThan(tolerance);
    });
  });

  it.each(model.cases.map((c) => [c.name, c] as const))(
    '%s: paced (decode priority), in pieces of 64 rows and one head: the same features, in more pieces',
    async (_n, c) => {
      const patches = patchRows.slice(c.patches.offset, c.patches.offset + c.patches.length);
      // A runner that is paced and lets each piece run at once, counting them.
      const counting = () => {
        const runner = { isPaced: true, pieces: 0, before: async () => {}, after: () => void runner.pieces++ };
        return runner;
      };
      const whole = counting();
      await encoder.encode(patches, c.grid, { runner: whole });
      const cut = counting();
      const got = await new QwenVisionEncoder(gpu(), loaded.weights, config.qwenVision!, 0, 64).encode(patches, c.grid, { runner: cut });
      // Paced without row blocks: one piece per dispatch. With them, each matmul of more than 64 rows is
      // cut, and attention goes one head at a time.
      expect(whole.pieces).toBeGreaterThan(4 * config.qwenVision!.numLayers);
      if (c.grid.t * c.grid.h * c.grid.w > 64) expect(cut.pieces).toBeGreaterThan(whole.pieces);
      const tolerance = Math.max(20 * c.f32VsF64MaxAbsDiff, 1e-4 * c.maxAbs);
      expect(worstDiff(got.embeddings, c.features)).toBeLessThan(tolerance);
      got.deepstack.forEach((level, i) => {
        expect(worstDiff(level, c.deepstack[i])).toBeLessThan(tolerance);
      });
    },
  );

  it("a 2 x 16 x 20 grid (640 patches), paced in pieces of 64 rows: the free pass's features", async () => {
    const grid = { t: 2, h: 16, w: 20 };
    const patches = new Float32Array(grid.t * grid.h * grid.w * encoder.rowLength);
    let seed = 7;
    for (let i = 0; i < patches.length; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      patches[i] = seed / 2 ** 30 - 1;
    }
    const free = await encoder.encode(patches, grid);
    const runner = { isPaced: true, pieces: 0, before: async () => {}, after: () => void runner.pieces++ };
    const got = await new QwenVisionEncoder(gpu(), loaded.weights, config.qwenVision!, 0, 64).encode(patches, grid, { runner });
    // Every matmul over the 640 rows in 10 blocks, so far more pieces than the pass has dispatches.
    expect(runner.pieces).toBeGreaterThan(10 * 4 * config.qwenVision!.numLayers);
    const scale = free.embeddings.reduce((a, x) => Math.max(a, Math.abs(x)), 0);
    expect(worstDiff(got.embeddings, Array.from(free.embeddings))).toBeLessThan(1e-4 * scale);
    expect(got.deepstack.length).toBe(free.deepstack.length);
    got.deepstack.forEach((level, i) => {
      const s = free.deepstack[i].reduce((a, x) => Math.max(a, Math.abs(x)), 0);
      expect(worstDiff(level, Array.from(free.deepstack[i]))).toBeLessThan(1e-4 * s);
    });
  });
});
