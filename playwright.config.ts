// Browser end-to-end tests: headless Chromium (software WebGPU on a machine without a GPU) against the
// demo served by Vite's dev server, so WGSL `?raw` imports behave exactly as in development.

import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions } from './scripts/chromium';

const PORT = Number(process.env.TESSERA_E2E_PORT ?? 5199);

export default defineConfig({
  testDir: 'test/e2e',
  globalSetup: './test/e2e/global-setup.ts',
  timeout: 300_000,
  expect: { timeout: 240_000 },
  // Two files at a time: one test's page leaves about a third of this 2-core machine idle (its pipelines
  // compile on SwiftShader in bursts), so two workers finished the 34 tests in 9.9 min against 13.2-13.7
  // with one. Tests within a file still run one after another.
  fullyParallel: false,
  workers: Number(process.env.TESSERA_E2E_WORKERS ?? 2),
  reporter: process.env.CI ? 'list' : [['list']],
  use: {
    baseURL: `http://localhost:${PORT}`,
    launchOptions: chromiumLaunchOptions(),
  },
  webServer: {
    command: `npx vite --port ${PORT} --strictPort --logLevel warn`,
    url: `http://localhost:${PORT}`,
    reuseExistingServer: !process.env.CI,
    timeout: 60_000,
  },
});
