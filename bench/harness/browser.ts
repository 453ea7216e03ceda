// One way to run a browser benchmark (shared by the suites under bench/): the suite's folder on the
// benchmarks' Vite dev server (server.ts), headless Chromium with WebGPU (scripts/chromium.ts), and a page
// that leaves its figures on `window[resultKey]` or a string on `window[errorKey]`. Lines the page logs
// with a "[bench]" prefix are echoed; page errors and warnings too (a suite may quiet some it expects).

import { chromium, type Page } from 'playwright-core';
import { chromiumLaunchOptions } from '../../scripts/chromium';
import { startBenchServer, type BenchServer, type BenchServerOptions } from './server';

export class BenchPageError extends Error {
  override readonly name = 'BenchPageError';
}

export interface BenchBrowser {
  url: string;
  page: Page;
  /** Chromium's version, for the report. */
  version: string;
  close(): Promise<void>;
}

export interface BenchBrowserOptions extends Omit<BenchServerOptions, 'listen'> {
  /** Page console lines not to echo (ones the suite reports its own way). */
  quiet?: (text: string) => boolean;
}

/** Serve the suite's folder, open Chromium and one page. */
export async function openBenchBrowser(options: BenchBrowserOptions): Promise<BenchBrowser> {
  const server = await startBenchServer(options);
  try {
    const b = await launchBenchPage(server, options);
    return {
      ...b,
      close: async () => {
        await b.close();
        await server.close();
      },
    };
  } catch (e) {
    await server.close();
    throw e;
  }
}

/** Chromium and one page on a server already started (a suite that ran Node work on it first); close() closes Chromium. */
export async function launchBenchPage(server: BenchServer, options: Pick<BenchBrowserOptions, 'quiet'> = {}): Promise<BenchBrowser> {
  const browser = await chromium.launch(chromiumLaunchOptions());
  try {
    const page = await browser.newPage();
    page.on('console', (m) => {
      const t = m.text();
      if (m.type() === 'debug' || options.quiet?.(t)) return; // debug: Vite client chatter
      if (t.startsWith('[bench]')) console.log(t);
      else if (m.type() === 'error' || m.type() === 'warning') console.log(`[page ${m.type()}] ${t}`);
    });
    page.on('pageerror', (e) => console.log(`[page error] ${e.message}`));
    page.on('crash', () => console.log('[page crash] the renderer crashed (out of memory?)'));
    return {
      url: server.url,
      page,
      version: browser.version(),
      close: () => browser.close(),
    };
  } catch (e) {
    await browser.close();
    throw e;
  }
}

/**
 * Open `url` and wait (up to timeoutMs) for the page's result or error. A reload or a crash stops the wait
 * at once: a reload restarts the benchmark from scratch, so its figures would never come.
 */
export async function runBenchPage<T>(page: Page, url: string, keys: { result: string; error: string }, timeoutMs: number): Promise<T> {
  await page.goto(url);
  let stop: (e: BenchPageError) => void = () => {};
  const stopped = new Promise<never>((_, reject) => {
    stop = reject;
  });
  const onLoad = () => stop(new BenchPageError('the page reloaded mid-run, which restarts the benchmark; stopping'));
  const onCrash = () => stop(new BenchPageError('the page crashed'));
  page.on('load', onLoad);
  page.on('crash', onCrash);
  try {
    const finished = page.waitForFunction(
      ({ result, error }) =>
        (window as unknown as Record<string, unknown>)[result] ?? (window as unknown as Record<string, unknown>)[error],
      keys,
      { timeout: timeoutMs, polling: 500 },
    );
    finished.catch(() => {}); // when a reload or crash wins the race, closing the browser rejects this one
    const value = await (await Promise.race([finished, stopped])).jsonValue();
    if (typeof value === 'string') throw new BenchPageError(`benchmark page failed: ${value}`);
    return value as T;
  } finally {
    page.off('load', onLoad);
    page.off('crash', onCrash);
  }
}

export function percentile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}
