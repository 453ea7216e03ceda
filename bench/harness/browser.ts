// One way to run a browser benchmark (shared by the suites under bench/): a Vite dev server over the
// repository with HMR and file watching off (edits elsewhere in the checkout must not reload a page
// mid-run), headless Chromium with WebGPU (scripts/chromium.ts), and a page that leaves its figures on
// `window[resultKey]` or a string on `window[errorKey]`. Lines the page logs with a "[bench]" prefix
// are echoed; page errors and warnings too.

import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { createServer, type ViteDevServer } from 'vite';
import { chromiumLaunchOptions } from '../../scripts/chromium';

export class BenchPageError extends Error {
  override readonly name = 'BenchPageError';
}

export interface BenchBrowser {
  url: string;
  page: Page;
  close(): Promise<void>;
}

/** Serve `root` (paths under repoRoot reachable as /@fs/...), open Chromium and one page. */
export async function openBenchBrowser(root: string, repoRoot: string, publicDir: string | false = false): Promise<BenchBrowser> {
  const server: ViteDevServer = await createServer({
    configFile: false,
    root,
    publicDir,
    cacheDir: join(repoRoot, 'node_modules', '.vite-bench'),
    logLevel: 'warn',
    appType: 'mpa',
    server: { host: '127.0.0.1', port: 0, hmr: false, watch: null, fs: { allow: [repoRoot] } },
  });
  await server.listen();
  const url = server.resolvedUrls?.local[0];
  if (!url) throw new BenchPageError('Vite reported no local URL');
  let browser: Browser | undefined;
  try {
    browser = await chromium.launch(chromiumLaunchOptions());
    const page = await browser.newPage();
    page.on('console', (m) => {
      const t = m.text();
      if (t.startsWith('[bench]')) console.log(t);
      else if (m.type() === 'error' || m.type() === 'warning') console.log(`[page ${m.type()}] ${t}`);
    });
    page.on('pageerror', (e) => console.log(`[page error] ${e.message}`));
    const b = browser;
    return {
      url,
      page,
      close: async () => {
        await b.close();
        await server.close();
      },
    };
  } catch (e) {
    await browser?.close();
    await server.close();
    throw e;
  }
}

/** Open `url` and wait (up to timeoutMs) for the page's result or error. */
export async function runBenchPage<T>(page: Page, url: string, keys: { result: string; error: string }, timeoutMs: number): Promise<T> {
  await page.goto(url);
  const handle = await page.waitForFunction(
    ({ result, error }) => (window as unknown as Record<string, unknown>)[result] ?? (window as unknown as Record<string, unknown>)[error],
    keys,
    { timeout: timeoutMs, polling: 500 },
  );
  const value = await handle.jsonValue();
  if (typeof value === 'string') throw new BenchPageError(`benchmark page failed: ${value}`);
  return value as T;
}

export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}
