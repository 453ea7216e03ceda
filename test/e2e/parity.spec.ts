// Parity in headless Chromium's own WebGPU: every tiny checkpoint on the sample image through the
// processor (browser image decoding), vision tower, connector and paged-KV decode, against the PyTorch
// goldens (same tolerances as test/gpu/parity.test.ts): the original two, the so400m layout (vision
// head_dim 72, patch 14), text head_dim 128, and head_dims 16 / 8.

import { expect, test } from '@playwright/test';
import { compareClose, describeComparison } from '../../src/selfcheck/compare';
import { goldenVariants } from '../helpers/golden-variants';
import { goldenF32, goldenTokens, goldenU8 } from './goldens';

const TOL = { atol: 1e-4, rtol: 1e-3 };

function expectClose(label: string, got: number[], want: Float32Array) {
  const c = compareClose(got, want, TOL);
  expect(c.pass, describeComparison(label, c, TOL)).toBe(true);
}

for (const g of goldenVariants()) {
  test(`${g.model} (${g.about}) in Chromium matches the PyTorch reference`, async ({ page }) => {
    await page.goto('/parity.html');
    await expect(page.locator('body')).toHaveAttribute('data-ready', 'yes');
    const r = await page.evaluate((model) => window.tesseraParity!(`/models/${model}/`, 20), g.model);
    expect(r.tilesU8.length).toBe(g.numTiles * 3 * g.tileSize * g.tileSize);
    // PNG decoding is exact in every decoder, so the browser path gives HF's pixels too.
    expect(Buffer.from(Uint8Array.from(r.tilesU8)).equals(Buffer.from(goldenU8(g.tiles)))).toBe(true);
    if (g.vision) expectClose('vision tower output', r.towerOutput, goldenF32(g.vision));
    if (g.connector) expectClose('connector output', r.connector, goldenF32(g.connector));
    expectClose('first-step logits', r.logits, goldenF32(g.logits));
    expect(r.tokenIds).toEqual(goldenTokens(g.model));
  });
}
