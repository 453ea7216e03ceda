// `npm run soak`: 500 mixed requests (test/helpers/request-mix.ts: good image, text, sampled and streamed
// requests, cancellations before and during a stream, and every kind of bad input) against one engine
// made with the public createEngine (src/node.ts; encoder workers from dist/encoder-worker.js, the
// default), in phases of 100. After each phase, with nothing in flight, it records GPU bytes live, free KV
// blocks, encoder cache references and RSS; they must stay flat from the first hundred to the last, and
// every request must end as its kind says (bad ones alone, with their named error). The engine is the
// built package (dist/node.js, as users import 'tessera/node'; npm run soak builds it). Prints the figures,
// counts, p50/p95 latency, and one JSON line last. Exit code 1 when an outcome or a figure is wrong.
//
//   npm run soak -- --requests 500 --concurrency 4 --model public/models/smolvlm-tiny --mode workers
//   npm run soak -- --http ...   through tessera serve instead (bench/soak/soak-http.ts)

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { KINDS, memoryFigures, mixImages, mixItems, runMix, type MixResult } from '../../test/helpers/request-mix';

if (process.argv.includes('--http')) {
  await import('./soak-http');
} else {
  await soakEngine();
}

async function soakEngine(): Promise<void> {
  const root = resolve(import.meta.dirname, '../..');
  const { values: args } = parseArgs({
    options: {
      requests: { type: 'string', default: '500' },
      concurrency: { type: 'string', default: '4' },
      phase: { type: 'string', default: '100' },
      model: { type: 'string', default: resolve(root, 'public/models/smolvlm-tiny') },
      mode: { type: 'string', default: 'workers' },
      'rss-slack-mb': { type: 'string', default: '64' },
    },
  });
  const numRequests = Number(args.requests);
  const concurrency = Number(args.concurrency);
  const phaseSize = Number(args.phase);
  const rssSlack = Number(args['rss-slack-mb']) * 2 ** 20;

  const packageEntry = resolve(root, 'dist/node.js');
  if (!existsSync(packageEntry)) throw new Error(`${packageEntry} is missing: run vite build --mode lib first (npm run soak does)`);
  const { createEngine } = (await import(pathToFileURL(packageEntry).href)) as typeof import('../../src/node');

  const percentile = (sorted: number[], q: number) =>
    sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : 0;
  const mb = (b: number) => (b / 2 ** 20).toFixed(1);

  const t0 = performance.now();
  const engine = await createEngine({
    model: args.model,
    device: 'webgpu',
    kvCacheTokens: 2048,
    maxTokensPerStep: 128,
    encoder: { mode: args.mode as 'workers' | 'in-process', memoryCacheBytes: 64 * 2 ** 20 },
  });
  const images = await mixImages(8);
  const items = mixItems(numRequests, images.length);
  const reference = new Map<string, number[]>();
  const results: MixResult[] = [];
  const snapshots: Array<{ after: number } & ReturnType<typeof memoryFigures>> = [{ after: 0, ...memoryFigures(engine) }];
  console.log(`soak: ${numRequests} requests, concurrency ${concurrency}, ${args.mode} encoder, model ${args.model}`);
  console.log(
    `${'after'.padStart(6)} ${'GPU MB live'.padStart(12)} ${'KV free'.padStart(9)} ${'cache refs'.padStart(10)} ${'RSS MB'.padStart(8)} ${'heap MB'.padStart(8)} ${'s'.padStart(7)}`,
  );
  const line = (s: (typeof snapshots)[number]) =>
    console.log(
      `${String(s.after).padStart(6)} ${mb(s.gpuBytesLive).padStart(12)} ${`${s.kvFreeBlocks}/${s.kvBlocks}`.padStart(9)} ${String(s.cacheRefs).padStart(10)} ${mb(s.rssBytes).padStart(8)} ${mb(s.heapUsedBytes).padStart(8)} ${((performance.now() - t0) / 1000).toFixed(0).padStart(7)}`,
    );
  line(snapshots[0]);
  try {
    for (let start = 0; start < items.length; start += phaseSize) {
      results.push(...(await runMix(engine, items.slice(start, start + phaseSize), images, concurrency, reference)));
      snapshots.push({ after: results.length, ...memoryFigures(engine) });
      line(snapshots.at(-1)!);
    }
  } finally {
    engine.destroy();
  }

  const mismatches = results.filter((r) => r.mismatch);
  const byKind = Object.fromEntries(KINDS.map((k) => [k, { ok: 0, failed: 0 }]));
  for (const r of results) byKind[r.item.kind][r.error ? 'failed' : 'ok']++;
  const good = results
    .filter((r) => !r.error)
    .map((r) => r.ms)
    .sort((a, b) => a - b);
  const all = results.map((r) => r.ms).sort((a, b) => a - b);
  // Flat: measured at quiescent points from the end of the first phase on (the first phase compiles
  // pipelines, fills the pool and the caches).
  const first = snapshots[1];
  const last = snapshots.at(-1)!;
  const middle = snapshots[Math.floor(snapshots.length / 2)];
  // GPU: the model keeps one step plan per batch shape, built the first time a shape runs (a few KB
  // each, a bounded set); a request's leaked media or KV would be hundreds of KB each. 1 MiB of slack.
  const gpuGrowth = last.gpuBytesLive - first.gpuBytesLive;
  const flat = {
    gpu: gpuGrowth >= 0 && gpuGrowth <= 2 ** 20,
    kv: snapshots.every((s) => s.kvFreeBlocks === s.kvBlocks),
    cacheRefs: snapshots.every((s) => s.cacheRefs === 0),
    rss: last.rssBytes - first.rssBytes <= rssSlack,
  };
  console.log('\noutcomes by kind (ok / failed as expected or not):');
  for (const [k, c] of Object.entries(byKind))
    console.log(`  ${k.padEnd(16)} ${String(c.ok).padStart(4)} ok ${String(c.failed).padStart(4)} failed`);
  console.log(`mismatches: ${mismatches.length}`);
  for (const m of mismatches.slice(0, 10)) console.log(`  #${m.item.index} ${m.mismatch}`);
  console.log(
    `latency, answered requests: p50 ${percentile(good, 0.5).toFixed(0)} ms, p95 ${percentile(good, 0.95).toFixed(0)} ms (${good.length})`,
  );
  console.log(
    `latency, all requests:      p50 ${percentile(all, 0.5).toFixed(0)} ms, p95 ${percentile(all, 0.95).toFixed(0)} ms (${all.length})`,
  );
  console.log(
    `memory start/middle/end (after ${first.after}/${middle.after}/${last.after}): GPU ${mb(first.gpuBytesLive)}/${mb(middle.gpuBytesLive)}/${mb(last.gpuBytesLive)} MB, RSS ${mb(first.rssBytes)}/${mb(middle.rssBytes)}/${mb(last.rssBytes)} MB`,
  );
  console.log(
    `GPU growth after the first ${first.after}: ${gpuGrowth} bytes; GPU pool bytes in use start/end ${first.gpuPoolBytesInUse}/${last.gpuPoolBytesInUse}`,
  );
  console.log(`flat: ${JSON.stringify(flat)}; total ${((performance.now() - t0) / 1000).toFixed(0)} s`);
  const summary = {
    requests: results.length,
    concurrency,
    mode: args.mode,
    answered: good.length,
    failed: results.length - good.length,
    mismatches: mismatches.length,
    byKind,
    latencyMs: {
      answered: { p50: percentile(good, 0.5), p95: percentile(good, 0.95) },
      all: { p50: percentile(all, 0.5), p95: percentile(all, 0.95) },
    },
    memory: { start: first, middle, end: last, beforeFirstRequest: snapshots[0], gpuGrowthBytes: gpuGrowth },
    snapshots,
    flat,
    totalSeconds: (performance.now() - t0) / 1000,
  };
  console.log(JSON.stringify(summary));
  process.exitCode = mismatches.length === 0 && Object.values(flat).every(Boolean) ? 0 : 1;
}
