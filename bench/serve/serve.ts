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
//        --share=S1,S2 (decode-priority encoder shares the overlap scenario runs, default 0.15 (the engine's default),0.2)
//        --overlap=on,off (which decode-priority settings the overlap scenario runs)  --a-tokens=N (request A's tokens)  --timeout-min=N (per page, default 240)
//        --baseline=<git-ref> (the same scenarios on that tree first, in a worktree under .cache/baseline/;
//        its figures beside this tree's)

import { cpus, loadavg } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_LONGEST_EDGE, BENCH_MODEL_DIR, ensureBenchModel } from '../../scripts/make-bench-model';
import { DEFAULT_DECODE_PRIORITY } from '../../src/engine/encoder-pacing';
import { runBaseline } from '../harness/baseline';
import { openBenchBrowser, percentile, runBenchPage } from '../harness/browser';
import { ensureOnnxExport } from '../model/model-export';
import { writeBenchInput } from '../model/model-inputs';

const serveDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(serveDir, '../..');
const log = (line: string) => console.log(`[bench] ${line}`);
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];

const scenarios = (arg('scenarios') ?? 'throughput,prefix,overlap,captions').split(',');
const tokens = Number(arg('tokens') ?? 32);
const numCaptions = Number(arg('captions') ?? 16);
const peerCaptions = process.argv.includes('--no-peer') ? 0 : Number(arg('peer-captions') ?? numCaptions);
// Decode-priority shares the overlap scenario runs (each is one "on" run), then the free encoder ("off").
const shares = (arg('share') ?? `${DEFAULT_DECODE_PRIORITY.encoderShare},0.2`).split(',').map(Number);
const overlapPolicies = (arg('overlap') ?? 'on,off').split(',');
const aTokens = arg('a-tokens'); // request A's max_tokens in the overlap scenario (default: the page's)
const timeoutMs = Number(arg('timeout-min') ?? 240) * 60_000;
const baselineRef = arg('baseline');
const s1 = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

type Goal = { goal: string; measured: number | null; met: boolean | null };
const goal = (text: string, measured: number | null | undefined, ok: (v: number) => boolean): Goal => ({
  goal: text,
  measured: measured ?? null,
  met: measured === null || measured === undefined || !Number.isFinite(measured) ? null : ok(measured),
});
type Loose = Record<string, any>; // a JSON line of this or an older tree: read defensively

/** The scenario figures the goals and the baseline table compare (older trees lack some: null). */
function keyFigures(r: Loose): Record<string, number | null> {
  const rows: Loose[] = r.throughput?.rows ?? [];
  const at = (n: number) => rows.find((x) => x.concurrent === n);
  const steady = (n: number) => at(n)?.steadyDecodeTokensPerSecond ?? null;
  const on = r.prefix?.on;
  // The engine's default share (earlier trees: 0.2, then 0.25).
  const o = r.overlap?.[`on-${DEFAULT_DECODE_PRIORITY.encoderShare}`] ?? r.overlap?.['on-0.2'] ?? r.overlap?.['on-0.25'];
  return {
    oneAtOnceTokPerS: at(1)?.aggregateDecodeTokensPerSecond ?? null,
    sixteenAtOnceTokPerS: at(16)?.aggregateDecodeTokensPerSecond ?? null,
    sixteenOverOne: r.throughput?.ratio16 ?? null,
    steadySixteenOverOne: steady(16) !== null && steady(1) !== null ? steady(16)! / steady(1)! : null,
    cachedTurnTtftMs: on?.turn2TtftMs ?? null,
    uncachedTurnTtftMs: r.prefix?.off?.turn2TtftMs ?? null,
    prefillFloorTtftMs: r.prefix?.floor?.ttftMs ?? null,
    cachedTurnOverFloor: r.prefix?.onOverFloor ?? null,
    overlapP50: o?.p50Ratio ?? null,
    overlapP95: o?.p95Ratio ?? null,
    overlapBEncodeMs: o?.bEncodeMs ?? null,
    overlapShare: o?.share ?? null,
  };
}

function serveGoals(r: Loose): Record<string, Goal> {
  const k = keyFigures(r);
  const share = `the engine's default decode priority, share ${k.overlapShare ?? DEFAULT_DECODE_PRIORITY.encoderShare}`;
  return {
    batchedDecode: goal(
      '16 requests at once >= 3x one at a time (steady-state decode tok/s: every request decoding)',
      k.steadySixteenOverOne,
      (v) => v >= 3,
    ),
    cachedTurn: goal(
      'cached second turn TTFT <= 1.15x the TTFT of prefilling its new tokens alone',
      k.cachedTurnOverFloor,
      (v) => v <= 1.15,
    ),
    overlapP50: goal(`A's decode step while B's image encodes <= 1.25x alone, p50 (${share})`, k.overlapP50, (v) => v <= 1.25),
    overlapP95: goal(`A's decode step while B's image encodes <= 1.25x alone, p95 (${share})`, k.overlapP95, (v) => v <= 1.25),
  };
}

function printGoalsAndBaseline(result: Loose): void {
  const goals = result.goals as Record<string, Goal>;
  console.log('\nGoals (measured on this machine in this run):');
  for (const g of Object.values(goals))
    console.log(
      `  ${g.goal}: ${g.measured === null ? '-' : g.measured.toFixed(2)}  ${g.met === null ? 'not measured' : g.met ? 'MET' : 'MISSED'}`,
    );
  const b = result.baseline as Loose | undefined;
  if (!b) return;
  if (b.skipped) {
    console.log(`\nBaseline: ${b.skipped}`);
    return;
  }
  console.log(
    `\nBaseline ${b.ref} (${String(b.sha).slice(0, 12)}), run first in this invocation (${b.seconds.toFixed(0)} s): figure, baseline, this tree`,
  );
  const mine = keyFigures(result);
  for (const [name, v] of Object.entries(b.figures as Record<string, number | null>)) {
    const f = (x: number | null) => (x === null ? '-' : x.toFixed(2));
    console.log(`  ${name.padEnd(24)} ${f(v).padStart(10)} ${f(mine[name]).padStart(10)}`);
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  log(
    `bench model = SmolVLM-256M-Instruct shape, random weights, size.longest_edge ${BENCH_LONGEST_EDGE} (one 512x512 tile, 64 image tokens per image)`,
  );
  log(
    `machine: ${cpus().length} cores, load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')} at start`,
  );
  let baseline: Loose | undefined;
  if (baselineRef) {
    const passOn = process.argv
      .slice(2)
      .filter((a) => !a.startsWith('--baseline=') && !a.startsWith('--peer-captions'))
      .concat(['--no-peer']);
    try {
      const run = await runBaseline<Loose>(repoRoot, baselineRef, 'bench:serve', passOn, log);
      baseline = { ref: run.ref, sha: run.sha, seconds: run.seconds, figures: keyFigures(run.result), result: run.result };
    } catch (e) {
      baseline = { skipped: `baseline failed: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}` };
      log(baseline.skipped);
    }
  }
  await ensureBenchModel(log);
  if (scenarios.includes('captions') && peerCaptions > 0) {
    await writeBenchInput(BENCH_MODEL_DIR, repoRoot);
    await ensureOnnxExport(BENCH_MODEL_DIR, repoRoot, log);
  }
  const b = await openBenchBrowser({ root: serveDir, repoRoot, publicDir: dirname(BENCH_MODEL_DIR) });
  const model = relative(dirname(BENCH_MODEL_DIR), BENCH_MODEL_DIR);
  const run = <T>(query: Record<string, string | number>) =>
    runBenchPage<T>(
      b.page,
      `${b.url}serve.html?${new URLSearchParams({ model, ...Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])) })}`,
      { result: '__serveBenchResult', error: '__serveBenchError' },
      timeoutMs,
    );
  const result: Record<string, unknown> = {
    bench: 'serve',
    adapter: 'headless Chromium, WebGPU',
    model: 'SmolVLM-256M shape, random weights',
    cores: cpus().length,
  };
  try {
    if (scenarios.includes('throughput')) {
      const t = await run<{
        rows: Array<{
          concurrent: number;
          aggregateDecodeTokensPerSecond: number;
          decodeTokens: number;
          decodeWindowMs: number;
          batchSeqsMax: number;
          steadyDecodeTokensPerSecond: number;
          steadyWindowMs: number;
        }>;
      }>({ scenario: 'throughput', tokens });
      const base = t.rows[0].aggregateDecodeTokensPerSecond;
      console.log(`\nAggregate decode throughput (${tokens} tokens per request, text prompts)`);
      console.log(
        "whole window: from the first request's first token (the later prompts' prefill inside it); steady: from the moment all decode",
      );
      console.log(
        'requests at once   decode tok/s   ratio to 1   tokens   window    steady tok/s   ratio to 1   steady window   largest batch',
      );
      const steadyBase = t.rows[0].steadyDecodeTokensPerSecond;
      for (const r of t.rows) {
        console.log(
          `${String(r.concurrent).padStart(16)}   ${r.aggregateDecodeTokensPerSecond.toFixed(2).padStart(12)}   ${(r.aggregateDecodeTokensPerSecond / base).toFixed(2).padStart(9)}x   ${String(r.decodeTokens).padStart(6)}   ${s1(r.decodeWindowMs).padStart(7)}   ` +
            `${r.steadyDecodeTokensPerSecond.toFixed(2).padStart(12)}   ${(r.steadyDecodeTokensPerSecond / steadyBase).toFixed(2).padStart(9)}x   ${s1(r.steadyWindowMs).padStart(13)}   ${String(r.batchSeqsMax).padStart(6)}`,
        );
      }
      result.throughput = {
        ...t,
        ratio16: t.rows[2].aggregateDecodeTokensPerSecond / base,
        ratio4: t.rows[1].aggregateDecodeTokensPerSecond / base,
        steadyRatio16: t.rows[2].steadyDecodeTokensPerSecond / steadyBase,
      };
    }
    if (scenarios.includes('prefix')) {
      const p = await run<{
        on: { turn2TtftMs: number; turn2CachedTokens: number; turn2PromptTokens: number };
        off: { turn2TtftMs: number; turn2PromptTokens: number };
        floor: {
          promptTokens: number;
          ttftMs: number;
          prefillMs: number;
          pairs: Array<{ cachedTtftMs: number; newTokens: number; floorTtftMs: number }>;
          cachedTtftMedianMs: number;
          floorTtftMedianMs: number;
        };
      }>({ scenario: 'prefix' });
      const ratio = p.on.turn2TtftMs / p.off.turn2TtftMs;
      console.log('\nSecond chat turn about the same image (image embeddings cached either way)');
      console.log(`prefix caching off: TTFT ${p.off.turn2TtftMs.toFixed(0)} ms (all ${p.off.turn2PromptTokens} prompt tokens prefilled)`);
      console.log(
        `prefix caching on:  TTFT ${p.on.turn2TtftMs.toFixed(0)} ms (${p.on.turn2CachedTokens} of ${p.on.turn2PromptTokens} prompt tokens from the cache) = ${(ratio * 100).toFixed(1)}% of off`,
      );
      const floorRatio = p.floor.cachedTtftMedianMs / p.floor.floorTtftMedianMs;
      console.log(
        'its floor: a text request of as many new prompt tokens alone (three second turns with other questions, each beside its floor):',
      );
      for (const q of p.floor.pairs)
        console.log(
          `  ${q.newTokens} new tokens: cached turn TTFT ${q.cachedTtftMs.toFixed(0)} ms, floor TTFT ${q.floorTtftMs.toFixed(0)} ms`,
        );
      console.log(
        `  medians: ${p.floor.cachedTtftMedianMs.toFixed(0)} / ${p.floor.floorTtftMedianMs.toFixed(0)} ms = the cached turn takes ${floorRatio.toFixed(2)}x its floor`,
      );
      result.prefix = { ...p, onOverOff: ratio, onOverFloor: floorRatio };
    }
    if (scenarios.includes('overlap')) {
      type Overlap = {
        alone: number[];
        during: number[];
        after: number[];
        soloAtSame: number[];
        duringPositions: [number, number];
        bEncodeMs: number;
        grantedMs: number;
        chargedMs: number;
        aTokens: number;
      };
      const rows: Record<string, unknown> = {};
      console.log("\nRequest A's decode inter-token latency while request B's image encodes (encoder in a worker)");
      console.log("alone = A's steps at the same positions in a run with nothing beside it (a step grows with A's context)");
      console.log('policy                  alone p50/p95          during p50/p95          ratio p50/p95      B encode');
      const settings = overlapPolicies.flatMap((p) =>
        p === 'on' ? shares.map((share) => ({ priority: 'on', share })) : [{ priority: p, share: 0 }],
      );
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
        rows[priority === 'on' ? `on-${share}` : priority] = {
          ...f,
          share,
          p50Ratio: f.duringP50Ms / f.aloneP50Ms,
          p95Ratio: f.duringP95Ms / f.aloneP95Ms,
        };
      }
      result.overlap = rows;
    }
    if (scenarios.includes('captions')) {
      const ours = await run<{ wallMs: number; n: number; encodes: number; batchedEncodes: number }>({
        scenario: 'captions',
        n: numCaptions,
        tokens: 16,
      });
      const peer =
        peerCaptions > 0
          ? await run<{ wallMs: number; n: number; perImageMs: number[] }>({ scenario: 'peer', n: peerCaptions, tokens: 16 })
          : undefined;
      console.log(`\nCaptioning ${numCaptions} different images (16 tokens each)`);
      console.log(
        `ours, all at once:                ${s1(ours.wallMs)} (${ours.encodes} encodes, ${ours.batchedEncodes} in shared batches)`,
      );
      if (peer) {
        const measured =
          peer.n === numCaptions
            ? ''
            : ` (measured ${peer.n} of ${numCaptions}; per-image mean x ${numCaptions} = ${s1((peer.wallMs / peer.n) * numCaptions)})`;
        console.log(`transformers.js, one after another: ${s1(peer.wallMs)}${measured}`);
        const peerFull = (peer.wallMs / peer.n) * numCaptions;
        console.log(
          `ratio (peer / ours): ${(peerFull / ours.wallMs).toFixed(2)}x${peer.n === numCaptions ? '' : ' (peer time scaled from its measured images)'}`,
        );
        result.captions = { ours, peer, peerOverOurs: peerFull / ours.wallMs, peerScaled: peer.n !== numCaptions };
      } else {
        result.captions = { ours };
      }
    }
  } finally {
    await b.close();
  }
  result.goals = serveGoals(result);
  if (baseline) result.baseline = baseline;
  printGoalsAndBaseline(result);
  result.totalSeconds = (Date.now() - started) / 1000;
  result.loadAverageEnd = loadavg();
  console.log(JSON.stringify(result));
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
