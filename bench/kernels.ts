// `npm run bench:kernels`: serves bench/kernels.html with Vite (WGSL `?raw` imports need it), opens it
// in headless Chromium with software WebGPU, streams the page's progress lines, then prints the figures
// as tables and, last, as one JSON line for scripts (`npm run bench:kernels | tail -n 1`).
// Flags: --quick (small subset, for development), --only=sample (the sampler section alone, no ORT),
// --timeout-min=N (default 30).

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type ConsoleMessage } from 'playwright-core';
import { createServer, type ViteDevServer } from 'vite';
import { chromiumLaunchOptions } from '../scripts/chromium';
import { formatReport } from './report';
import type { KernelsBenchResult } from './result';

class BenchError extends Error {
  override readonly name = 'BenchError';
}

const benchDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(benchDir, '..');

async function startServer(): Promise<{ server: ViteDevServer; url: string }> {
  const server = await createServer({
    configFile: false,
    root: benchDir,
    // Our own dep cache, so this never races the demo's dev server over node_modules/.vite.
    cacheDir: join(repoRoot, 'node_modules', '.vite-bench'),
    logLevel: 'warn',
    // No HMR and no file watching: an edit elsewhere in the checkout must not reload the page mid-run.
    server: { host: '127.0.0.1', port: 0, hmr: false, watch: null, fs: { allow: [repoRoot] } },
    // Only protobufjs (CommonJS) is pre-bundled. Discovery is off so that a dependency found mid-run
    // cannot make Vite reload the page; onnxruntime-web (ESM, finds its wasm by URL) is served as is.
    optimizeDeps: { noDiscovery: true, include: ['protobufjs'] },
  });
  await server.listen();
  const url = server.resolvedUrls?.local[0];
  if (!url) throw new BenchError('Vite dev server started but reported no local URL');
  return { server, url };
}

/** Page console to stdout: our progress lines as they are, others (ORT warnings) tagged; debug dropped. */
function echo(message: ConsoleMessage): void {
  if (message.type() === 'debug') return; // Vite client chatter
  const text = message.text();
  if (text.startsWith('[bench]')) console.log(text);
  else console.log(`[page ${message.type()}] ${text}`);
}

async function runPage(browser: Browser, url: string, timeoutMs: number): Promise<KernelsBenchResult> {
  const page = await browser.newPage();
  page.on('console', echo);
  page.on('pageerror', (e) => console.log(`[page error] ${e.message}`));
  // A reload (crash, or Vite forcing one) restarts the benchmark from scratch: stop instead of waiting.
  let loads = 0;
  const reloaded = new Promise<never>((_, reject) => {
    page.on('load', () => {
      loads += 1;
      if (loads > 1) reject(new BenchError('the page reloaded mid-run, which restarts the benchmark; stopping'));
    });
  });
  await page.goto(url);
  const finished = page.waitForFunction(() => window.__benchResult ?? window.__benchError, null, {
    timeout: timeoutMs,
    polling: 1000,
  });
  finished.catch(() => {}); // when the reload wins the race, closing the browser rejects this one
  const handle = await Promise.race([finished, reloaded]);
  const value = (await handle.jsonValue()) as KernelsBenchResult | string;
  if (typeof value === 'string') throw new BenchError(`the benchmark page failed: ${value}`);
  return value;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const only = args.find((a) => a.startsWith('--only='))?.split('=')[1];
  if (only !== undefined && only !== 'sample') throw new BenchError(`--only takes 'sample', got '${only}'`);
  const query = [quick ? 'quick' : '', only ? `only=${only}` : ''].filter(Boolean).join('&');
  const timeoutArg = args.find((a) => a.startsWith('--timeout-min='));
  const timeoutMs = Number(timeoutArg?.split('=')[1] ?? 30) * 60_000;
  const started = Date.now();
  const { server, url } = await startServer();
  let browser: Browser | undefined;
  try {
    browser = await chromium.launch(chromiumLaunchOptions());
    const pageUrl = `${url}kernels.html${query ? `?${query}` : ''}`;
    console.log(`[bench] Chromium ${browser.version()}, page ${pageUrl}`);
    const result = await runPage(browser, pageUrl, timeoutMs);
    const seconds = (Date.now() - started) / 1000;
    console.log('');
    console.log(formatReport(result));
    console.log(`Total time: ${seconds.toFixed(1)} s`);
    console.log(JSON.stringify({ ...result, totalSeconds: seconds }));
  } finally {
    await browser?.close();
    await server.close();
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : e);
  process.exitCode = 1;
});
