// Parity in headless Chromium's own WebGPU: the bundled tiny checkpoint on the sample image through the
// processor (browser image decoding), vision tower, connector and paged-KV decode, against the PyTorch
// goldens (same tolerances as test/gpu/parity.test.ts).

import { expect, test } from '@playwright/test';
import { compareClose, describeComparison } from '../../src/selfcheck/compare';
import { goldenF32, goldenTokens, goldenU8 } from './goldens';

const TOL = { atol: 1e-4, rtol: 1e-3 };

function expectClose(label: string, got: number[], want: Float32Array) {
  const c = compareClose(got, want, TOL);
  expect(c.pass, describeComparison(label, c, TOL)).toBe(true);
}

test('tiny SmolVLM in Chromium matches the PyTorch reference', async ({ page }) => {
  await page.goto('/parity.html');
  await expect(page.locator('body')).toHaveAttribute('data-ready', 'yes');
  const r = await page.evaluate(() => window.tesseraParity!('/models/smolvlm-tiny/', 20));
  expect(r.tilesU8.length).toBe(13 * 3 * 128 * 128);
  // PNG decoding is exact in every decoder, so the browser path gives HF's pixels too.
  expect(Buffer.from(Uint8Array.from(r.tilesU8)).equals(Buffer.from(goldenU8('tiny-pixel-tiles.u8.bin')))).toBe(true);
  expectClose('vision tower output', r.towerOutput, goldenF32('tiny-vision-out.f32.bin'));
  expectClose('connector output', r.connector, goldenF32('tiny-connector-out.f32.bin'));
  expectClose('first-step logits', r.logits, goldenF32('tiny-logits-step0.f32.bin'));
  expect(r.tokenIds).toEqual(goldenTokens('smolvlm-tiny'));
});
