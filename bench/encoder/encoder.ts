// `npm run bench:cache` and `npm run bench:overlap` (`tsx bench/encoder/encoder.ts cache|overlap`): encoder
// workers and the encoder cache at the real SmolVLM-256M shape (random weights; the bench model's
// processor makes one 512 tile per image), in headless Chromium.
//
//   cache:    cold TTFT (encode in the worker), memory-hit TTFT, and IndexedDB-hit TTFT after a reload,
//             with ratios. Warm-up requests compile the pipelines first so each figure is steady state.
//   overlap:  request A's decode inter-token latency (p50, p95) alone, and while request B's image
//             encodes in a worker, with the ratio.
// Prints a table and ends with ONE JSON line holding every figure.

import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { BENCH_LONGEST_EDGE, BENCH_MODEL_DIR, ensureBenchModel } from '../../scripts/make-bench-model';
import { openBenchBrowser, runBenchPage } from '../harness/browser';

const suiteDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(suiteDir, '..', '..');
const log = (line: string) => console.log(`[bench] ${line}`);

/** Run one phase of the page (encoder-bench-page.ts) and return its figures. */
function runPage(page: Page, url: string, timeoutMs: number): Promise<Record<string, any>> {
  return runBenchPage(page, url, { result: '__encoderBenchResult', error: '__encoderBenchError' }, timeoutMs);
}

const ms = (x: number) => `${x.toFixed(0).padStart(7)} ms`;

async function main(): Promise<void> {
  const which = process.argv[2];
  if (which !== 'cache' && which !== 'overlap') throw new Error('usage: tsx bench/encoder/encoder.ts cache|overlap');
  const started = Date.now();
  log(
    `NOTE: bench model = SmolVLM-256M-Instruct shape, random weights, size.longest_edge ${BENCH_LONGEST_EDGE} (one 512x512 tile, 64 image tokens per image)`,
  );
  await ensureBenchModel(log);
  const { url, page, close } = await openBenchBrowser({ root: suiteDir, repoRoot, publicDir: dirname(BENCH_MODEL_DIR) });
  try {
    const base = new URLSearchParams({
      model: relative(dirname(BENCH_MODEL_DIR), BENCH_MODEL_DIR),
      sample: `/@fs${join(repoRoot, 'public/sample.png')}`,
    });
    const perSubmit = process.argv.find((a) => a.startsWith('--per-submit='))?.split('=')[1];
    if (perSubmit !== undefined) base.set('perSubmit', perSubmit);
    const timeout = 60 * 60_000;
    if (which === 'cache') {
      const cold = await runPage(page, `${url}encoder-bench.html?${base}&bench=cache&phase=cold`, timeout);
      log('reloading the page (new engine, same IndexedDB)');
      const reload = await runPage(page, `${url}encoder-bench.html?${base}&bench=cache&phase=reload`, timeout);
      const r = {
        bench: 'cache',
        adapter: 'headless Chromium, WebGPU',
        coldTtftMs: cold.cold.ttftMs,
        memoryHitTtftMs: cold.memory.ttftMs,
        indexedDbHitTtftMs: reload.indexeddb.ttftMs,
        coldOverMemory: cold.cold.ttftMs / cold.memory.ttftMs,
        coldOverIndexedDb: cold.cold.ttftMs / reload.indexeddb.ttftMs,
        cold: cold.cold,
        memory: cold.memory,
        indexeddb: reload.indexeddb,
        encodesBeforeReload: cold.encodes,
        encodesAfterReload: reload.encodes,
        persistentHitsAfterReload: reload.persistentHits,
        totalSeconds: (Date.now() - started) / 1000,
      };
      console.log('\nTTFT by where the image embeddings came from (max_tokens 1; pipelines warmed up first)');
      console.log('case                   TTFT        encode      prefill   source       cold / this');
      for (const [name, x] of [
        ['cold (worker encode)', r.cold],
        ['memory hit', r.memory],
        ['IndexedDB hit (reload)', r.indexeddb],
      ] as const) {
        console.log(
          `${name.padEnd(22)} ${ms(x.ttftMs)} ${ms(x.encodeMs)} ${ms(x.prefillMs)}   ${String(x.source).padEnd(11)}  ${(r.coldTtftMs / x.ttftMs).toFixed(2)}x`,
        );
      }
      console.log(`encodes: ${r.encodesBeforeReload} before the reload (warm-up + cold), ${r.encodesAfterReload} after it`);
      console.log(JSON.stringify(r));
    } else {
      const o = await runPage(page, `${url}encoder-bench.html?${base}&bench=overlap`, timeout);
      const r = {
        bench: 'overlap',
        adapter: 'headless Chromium, WebGPU',
        aloneP50Ms: o.alone.p50,
        aloneP95Ms: o.alone.p95,
        duringEncodeP50Ms: o.duringEncode.p50,
        duringEncodeP95Ms: o.duringEncode.p95,
        p50Ratio: o.duringEncode.p50 / o.alone.p50,
        p95Ratio: o.duringEncode.p95 / o.alone.p95,
        ...o,
        totalSeconds: (Date.now() - started) / 1000,
      };
      console.log("\nrequest A's decode inter-token latency, alone and while request B's image encodes in a worker");
      console.log('case                     p50          p95      steps');
      console.log(`A alone            ${ms(r.aloneP50Ms)} ${ms(r.aloneP95Ms)} ${String(o.alone.n).padStart(6)}`);
      console.log(`A during B encode  ${ms(r.duringEncodeP50Ms)} ${ms(r.duringEncodeP95Ms)} ${String(o.duringEncode.n).padStart(6)}`);
      console.log(
        `ratio (during / alone): p50 ${r.p50Ratio.toFixed(2)}x, p95 ${r.p95Ratio.toFixed(2)}x; B's encode took ${o.bEncodeMs.toFixed(0)} ms in the ${o.encoderMode} encoder`,
      );
      console.log(JSON.stringify(r));
    }
  } finally {
    await close();
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
