// A GGUF pair picked as local files in the demo (the model .gguf and its mmproj .gguf, as llama.cpp's
// converter lays them out: scripts/gguf-convert.ts) loads in Chromium on WebGPU and answers about the sample
// image with the same tokens as the safetensors checkpoint it holds (F32: the same values), with no network
// request for model files and no console error.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
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
    await expect(page.locator('#load-status')).toContainText('ready');
    const run = answered(await ask(page));
    expect(run.info.tokenIds).toEqual(goldenTokens('smolvlm-tiny'));
    expect(fetched).toEqual([]);
    expect(errors).toEqual([]);
    await shot(page, testInfo, 'demo-gguf-files');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
