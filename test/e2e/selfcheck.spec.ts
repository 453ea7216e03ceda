// The demo page runs every kernel against its CPU reference in headless Chromium's own WebGPU, on the
// page and inside a Web Worker (driven through comlink), so the browser path (navigator.gpu in both
// contexts, Vite `?raw` shaders) is proven, not just Dawn in Node.

import { readdirSync } from 'node:fs';
import { expect, test } from '@playwright/test';

/** Every kernel base name, from the WGSL files (variants such as matmul-register report as their kernel). */
const KERNELS = readdirSync('shaders')
  .filter((f) => f.endsWith('.wgsl'))
  .map((f) => f.replace(/\.wgsl$/, '').replace(/-register$/, ''))
  .filter((name, i, all) => all.indexOf(name) === i)
  .sort();

for (const where of ['page', 'worker'] as const) {
  test(`self-check passes every kernel in the browser (${where})`, async ({ page }) => {
    const consoleErrors: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') consoleErrors.push(m.text());
    });
    page.on('pageerror', (e) => consoleErrors.push(e.message));
    await page.goto(`/?selfcheck=${where}`);
    await expect(page.locator('body')).toHaveAttribute('data-selfcheck', /pass|fail/);
    const result = await page.evaluate(() => window.tesseraSelfCheck);
    const log = (await page.locator('#selfcheck-log').textContent()) ?? '';
    if (!result || 'error' in result) throw new Error(`self-check did not run: ${JSON.stringify(result)}\n${log}`);
    expect(result.where).toBe(where);
    const failures = result.results.filter((r) => !r.pass).map((r) => r.message);
    expect(failures, log).toEqual([]);
    expect([...new Set(result.results.flatMap((r) => r.shaders))].sort()).toEqual(KERNELS);
    expect(result.adapter.features.length).toBeGreaterThan(0);
    expect(consoleErrors).toEqual([]);
  });
}
