// A GGUF pair (the model .gguf and its mmproj .gguf, as llama.cpp's converter lays them out:
// scripts/gguf-convert.ts) loads in the demo in Chromium on WebGPU and answers about the sample image with
// the same tokens as the safetensors checkpoint it holds (F32: the same values), no console error: picked
// as local files (no network request for model files), and by the model file's URL (its mmproj found by
// ggml-org's naming, mmproj-<model file>).

import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { answered, ask, load, shot, waitForWebGpuCheck, watchConsole } from './demo-helpers';
import { goldenTokens } from './goldens';

test('a GGUF pair picked as files answers as its safetensors checkpoint', async ({ page }, testInfo) => {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-gguf-e2e-'));
  try {
    execFileSync(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'scripts/gguf-convert.ts', 'public/models/smolvlm-tiny', dir, 'F32'], {
      stdio: 'pipe',
      timeout: 120_000, // a stuck conversion fails the test in minutes
    });
    const errors = watchConsole(page);
    await page.goto('/?device=webgpu');
    await waitForWebGpuCheck(page);
    // From here on (the page itself fetched the bundled list when it opened).
    const fetched: string[] = [];
    page.on('request', (r) => {
      if (r.url().includes('/models/')) fetched.push(r.url());
    });
    await page.locator('#model-files').setInputFiles([join(dir, 'smolvlm-tiny-F32.gguf'), join(dir, 'mmproj-smolvlm-tiny-F32.gguf')]);
    await expect(page.locator('#kind-local')).toBeChecked();
    await load(page);
    await expect(page.locator('body'), (await page.locator('#load-status').textContent()) ?? '').toHaveAttribute('data-model', 'ready', {
      timeout: 1,
    });
    const run = answered(await ask(page));
    expect(run.info.tokenIds).toEqual(goldenTokens('smolvlm-tiny'));
    // The image was encoded in an encoder worker, which opened the pair again by reference.
    expect(page.workers().map((w) => w.url())).toContainEqual(expect.stringMatching(/encoder\.worker/));
    expect(fetched).toEqual([]);
    expect(errors).toEqual([]);
    await shot(page, testInfo, 'demo-gguf-files');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a GGUF pair at a URL, its mmproj beside it, answers as its safetensors checkpoint', async ({ page }) => {
  const dir = mkdtempSync(join(tmpdir(), 'tessera-gguf-e2e-'));
  // Served by the demo's dev server (public/ is read at request time).
  const served = `public/models/gguf-e2e-${process.pid}`;
  try {
    execFileSync(process.execPath, ['node_modules/tsx/dist/cli.mjs', 'scripts/gguf-convert.ts', 'public/models/smolvlm-tiny', dir, 'F32'], {
      stdio: 'pipe',
      timeout: 120_000, // a stuck conversion fails the test in minutes
    });
    cpSync(dir, served, { recursive: true });
    const errors = watchConsole(page);
    await page.goto('/?device=webgpu');
    await waitForWebGpuCheck(page);
    await page.locator('#hub-model').fill(new URL(`/models/gguf-e2e-${process.pid}/smolvlm-tiny-F32.gguf`, page.url()).href);
    await expect(page.locator('#kind-hub')).toBeChecked();
    await load(page);
    await expect(page.locator('body'), (await page.locator('#load-status').textContent()) ?? '').toHaveAttribute('data-model', 'ready', {
      timeout: 1,
    });
    const run = answered(await ask(page));
    expect(run.info.tokenIds).toEqual(goldenTokens('smolvlm-tiny'));
    // The image was encoded in an encoder worker, which opened the pair again by reference.
    expect(page.workers().map((w) => w.url())).toContainEqual(expect.stringMatching(/encoder\.worker/));
    expect(errors).toEqual([]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(served, { recursive: true, force: true });
  }
});
