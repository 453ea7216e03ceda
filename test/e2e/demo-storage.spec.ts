// Browser storage in real Chromium: with the origin's quota smaller than the bundled model, a load that
// requires storing fails with StorageQuotaError before downloading the weights, and one that does not loads
// without storing (the Cache API stays empty, the storage panel says why). With the quota back, the load
// stores the model, the panel lists it, and its Delete button empties the Cache API.
//
// The smaller quota is navigator.storage.estimate()'s answer with `quota` replaced (an init script, while
// sessionStorage holds it): DevTools' Storage.overrideQuotaForOrigin did not change what estimate() reports
// in this headless Chromium (checked: 10.7 GB before and after). Everything else is the browser's own.

import { statSync } from 'node:fs';
import { expect, type Page, test } from '@playwright/test';
import { load, shot, waitForWebGpuCheck } from './demo-helpers';

const WEIGHT_BYTES = statSync('public/models/smolvlm-tiny/model.safetensors').size;
const QUOTA_KEY = 'tessera-test-quota';

/** Every document of the page reports sessionStorage[QUOTA_KEY] as its quota, when set. */
async function fakeQuota(page: Page): Promise<void> {
  await page.addInitScript((key) => {
    const quota = sessionStorage.getItem(key);
    if (quota === null) return;
    const real = navigator.storage.estimate.bind(navigator.storage);
    navigator.storage.estimate = async () => ({ ...(await real()), quota: Number(quota) });
  }, QUOTA_KEY);
}

/** Reload with this quota (undefined: the browser's own). */
async function reloadWithQuota(page: Page, quota: number | undefined): Promise<void> {
  await page.evaluate(([key, q]) => (q === null ? sessionStorage.removeItem(key) : sessionStorage.setItem(key, q)), [
    QUOTA_KEY,
    quota === undefined ? null : String(quota),
  ] as const);
  await page.reload();
  await waitForWebGpuCheck(page);
}

/** Names of the weight files stored in the Cache API. */
const storedFiles = (page: Page) =>
  page.evaluate(async () => {
    if (!(await caches.has('tessera-weights-v1'))) return [];
    return (await (await caches.open('tessera-weights-v1')).keys()).map((r) => new URL(r.url).pathname + new URL(r.url).search);
  });

test('a quota without room: StorageQuotaError by name, or a load that stores nothing; then stored, listed and deleted', async ({
  page,
}, testInfo) => {
  await fakeQuota(page);
  await page.goto('/?device=webgpu');
  const origin = new URL(page.url()).origin;
  await reloadWithQuota(page, Math.floor(WEIGHT_BYTES / 4));
  const downloads: string[] = [];
  page.on('request', (r) => {
    if (r.url().endsWith('.safetensors') && r.method() === 'GET') downloads.push(r.url());
  });

  // Storing required: refused by name, with the numbers, before the weights are fetched.
  await page.locator('#require-storage').check();
  await load(page);
  await expect(page.locator('body')).toHaveAttribute('data-model', 'error');
  await expect(page.locator('#load-error .error-name')).toHaveText('StorageQuotaError');
  await expect(page.locator('#load-error .error-code')).toHaveText('STORAGE_QUOTA');
  await expect(page.locator('#load-error .error-message')).toContainText(
    `needs ${(WEIGHT_BYTES / 1e6).toFixed(2)} MB of browser storage (plus 10% headroom), but this site may store only`,
  );
  expect(downloads).toEqual([]);
  await shot(page, testInfo, 'demo-storage-quota-error');

  // Not required: it loads from the network and stores nothing.
  await page.locator('#require-storage').uncheck();
  await load(page);
  await expect(page.locator('body')).toHaveAttribute('data-model', 'ready');
  const unstored = await page.evaluate(() => window.tesseraEngine!.stats().storage!);
  expect(unstored).toMatchObject({ storing: false, neededBytes: WEIGHT_BYTES });
  expect(unstored.quotaBytes).toBe(Math.floor(WEIGHT_BYTES / 4));
  await expect(page.locator('dd[data-storage="load"]')).toContainText('not stored: downloading');
  expect(await storedFiles(page)).toEqual([]);

  // The quota back: the next load stores the model; the panel lists it and deletes it.
  await reloadWithQuota(page, undefined);
  await load(page);
  await expect(page.locator('body')).toHaveAttribute('data-model', 'ready');
  expect(await page.evaluate(() => window.tesseraEngine!.stats().storage!.storing)).toBe(true);
  // Its one part and its index (src/io/cache-parts.ts).
  expect(await storedFiles(page)).toEqual([
    '/models/smolvlm-tiny/model.safetensors?tessera-part=0',
    '/models/smolvlm-tiny/model.safetensors',
  ]);
  const model = `${origin}/models/smolvlm-tiny/`;
  const row = page.locator(`#stored-models li[data-model="${model}"]`);
  await expect(row.locator('.stored-size')).toHaveText(`1 file, ${(WEIGHT_BYTES / 1e6).toFixed(1)} MB`);
  await expect(page.locator('dd[data-storage="load"]')).toHaveText(`stored (${(WEIGHT_BYTES / 1e6).toFixed(1)} MB downloaded)`);
  await shot(page, testInfo, 'demo-storage-listed');
  await row.getByRole('button', { name: 'Delete' }).click();
  await expect(page.locator('#storage [role="status"]')).toHaveText(`Deleted ${model}: 1 entries, ${(WEIGHT_BYTES / 1e6).toFixed(1)} MB.`);
  await expect(row).toHaveCount(0);
  expect(await storedFiles(page)).toEqual([]);
});
