// Device loss in headless Chromium (docs/design.md invariant 8): the engine's WebGPU device is destroyed while a
// request decodes; that request fails with DeviceLostError, and the next one recreates the device and the
// model and answers with the reference tokens, its image still in the encoder cache.

import { expect, test } from '@playwright/test';
import { goldenTokens } from './goldens';

test('a device destroyed mid-decode fails that request; the next request answers correctly', async ({ page }) => {
  await page.goto('/encoder-harness.html');
  await expect(page.locator('body')).toHaveAttribute('data-ready', 'yes');
  await page.evaluate(() => window.harness.clearCache());
  expect(await page.evaluate(() => window.harness.create())).toBe('workers');
  const r = await page.evaluate(() => window.harness.loseDeviceMidDecode());
  expect(r.error?.name).toBe('DeviceLostError');
  expect(r.next.error).toBeUndefined();
  expect(r.next.tokenIds).toEqual(goldenTokens('smolvlm-tiny').slice(0, 4));
  expect(r.next.media![0].source).toBe('memory');
  expect(r.stats.deviceLosses).toBe(1);
  expect(r.stats.deviceRecoveries).toBe(1);
  expect(r.stats.kv.numFreeBlocks).toBe(r.stats.kv.numBlocks);
});
