// The Load step: per-file progress bars with bytes and speed (downloads throttled so the page can be
// seen mid-download), then the kernel compile, then the encoder start; a Hugging Face repo id loaded
// through the Hub's routes (served here from the bundled checkpoint: tests never reach the internet),
// listing files with the tree API so no absent file is requested; and a folder from the directory
// picker (an origin-private folder stands in for the native dialog, which headless Chromium cannot show).

import { readFileSync, statSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { answered, ask, load, shot, waitForWebGpuCheck, watchConsole } from './demo-helpers';
import { goldenTokens } from './goldens';

const TINY = 'public/models/smolvlm-tiny';
const TINY_FILES: string[] = JSON.parse(readFileSync('public/models/index.json', 'utf8')).models.find(
  (m: { id: string }) => m.id === 'smolvlm-tiny',
).files;
const WEIGHTS_MB = (statSync(`${TINY}/model.safetensors`).size / 1e6).toFixed(1);

test('Load shows each file downloading and uploading with bytes and speed, then compiling kernels', async ({ page }, testInfo) => {
  const errors = watchConsole(page);
  await page.goto('/?device=webgpu');
  await waitForWebGpuCheck(page);
  // About 8 MB/s: the 40 MB weight file takes seconds, long enough to see it mid-download.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Network.enable');
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: 8e6, uploadThroughput: -1 });
  await page.locator('#load').click();

  const weights = page.locator('#load-progress li[data-file="model.safetensors"]');
  await expect(weights).toHaveAttribute('data-phase', 'download');
  await expect(weights.locator('.detail')).toContainText(new RegExp(`downloading · [\\d.]+ [kM]B of ${WEIGHTS_MB} MB · [\\d.]+ [kM]B/s`));
  await shot(page, testInfo, 'demo-load-downloading');
  await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 0, downloadThroughput: -1, uploadThroughput: -1 });

  const compile = page.locator('#load-progress li[data-row="compile"]');
  await expect(compile).toBeVisible();
  await expect(compile.locator('.detail')).toContainText(/step \d of 5|5 warm-up steps/);
  if ((await compile.getAttribute('data-state')) === 'active') await shot(page, testInfo, 'demo-load-compiling');

  await expect(page.locator('body')).toHaveAttribute('data-model', 'ready');
  // Order: config + tokenizer, the weight file, the compile, the encoder; all done, every bar full.
  expect(
    await page
      .locator('#load-progress li')
      .evaluateAll((els) => els.map((e) => [e.getAttribute('data-row'), e.getAttribute('data-state')])),
  ).toEqual([
    ['meta', 'done'],
    ['file', 'done'],
    ['compile', 'done'],
    ['encoder', 'done'],
  ]);
  for (const bar of await page.locator('#load-progress progress').all()) {
    expect(await bar.evaluate((b: HTMLProgressElement) => b.value === b.max && b.max > 0)).toBe(true);
  }
  await expect(weights.locator('.detail')).toHaveText(
    new RegExp(`^${WEIGHTS_MB} MB · downloaded at [\\d.]+ MB/s · to the GPU at [\\d.]+ [kMG]?B/s$`),
  );
  await expect(compile.locator('.detail')).toContainText("the language model's GPU pipelines, 5 warm-up steps in");
  await expect(page.locator('#load-status')).toContainText('smolvlm-tiny is ready');
  await expect(page.locator('#run')).toBeEnabled();
  expect(errors).toEqual([]);
  await shot(page, testInfo, 'demo-load-ready');
});

test('a Hugging Face repo id loads through resolve/main/, listed by the Hub API, with no request for absent files', async ({
  page,
}, testInfo) => {
  const errors = watchConsole(page);
  const hub: string[] = [];
  const cors = { 'access-control-allow-origin': '*' };
  await page.context().route('https://huggingface.co/**', async (route) => {
    const url = new URL(route.request().url());
    hub.push(url.pathname);
    if (url.pathname === '/api/models/test-org/smolvlm-tiny/tree/main') {
      const entries = TINY_FILES.map((f) => ({ type: 'file', oid: f, size: statSync(`${TINY}/${f}`).size, path: f }));
      return route.fulfill({ json: [...entries, { type: 'directory', oid: 'd', size: 0, path: 'onnx' }], headers: cors });
    }
    const m = url.pathname.match(/^\/test-org\/smolvlm-tiny\/resolve\/main\/([^/]+)$/);
    if (m && TINY_FILES.includes(m[1])) {
      const body = readFileSync(`${TINY}/${m[1]}`);
      return route.fulfill({
        body,
        headers: {
          ...cors,
          'content-type': m[1].endsWith('.json') ? 'application/json' : 'application/octet-stream',
          'content-length': String(body.byteLength),
        },
      });
    }
    return route.fulfill({ status: 404, body: 'Entry not found', headers: cors });
  });
  await page.goto('/?device=webgpu');
  await waitForWebGpuCheck(page);
  await page.locator('#hub-model').fill('test-org/smolvlm-tiny');
  await expect(page.locator('#kind-hub')).toBeChecked();
  await load(page);
  await expect(page.locator('#load-status')).toContainText('https://huggingface.co/test-org/smolvlm-tiny/resolve/main/ is ready');
  await expect(page.locator('#load-progress li[data-file="model.safetensors"] .detail')).toContainText('downloaded at');
  const run = answered(await ask(page));
  expect(run.info.tokenIds).toEqual(goldenTokens('smolvlm-tiny'));
  // One listing (the encoder worker gets it from the page), and only files the listing has.
  expect(hub.filter((p) => p.startsWith('/api/'))).toEqual(['/api/models/test-org/smolvlm-tiny/tree/main']);
  const asked = hub.filter((p) => !p.startsWith('/api/')).map((p) => p.split('/').pop()!);
  expect(asked.filter((f) => !TINY_FILES.includes(f))).toEqual([]);
  expect(asked).toContain('model.safetensors');
  expect(errors).toEqual([]);
  await shot(page, testInfo, 'demo-hub-model');
});

test('a folder picked with the directory picker loads without any network request for model files', async ({ page }, testInfo) => {
  await page.addInitScript(() => {
    (window as unknown as { showDirectoryPicker: () => Promise<FileSystemDirectoryHandle> }).showDirectoryPicker = async () =>
      (await navigator.storage.getDirectory()).getDirectoryHandle('smolvlm-tiny');
  });
  await page.goto('/?device=webgpu');
  await waitForWebGpuCheck(page);
  await expect(page.locator('#model-folder')).toBeVisible();
  await expect(page.locator('#model-folder-fallback')).toBeHidden();
  // The "folder on disk": the checkpoint copied into the origin's private file system.
  await page.evaluate(async (files) => {
    const dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('smolvlm-tiny', { create: true });
    for (const f of files) {
      const res = await fetch(`/models/smolvlm-tiny/${f}`);
      // Nested names (onnx/...) go into subfolders, as on disk.
      const parts = f.split('/');
      let into = dir;
      for (const part of parts.slice(0, -1)) into = await into.getDirectoryHandle(part, { create: true });
      const w = await (await into.getFileHandle(parts.at(-1)!, { create: true })).createWritable();
      await res.body!.pipeTo(w);
    }
  }, TINY_FILES);
  const fetched: string[] = [];
  page.on('request', (r) => {
    if (r.url().includes('/models/')) fetched.push(r.url());
  });
  await page.locator('#model-folder').click();
  await expect(page.locator('#local-summary')).toHaveText('folder smolvlm-tiny');
  await expect(page.locator('#kind-local')).toBeChecked();
  await load(page);
  await expect(page.locator('#load-status')).toContainText('folder smolvlm-tiny is ready');
  const run = answered(await ask(page));
  expect(run.info.tokenIds).toEqual(goldenTokens('smolvlm-tiny'));
  expect(fetched).toEqual([]);
  await shot(page, testInfo, 'demo-local-folder');
});
