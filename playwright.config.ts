// Browser end-to-end tests: headless Chromium (software WebGPU on a machine without a GPU) against the
// demo served by Vite's dev server, so WGSL `?raw` imports behave exactly as in development.

import { defineConfig } from '@playwright/test';
import { chromiumLaunchOptions } from './scripts/chromium';

const PORT = Number(process.env.TESSERA_E2E_PORT ?? 5199);

// The longest files first. Playwright hands files to its workers in project order, and within a project
// in alphabetical order: parity.spec.ts (every tiny checkpoint's parity, Voxtral, the CPU backend, the
// weight dtypes; about a fifth of all the e2e test time) came 15th of 20, late enough for one worker to be
// left running it after the other had run out of files. These three make up about two fifths of the test
// time (one run on a loaded machine: parity 510 s, encoder-cache 388 s, selfcheck 162 s of about 2,700 s),
// so started first they end well before the other files do, and the run ends with short files on both
// workers.
const LONGEST_FIRST = /\/(parity|encoder-cache|selfcheck)\.spec\.ts$/;

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
  projects: [
    { name: 'longest', testMatch: LONGEST_FIRST },
    { name: 'rest', testIgnore: LONGEST_FIRST },
  ],
  webServer: {
    command: `npx vite --port ${PORT} --strictPort --logLevel warn`,
    url: `http://localhost:${PORT}`,
    reuseExistingServer: !process.env.CI,
    timeout: 60_000,
  },
});
