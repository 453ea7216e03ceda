// `npm run bench:serve`: serving many requests at once with the scheduler, in headless Chromium, on the
// SmolVLM-256M shape (real config, random weights; one 512 tile per image). Prints a table per scenario
// and ends with ONE JSON line holding every figure.
//
//   throughput  aggregate decode tokens/s with 1, 4, 16 requests at once, and the ratio to 1
//   prefix      TTFT of a chat's second turn about the same image with and without prefix caching
//   overlap     decode inter-token latency p50/p95 while another request's image encodes, with the
//               decode-priority policy on and off, and that encode's duration in both cases
//   captions    N different images captioned at once (ours) against transformers.js doing the same N one
//               after another in the same browser (the peer; its ONNX export is made as for bench:model)
//
// Flags: --scenarios=throughput,prefix,overlap,captions  --tokens=N (decode tokens, default 32)
//        --captions=N (default 16)  --peer-captions=K (default N)  --no-peer
//        --share=S1,S2 (decode-priority encoder shares the overlap scenario runs, default 0.25,0.1)
//        --overlap=on,off (which decode-priority settings the overlap scenario runs)  --a-tokens=N (request A's tokens)  --timeout-min=N (per page, default 240)

import { cpus, loadavg } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_LONGEST_EDGE, BENCH_MODEL_DIR, ensureBenchModel } from '../../scripts/make-bench-model';
import { openBenchBrowser, percentile, runBenchPage } from '../harness/browser';
import { ensureOnnxExport } from '../model-export';
import { writeBenchInput } from '../model-inputs';

const serveDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(serveDir, '../..');
const log = (line: string) => console.log(`[bench] ${line}`);
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];

const scenarios = (arg('scenarios') ?? 'throughput,prefix,overlap,captions').split(',');
const tokens = Number(arg('tokens') ?? 32);
const numCaptions = Number(arg('captions') ?? 16);
const peerCaptions = process.argv.includes('--no-peer') ? 0 : Number(arg('peer-captions') ?? numCaptions);
// Decode-priority shares the overlap scenario runs (each is one "on" run), then the free encoder ("off").
const shares = (arg('share') ?? '0.25,0.1').split(',').map(Number);
const overlapPolicies = (arg('overlap') ?? 'on,off').split(',');
const aTokens = arg('a-tokens'); // request A's max_tokens in the overlap scenario (default: the page's)
const timeoutMs = Number(arg('timeout-min') ?? 240) * 60_000;
const s1 = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function main(): Promise<void> {
  const started = Date.now();
  log(`bench model = SmolVLM-256M-Instruct shape, random weights, size.longest_edge ${BENCH_LONGEST_EDGE} (one 512x512 tile, 64 image tokens per image)`);
  log(`machine: ${cpus().length} cores, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')} at start`);
  await ensureBenchModel(log);
  if (scenarios.includes('captions') && peerCaptions > 0) {
    await writeBenchInput(BENCH_MODEL_DIR, repoRoot);
    await ensureOnnxExport(BENCH_MODEL_DIR, repoRoot, log);
  }
  const b = await openBenchBrowser(serveDir, repoRoot, dirname(BENCH_MODEL_DIR));
  const model = relative(dirname(BENCH_MODEL_DIR), BENCH_MODEL_DIR);
  const run = <T>(query: Record<string, string | number>) =>
    runBenchPage<T>(b.page, `${b.url}serve.html?${new URLSearchParams({ model, ...Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])) })}`, { result: '__serveBenchResult', error: '__serveBenchError' }, timeoutMs);
  const result: Record<string, unknown> = { bench: 'serve', adapter: 'headless Chromium, WebGPU', model: 'SmolVLM-256M shape, random weights', cores: cpus().length };
  try {
    if (scenarios.includes('throughput')) {
      const t = await run<{ rows: Array<{ concurrent: number; aggregateDecodeTokensPerSecond: number; decodeTokens: number; decodeWindowMs: number; batchSeqsMax: number }> }>({ scenario: 'throughput', tokens });
      const base = t.rows[0].aggregateDecodeTokensPerSecond;
      console.log(`\nAggregate decode throughput (${tokens} tokens per request, text prompts)`);
      console.log('requests at once   decode tok/s   ratio to 1   tokens   window    largest batch');
      for (const r of t.rows) {
        console.log(`${String(r.concurrent).padStart(16)}   ${r.aggregateDecodeTokensPerSecond.toFixed(2).padStart(12)}   ${(r.aggregateDecodeTokensPerSecond / base).toFixed(2).padStart(9)}x   ${String(r.decodeTokens).padStart(6)}   ${s1(r.decodeWindowMs).padStart(7)}   ${String(r.batchSeqsMax).padStart(6)}`);
      }
      result.throughput = { ...t, ratio16: t.rows[2].aggregateDecodeTokensPerSecond / base, ratio4: t.rows[1].aggregateDecodeTokensPerSecond / base };
    }
    if (scenarios.includes('prefix')) {
      const p = await run<{ on: { turn2TtftMs: number; turn2CachedTokens: number; turn2PromptTokens: number }; off: { turn2TtftMs: number; turn2PromptTokens: number } }>({ scenario: 'prefix' });
      const ratio = p.on.turn2TtftMs / p.off.turn2TtftMs;
      console.log('\nSecond chat turn about the same image (image embeddings cached either way)');
      console.log(`prefix caching off: TTFT ${p.off.turn2TtftMs.toFixed(0)} ms (all ${p.off.turn2PromptTokens} prompt tokens prefilled)`);
      console.log(`prefix caching on:  TTFT ${p.on.turn2TtftMs.toFixed(0)} ms (${p.on.turn2CachedTokens} of ${p.on.turn2PromptTokens} prompt tokens from the cache) = ${(ratio * 100).toFixed(1)}% of off`);
      result.prefix = { ...p, onOverOff: ratio };
    }
    if (scenarios.includes('overlap')) {
      type Overlap = { alone: number[]; during: number[]; after: number[]; soloAtSame: number[]; duringPositions: [number, number]; bEncodeMs: number; grantedMs: number; chargedMs: number; aTokens: number };
      const rows: Record<string, unknown> = {};
      console.log("\nRequest A's decode inter-token latency while request B's image encodes (encoder in a worker)");
      console.log("alone = A's steps at the same positions in a run with nothing beside it (a step grows with A's context)");
      console.log('policy                  alone p50/p95          during p50/p95          ratio p50/p95      B encode');
      const settings = overlapPolicies.flatMap((p) => (p === 'on' ? shares.map((share) => ({ priority: 'on', share })) : [{ priority: p, share: 0 }]));
      for (const { priority, share } of settings) {
        const o = await run<Overlap>({ scenario: 'overlap', priority, share, ...(aTokens ? { aTokens } : {}) });
        const f = {
          // The idle baseline: A's steps in a run alone, at the positions of its steps during B's encode.
          aloneP50Ms: percentile(o.soloAtSame, 0.5),
          aloneP95Ms: percentile(o.soloAtSame, 0.95),
          firstStepsP50Ms: percentile(o.alone, 0.5),
          duringPositions: o.duringPositions,
          duringP50Ms: percentile(o.during, 0.5),
          duringP95Ms: percentile(o.during, 0.95),
          duringSteps: o.during.length,
          afterP50Ms: percentile(o.after, 0.5),
          afterSteps: o.after.length,
          bEncodeMs: o.bEncodeMs,
          grantedMs: o.grantedMs,
          chargedMs: o.chargedMs,
        };
        const label = priority === 'on' ? `decode priority ${share}` : 'free encoder';
        console.log(
          `${label.padEnd(22)} ${f.aloneP50Ms.toFixed(0).padStart(7)} / ${f.aloneP95Ms.toFixed(0).padStart(6)} ms   ${f.duringP50Ms.toFixed(0).padStart(7)} / ${f.duringP95Ms.toFixed(0).padStart(6)} ms   ` +
            `${(f.duringP50Ms / f.aloneP50Ms).toFixed(2).padStart(6)}x / ${(f.duringP95Ms / f.aloneP95Ms).toFixed(2).padStart(5)}x   ${s1(f.bEncodeMs).padStart(8)}  (${f.duringSteps} steps during, tokens ${f.duringPositions[0]}-${f.duringPositions[1]}; A's first ${o.alone.length} steps p50 ${f.firstStepsP50Ms.toFixed(0)} ms, after the encode p50 ${f.afterP50Ms.toFixed(0)} ms${priority === 'on' ? `; encoder pieces ${s1(f.grantedMs)}, charged to decode ${s1(f.chargedMs)}` : ''})`,
        );
        rows[priority === 'on' ? `on-${share}` : priority] = { ...f, share, p50Ratio: f.duringP50Ms / f.aloneP50Ms, p95Ratio: f.duringP95Ms / f.aloneP95Ms };
      }
      result.overlap = rows;
    }
    if (scenarios.includes('captions')) {
      const ours = await run<{ wallMs: number; n: number; encodes: number; batchedEncodes: number }>({ scenario: 'captions', n: numCaptions, tokens: 16 });
      const peer = peerCaptions > 0 ? await run<{ wallMs: number; n: number; perImageMs: number[] }>({ scenario: 'peer', n: peerCaptions, tokens: 16 }) : undefined;
      console.log(`\nCaptioning ${numCaptions} different images (16 tokens each)`);
      console.log(`ours, all at once:                ${s1(ours.wallMs)} (${ours.encodes} encodes, ${ours.batchedEncodes} in shared batches)`);
      if (peer) {
        const measured = peer.n === numCaptions ? '' : ` (measured ${peer.n} of ${numCaptions}; per-image mean x ${numCaptions} = ${s1((peer.wallMs / peer.n) * numCaptions)})`;
        console.log(`transformers.js, one after another: ${s1(peer.wallMs)}${measured}`);
        const peerFull = (peer.wallMs / peer.n) * numCaptions;
        console.log(`ratio (peer / ours): ${(peerFull / ours.wallMs).toFixed(2)}x${peer.n === numCaptions ? '' : ' (peer time scaled from its measured images)'}`);
        result.captions = { ours, peer, peerOverOurs: peerFull / ours.wallMs, peerScaled: peer.n !== numCaptions };
      } else {
        result.captions = { ours };
      }
    }
  } finally {
    await b.close();
  }
  result.totalSeconds = (Date.now() - started) / 1000;
  result.loadAverageEnd = loadavg();
  console.log(JSON.stringify(result));
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
