// The demo page answers about the sample image with the bundled tiny model in headless Chromium; a reload
// loads the weights from the browser's Cache API instead of the network and gives the same tokens.

import { readdirSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { goldenTokens } from './goldens';

test('demo page streams an answer, and a reload reuses the cached weights', async ({ page }) => {
  const weightFetches: string[] = [];
  page.on('request', (r) => {
    if (r.url().endsWith('.safetensors')) weightFetches.push(r.url());
  });
  await page.goto('/?run');
  await expect(page.locator('body')).toHaveAttribute('data-chat', /done|error/);
  const first = await page.evaluate(() => window.tesseraRun);
  if (!first || 'error' in first) throw new Error(`first run failed: ${JSON.stringify(first)}`);
  expect(first.info.tokenIds).toEqual(goldenTokens('smolvlm-tiny'));
  expect(first.finishReason).toBe('length');
  expect(first.text.length).toBeGreaterThan(0);
  expect(await page.locator('#answer').textContent()).toBe(first.text);
  expect(weightFetches.length).toBe(1);

  await page.reload();
  await expect(page.locator('body')).toHaveAttribute('data-chat', /done|error/);
  const second = await page.evaluate(() => window.tesseraRun);
  if (!second || 'error' in second) throw new Error(`second run failed: ${JSON.stringify(second)}`);
  expect(second.loadedFromCache).toBe(true);
  expect(weightFetches.length).toBe(1);
  expect(second.info.tokenIds).toEqual(first.info.tokenIds);
});

test('a checkpoint picked as local files loads without any network request for weights', async ({ page }) => {
  const fetched: string[] = [];
  page.on('request', (r) => {
    if (r.url().includes('/models/')) fetched.push(r.url());
  });
  await page.goto('/');
  const dir = 'public/models/smolvlm-tiny';
  const names = readdirSync(dir).filter((f) => f !== 'README.md');
  await page.locator('#model-files').setInputFiles(names.map((n) => `${dir}/${n}`));
  await page.locator('#run').click();
  await expect(page.locator('body')).toHaveAttribute('data-chat', /done|error/);
  const run = await page.evaluate(() => window.tesseraRun);
  if (!run || 'error' in run) throw new Error(`run failed: ${JSON.stringify(run)}`);
  expect(run.info.tokenIds).toEqual(goldenTokens('smolvlm-tiny'));
  expect(fetched).toEqual([]);
});
