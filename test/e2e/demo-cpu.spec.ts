// The demo page in a Chromium without WebGPU (no WebGPU flags, no GPU): the notice says why and that
// models with ONNX graphs still run; the bundled tiny model loads on the CPU backend (onnxruntime-web,
// WebAssembly), answers with the greedy goldens, and says where it runs and how fast.

import { expect, test } from '@playwright/test';
import { CHROMIUM_ARGS, chromiumLaunchOptions } from '../../scripts/chromium';
import { answered, ask, load, shot, waitForWebGpuCheck, watchConsole } from './demo-helpers';
import { goldenTokens } from './goldens';

test.use({
  launchOptions: {
    ...chromiumLaunchOptions(),
    args: [...CHROMIUM_ARGS.filter((a) => !/webgpu|swiftshader/.test(a)), '--disable-gpu'],
  },
});

test('with WebGPU off, the demo answers on the CPU (WebAssembly) and says so', async ({ page }, testInfo) => {
  const errors = watchConsole(page);
  await page.goto('/');
  await waitForWebGpuCheck(page);
  expect(await page.locator('body').getAttribute('data-webgpu')).not.toBe('ok');
  await expect(page.locator('#webgpu-status .cpu-fallback')).toContainText('on the CPU through WebAssembly');
  await page.locator('#max-tokens').fill('8');
  await load(page);
  await expect(page.locator('body')).toHaveAttribute('data-model', 'ready');
  await expect(page.locator('body')).toHaveAttribute('data-backend', 'wasm');
  await expect(page.locator('#load-status')).toContainText('it runs on the CPU (WebAssembly)');
  await expect(page.locator('#load-status')).toContainText('there is no WebGPU');
  const run = answered(await ask(page, 'Can you describe this image?'));
  expect(run.info.tokenIds).toEqual(goldenTokens('smolvlm-tiny').slice(0, 8));
  await expect(page.locator('#messages > li.assistant').last().locator('.meta')).toContainText('tok/s');
  await expect(page.locator('[data-stat="backend"]')).toHaveText('CPU (WebAssembly)');
  await shot(page, testInfo, 'demo-cpu-answered');
  expect(errors).toEqual([]);
});
