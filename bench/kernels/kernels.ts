// `npm run bench:kernels`: serves kernels.html on the benchmarks' Vite server (WGSL `?raw` imports need
// it), opens it in headless Chromium with software WebGPU (../harness/browser.ts), streams the page's
// progress lines, then prints the figures as tables and, last, as one JSON line for scripts
// (`npm run bench:kernels | tail -n 1`).
// Flags: --quick (small subset, for development), --only=sample (the sampler section alone, no ORT),
// --timeout-min=N (default 30).

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openBenchBrowser, runBenchPage } from '../harness/browser';
import { formatReport } from './report';
import type { KernelsBenchResult } from './result';

class BenchError extends Error {
  override readonly name = 'BenchError';
}

const suiteDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(suiteDir, '..', '..');

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const quick = args.includes('--quick');
  const only = args.find((a) => a.startsWith('--only='))?.split('=')[1];
  if (only !== undefined && only !== 'sample') throw new BenchError(`--only takes 'sample', got '${only}'`);
  const query = [quick ? 'quick' : '', only ? `only=${only}` : ''].filter(Boolean).join('&');
  const timeoutArg = args.find((a) => a.startsWith('--timeout-min='));
  const timeoutMs = Number(timeoutArg?.split('=')[1] ?? 30) * 60_000;
  const started = Date.now();
  // Only protobufjs (CommonJS) is pre-bundled; onnxruntime-web (ESM, finds its wasm by URL) is served as is.
  const b = await openBenchBrowser({ root: suiteDir, repoRoot, preBundle: ['protobufjs'] });
  try {
    const pageUrl = `${b.url}kernels.html${query ? `?${query}` : ''}`;
    console.log(`[bench] Chromium ${b.version}, page ${pageUrl}`);
    const result = await runBenchPage<KernelsBenchResult>(b.page, pageUrl, { result: '__benchResult', error: '__benchError' }, timeoutMs);
    const seconds = (Date.now() - started) / 1000;
    console.log('');
    console.log(formatReport(result));
    console.log(`Total time: ${seconds.toFixed(1)} s`);
    console.log(JSON.stringify({ ...result, totalSeconds: seconds }));
  } finally {
    await b.close();
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : e);
  process.exitCode = 1;
});
