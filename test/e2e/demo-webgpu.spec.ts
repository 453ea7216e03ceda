// The WebGPU check on page load: with WebGPU the page says which adapter it got and Load is enabled;
// without navigator.gpu, or when requestAdapter() gives no adapter, an alert says what to do, and that a
// model with ONNX graphs still loads on the CPU (Load stays enabled; demo-cpu.spec.ts loads one that way).
// (Init scripts take WebGPU away before the page's own scripts run.)

import { expect, test } from '@playwright/test';
import { shot, waitForWebGpuCheck, watchConsole } from './demo-helpers';

test('WebGPU present: the adapter is named and Load is enabled', async ({ page }, testInfo) => {
  const errors = watchConsole(page);
  await page.goto('/');
  await waitForWebGpuCheck(page);
  const notice = page.locator('#webgpu-status');
  await expect(notice).toHaveAttribute('data-state', 'ok');
  await expect(notice).toHaveAttribute('role', 'status');
  await expect(notice).toContainText('WebGPU is ready');
  await expect(notice).toContainText('swiftshader');
  await expect(notice).toContainText('software (CPU) adapter');
  await expect(page.locator('#load')).toBeEnabled();
  await expect(page.locator('#run')).toBeDisabled(); // nothing loaded yet
  expect(errors).toEqual([]);
  await shot(page, testInfo, 'demo-webgpu-ok');
});

test('no navigator.gpu: an alert explains what to do, and that models with ONNX graphs still load on the CPU', async ({
  page,
}, testInfo) => {
  await page.addInitScript(() => {
    delete (Navigator.prototype as { gpu?: unknown }).gpu;
  });
  await page.goto('/');
  await waitForWebGpuCheck(page);
  const notice = page.locator('#webgpu-status');
  await expect(notice).toHaveAttribute('data-state', 'no-api');
  await expect(notice).toHaveAttribute('role', 'alert');
  await expect(notice).toContainText('This browser has no WebGPU');
  // Headless Chromium on Linux: the advice names the flag and chrome://gpu.
  await expect(notice.locator('li').first()).toContainText('chrome://flags/#enable-unsafe-webgpu');
  await expect(notice).toContainText('chrome://gpu');
  await expect(notice.locator('.cpu-fallback')).toContainText('on the CPU through WebAssembly');
  await expect(page.locator('#load')).toBeEnabled();
  await shot(page, testInfo, 'demo-webgpu-missing');
});

test('no adapter: the alert says why there may be none and what to try', async ({ page }, testInfo) => {
  await page.addInitScript(() => {
    GPU.prototype.requestAdapter = async () => null;
  });
  await page.goto('/');
  await waitForWebGpuCheck(page);
  const notice = page.locator('#webgpu-status');
  await expect(notice).toHaveAttribute('data-state', 'no-adapter');
  await expect(notice).toHaveAttribute('role', 'alert');
  await expect(notice).toContainText('requestAdapter() returned null');
  await expect(notice).toContainText('graphics acceleration');
  await expect(notice).toContainText('--enable-unsafe-swiftshader');
  await expect(notice.locator('.cpu-fallback')).toContainText('on the CPU through WebAssembly');
  await expect(page.locator('#load')).toBeEnabled();
  await shot(page, testInfo, 'demo-webgpu-no-adapter');
});
