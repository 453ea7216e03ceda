// The stats panel: TTFT, prefill and decode rates, encoder cache hits by tier, GPU memory and KV blocks,
// from engine.stats() and the answer's `tessera` block. KV blocks show in use while an answer streams and
// all free after it; a reload answers from IndexedDB (the persistent tier) without encoding.

import { expect, test, type Page } from '@playwright/test';
import { answered, ask, load, shot, waitForWebGpuCheck } from './demo-helpers';

const stat = (page: Page, id: string) => page.locator(`dd[data-stat="${id}"]`);

async function open(page: Page): Promise<void> {
  await waitForWebGpuCheck(page);
  await load(page);
  await expect(page.locator('body')).toHaveAttribute('data-model', 'ready');
}

test('the stats panel shows rates, cache hits by tier, GPU memory and KV blocks; a reload hits IndexedDB', async ({ page }, testInfo) => {
  await page.goto('/?device=webgpu');
  await open(page);
  const engineStats = () => page.evaluate(() => window.tesseraEngine!.stats());
  const before = await engineStats();
  await expect(stat(page, 'kv-blocks')).toHaveText(`0 of ${before.kv.numBlocks}`);
  await expect(stat(page, 'ttft')).toHaveText('–');

  // Before the first token, the status says the encoder's first image also compiles its kernels; while
  // the answer streams, its KV blocks are in use.
  await page.locator('#max-tokens').fill('100');
  await page.locator('#run').click();
  await expect(page.locator('#chat-status')).toContainText('also compiles the encoder’s kernels in its worker');
  await expect(stat(page, 'kv-blocks')).toHaveText(new RegExp(`^[1-9]\\d* of ${before.kv.numBlocks}$`));
  await expect(page.locator('#messages > li.assistant').last()).not.toHaveAttribute('data-state', 'streaming');
  const first = answered(await page.evaluate(() => window.tesseraRun));

  const t = first.info.timings;
  await expect(stat(page, 'ttft')).toHaveText(/^\d+(\.\d)? m?s$/);
  await expect(stat(page, 'prefill-rate')).toHaveText(/^\d+(\.\d)? tok\/s$/);
  await expect(stat(page, 'decode-rate')).toHaveText(
    `${t.decodeTokensPerSecond >= 100 ? t.decodeTokensPerSecond.toFixed(0) : t.decodeTokensPerSecond.toFixed(1)} tok/s`,
  );
  await expect(stat(page, 'tokens')).toHaveText(`${first.info.promptTokens} + ${first.info.tokenIds.length}`);
  await expect(stat(page, 'encode')).toContainText('(first: compiled kernels)');
  await expect(stat(page, 'image-source')).toHaveText('encoded');
  await expect(stat(page, 'cache-memory')).toHaveText('0');
  await expect(stat(page, 'cache-idb')).toHaveText('0');
  await expect(stat(page, 'cache-encoded')).toHaveText('1');
  await expect(stat(page, 'gpu-live')).toHaveText(/^[\d.]+ MB \/ [\d.]+ MB$/);
  await expect(stat(page, 'kv-blocks')).toHaveText(`0 of ${before.kv.numBlocks}`);
  const after = await engineStats();
  expect(after.gpuMemory.peakBytes).toBeGreaterThanOrEqual(after.gpuMemory.bytesLive);
  expect(after.encoder.encodes).toBe(1);
  await shot(page, testInfo, 'demo-stats');

  // A new page: the weights come from the Cache API, the image embeddings from IndexedDB.
  await page.reload();
  await open(page);
  await page.locator('#max-tokens').fill('3');
  const second = answered(await ask(page));
  expect(second.info.tokenIds).toEqual(first.info.tokenIds.slice(0, 3));
  await expect(stat(page, 'image-source')).toHaveText('IndexedDB');
  await expect(stat(page, 'cache-idb')).toHaveText('1');
  await expect(stat(page, 'cache-encoded')).toHaveText('0');
  await expect(stat(page, 'encode')).not.toContainText('compiled kernels');
  await shot(page, testInfo, 'demo-stats-indexeddb');
});
