// The Qwen2.5-VL vision tower (src/model/qwen-vision-encoder.ts) on qwen2_5_vl-tiny against
// test/reference/qwen_vision.py (float64 PyTorch): an image of whole windows, one whose right and bottom
// windows are partial (padding rows masked), and a video of two frame groups (full attention per frame in
// layers 1 and 3). The patch rows are the golden's own, so only the tower is under test.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseQwen25VlConfig } from '../../src/families/qwen2_5_vl/config';
import { NodeDirSource } from '../../src/io/model-source-node';
import { type LoadedModel, loadModelWithConfig } from '../../src/model/load';
import { QwenVisionEncoder } from '../../src/model/qwen-vision-encoder';
import type { PatchGrid } from '../../src/processor/smart-resize';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

interface Case {
  name: string;
  grid: PatchGrid;
  patches: number[];
  features: number[];
  featureRows: number;
  f32VsF64MaxAbsDiff: number;
  maxAbs: number;
}

const golden = JSON.parse(readFileSync(resolve(import.meta.dirname, '../fixtures/goldens/qwen-vision.json'), 'utf8')) as {
  checkpoint: string;
  cases: Case[];
};
const gpu = useGpu();

describe('Qwen2.5-VL vision tower', () => {
  let loaded: LoadedModel;
  let encoder: QwenVisionEncoder;

  beforeAll(async () => {
    const source = new NodeDirSource(`${ensureTinyModels()}/${golden.checkpoint}`);
    const config = parseQwen25VlConfig(JSON.parse((await source.readText('config.json'))!));
    loaded = await loadModelWithConfig(gpu(), source, config, { kvCacheTokens: 256, maxTokensPerStep: 16, maxSeqs: 1 });
    encoder = new QwenVisionEncoder(gpu(), loaded.weights, config.qwenVision!);
  });
  afterAll(() => loaded?.destroy());

  it.each(golden.cases.map((c) => [c.name, c] as const))('%s: features of the reference', async (_n, c) => {
    const got = await encoder.encode(Float32Array.from(c.patches), c.grid);
    expect(encoder.tokensFor(c.grid)).toBe(c.featureRows);
    expect(got.length).toBe(c.features.length);
    let worst = 0;
    for (let i = 0; i < got.length; i++) worst = Math.max(worst, Math.abs(got[i] - c.features[i]));
    // f32 arithmetic in another order than torch's: a few times the reference's own f32-vs-f64 distance.
    expect(worst).toBeLessThan(Math.max(20 * c.f32VsF64MaxAbsDiff, 1e-4 * c.maxAbs));
  });
});
