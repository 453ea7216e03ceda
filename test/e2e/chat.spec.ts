// The demo page answers about the sample image with the bundled tiny model in headless Chromium: `?run`
// loads and asks at once, with no console error and no request for a file the checkpoint does not have;
// a reload loads the weights from the browser's Cache API instead of the network (no request for them,
// not even the storage check's HEAD) and gives the same tokens; a checkpoint picked as local files loads
// without any network request for model files.

import { readdirSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { answered, ask, load, loadState, shot, waitForWebGpuCheck, watchConsole } from './demo-helpers';
import { goldenTokens } from './goldens';

test('?run loads and answers with no console errors, and a reload reuses the cached weights', async ({ page }, testInfo) => {
  const errors = watchConsole(page);
  const weightFetches: string[] = [];
  const failed: string[] = [];
  page.on('request', (r) => {
    if (r.url().endsWith('.safetensors')) weightFetches.push(`${r.method()} ${r.url()}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
  });
  await page.goto('/?device=webgpu&run');
  await expect(page.locator('body')).toHaveAttribute('data-chat', /done|error/);
  const first = answered(await page.evaluate(() => window.tesseraRun));
  expect(first.info.tokenIds).toEqual(goldenTokens('smolvlm-tiny'));
  expect(first.finishReason).toBe('length');
  expect(first.text.length).toBeGreaterThan(0);
  expect(await page.locator('#messages > li.assistant .content').textContent()).toBe(first.text);
  // One download, after the storage check's HEAD for its size (src/storage/download-plan.ts).
  const url = new URL('/models/smolvlm-tiny/model.safetensors', page.url()).href;
  expect(weightFetches).toEqual([`HEAD ${url}`, `GET ${url}`]);
  // Optional files the checkpoint lacks (chat_template.jinja, model.safetensors.index.json) are never
  // asked for, by the page or by the encoder worker: public/models/index.json lists what is there.
  expect(failed).toEqual([]);
  expect(errors).toEqual([]);
  await shot(page, testInfo, 'demo-run-autostart');

  await page.reload();
  await expect(page.locator('body')).toHaveAttribute('data-chat', /done|error/);
  const second = answered(await page.evaluate(() => window.tesseraRun));
  expect(second.loadedFromCache).toBe(true);
  // Stored: the check needs no size and the load fetches nothing.
  expect(weightFetches.length).toBe(2);
  expect(second.info.tokenIds).toEqual(first.info.tokenIds);
  expect(failed).toEqual([]);
  expect(errors).toEqual([]);
});

test('a checkpoint picked as local files loads without any network request for model files', async ({ page }, testInfo) => {
  // stall: the engine fails a load that gets nowhere for 2 minutes, naming its phase (demo/main.ts).
  await page.goto('/?device=webgpu&stall=120000');
  await waitForWebGpuCheck(page);
  const fetched: string[] = [];
  page.on('request', (r) => {
    if (r.url().includes('/models/')) fetched.push(r.url());
  });
  const dir = 'public/models/smolvlm-tiny';
  // The checkpoint's top-level files, as a user picks them (its onnx/ folder is the CPU backend's).
  const names = readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isFile() && e.name !== 'README.md')
    .map((e) => e.name);
  await page.locator('#model-files').setInputFiles(names.map((n) => `${dir}/${n}`));
  await expect(page.locator('#kind-local')).toBeChecked();
  await expect(page.locator('#local-summary')).toContainText(`${names.length} files`);
  await load(page);
  expect(await page.locator('body').getAttribute('data-model'), await loadState(page)).toBe('ready');
  const run = answered(await ask(page));
  expect(run.info.tokenIds).toEqual(goldenTokens('smolvlm-tiny'));
  expect(fetched).toEqual([]);
  await shot(page, testInfo, 'demo-local-files');
});
