// `npm run bench:model`: SmolVLM-256M-shaped model (real config, random weights) end to end. Our engine
// in Node (Dawn) and in headless Chromium, and in the same page transformers.js on onnxruntime-web's
// WebGPU EP with the same weights (ONNX export). Streams progress, prints tables, ends with ONE JSON line.
//
//   1. scripts/make-bench-model.ts -> .cache/bench-models/smolvlm-256m-random/ (skipped when current)
//   2. model-inputs.ts             -> bench-input/ (our processor's ids + pixels for the request)
//   3. model-export.ts             -> onnx/ (Python export + checks; skipped when current; not with --no-peer)
//   4. Node: model-node.ts through the benchmarks' Vite server (../harness/server.ts: the engine imports
//      WGSL with ?raw)
//   5. Chromium: model.html (ours, then the peer) on the same server (../harness/browser.ts)
//   6. the cpu column: model-cpu.ts in Node (ours on onnxruntime-node vs onnxruntime-node driven directly),
//      model-wasm.html in Chromium (ours on onnxruntime-web's WebAssembly vs transformers.js on 'wasm')
//
// `--family qwen2_5_vl|qwen3_vl` runs the Qwen-VL benchmark instead (qwen.ts).
// Flags: --tokens=N (default 16)  --reps=N warm requests of ours (default 1)  --no-peer  --no-node
//        --no-browser  --no-cpu (skip the cpu column: our CPU backend against onnxruntime-node on the same
//        ONNX files, model-cpu.ts, and in Chromium against transformers.js on WebAssembly, model-wasm-page.ts)
//        --cpu-only (only the cpu column: no WebGPU run in Node or Chromium; with --no-node or --no-browser, one half)
//        --cpu-tokens=N (new tokens per cpu-column request, default 64)  --cpu-reps=N (measured requests per
//        side after a dropped first one, default 5; figures are medians)  --quick (= --tokens=4 --no-peer --dtypes=f32,q4 --no-accuracy)  --peer-own-pixels
//        --force-export  --timeout-min=N for the page (default 90)
//        --dtypes=f32,f16,q8,q4 (Node; default all)  --browser-dtypes=f32 (default f32: each dtype in the
//        browser is another ~5 minutes here)  --no-accuracy (skip the dtypes' accuracy against f32)
//        --no-profile (skip engine.profile(): per-kernel-kind GPU time, printed beside the tables)
//        --baseline=<git-ref> (the same request on that tree first, in a worktree under .cache/baseline/,
//        printed beside this tree's figures with ratios: a change measured against the tree before it)
//        --no-json (skip the response_format section: decode with a JSON schema against free decoding,
//        grammar compile and mask times; model-json.ts)  --json-only (only that section)
//        --json-tokens=N (most new tokens per request there, default 48)  --json-reps=N (requests per side, default 2)

import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_LONGEST_EDGE, BENCH_MODEL_DIR, ensureBenchModel } from '../../scripts/make-bench-model';
import { runBaseline } from '../harness/baseline';
import { launchBenchPage, runBenchPage } from '../harness/browser';
import { startBenchServer, type BenchServer } from '../harness/server';
import { compareWithBaseline } from './model-baseline';
import { ensureOnnxExport } from './model-export';
import { writeBenchInput } from './model-inputs';
import { resolveDtype, type WeightDtype } from '../../src/model/weights/dtype';
import type { CpuRunOptions } from './model-cpu';
import { formatJson, type JsonFigures, type JsonRunOptions } from './model-json-report';
import type { DecodePlansResult } from './model-decode-plans';
import type { runDecodePlansNode } from './model-decode-plans-node';
import { formatDecodePlans } from './model-decode-plans-report';
import type { NodeRunOptions, NodeRunResult } from './model-node';
import {
  computeAgreement,
  computeDtypeRatios,
  computeGoals,
  computeRatios,
  computeRunGoals,
  compareWasm,
  formatModelReport,
  sampledOverGreedy,
} from './model-report';
import { BENCH_SAMPLING } from './model-request';
import {
  isSkipped,
  type BrowserFigures,
  type CpuFigures,
  type ExportFigures,
  type ModelBenchResult,
  type OursFigures,
  type Skipped,
  type WasmFigures,
  type WasmPageFigures,
} from './model-result';

class BenchError extends Error {
  override readonly name = 'BenchError';
}

const suiteDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(suiteDir, '..', '..');

interface Args {
  dtypes: WeightDtype[];
  browserDtypes: WeightDtype[];
  accuracy: boolean;
  profile: boolean;
  tokens: number;
  reps: number;
  peer: boolean;
  node: boolean;
  browser: boolean;
  cpu: boolean;
  /** false with --cpu-only: no WebGPU run (Node's model-node.ts, Chromium's model.html). */
  gpu: boolean;
  cpuTokens: number;
  cpuReps: number;
  ownPixels: boolean;
  forceExport: boolean;
  timeoutMs: number;
  baseline: string | undefined;
  json: boolean;
  jsonOnly: boolean;
  jsonTokens: number;
  jsonReps: number;
  /** Decode steps timed per decode plan (model-decode-plans.ts); 0: not run (--no-decode-plans). */
  decodePlanSteps: number;
  /** --decode-plans-only: only that section (no request, peer or CPU run). */
  decodePlansOnly: boolean;
}

function parseArgs(argv: string[]): Args {
  const value = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const quick = argv.includes('--quick');
  const dtypeList = (text: string | undefined, fallback: string) =>
    (text ?? fallback).split(',').map((d) => resolveDtype(d.trim(), '--dtypes').text);
  const args: Args = {
    dtypes: dtypeList(value('dtypes'), quick ? 'f32,q4' : 'f32,f16,q8,q4'),
    browserDtypes: dtypeList(value('browser-dtypes'), 'f32'),
    accuracy: !quick && !argv.includes('--no-accuracy'),
    profile: !argv.includes('--no-profile'),
    tokens: Number(value('tokens') ?? (quick ? 4 : 16)),
    reps: Number(value('reps') ?? 1),
    peer: !quick && !argv.includes('--no-peer'),
    node: !argv.includes('--no-node'),
    browser: !argv.includes('--no-browser'),
    cpu: !argv.includes('--no-cpu'),
    gpu: !argv.includes('--cpu-only'),
    cpuTokens: Number(value('cpu-tokens') ?? 64),
    cpuReps: Number(value('cpu-reps') ?? 5),
    ownPixels: argv.includes('--peer-own-pixels'),
    forceExport: argv.includes('--force-export'),
    timeoutMs: Number(value('timeout-min') ?? 90) * 60_000,
    baseline: value('baseline'),
    json: !argv.includes('--no-json'),
    jsonOnly: argv.includes('--json-only'),
    decodePlanSteps: argv.includes('--no-decode-plans') ? 0 : Number(value('decode-plan-steps') ?? 6),
    decodePlansOnly: argv.includes('--decode-plans-only'),
    jsonTokens: Number(value('json-tokens') ?? 48),
    jsonReps: Number(value('json-reps') ?? 2),
  };
  if (!Number.isInteger(args.tokens) || args.tokens < 2) throw new BenchError(`--tokens must be an integer >= 2, got ${value('tokens')}`);
  if (!Number.isInteger(args.reps) || args.reps < 1) throw new BenchError(`--reps must be a positive integer, got ${value('reps')}`);
  if (!Number.isInteger(args.cpuTokens) || args.cpuTokens < 2)
    throw new BenchError(`--cpu-tokens must be an integer >= 2, got ${value('cpu-tokens')}`);
  if (!Number.isInteger(args.cpuReps) || args.cpuReps < 1)
    throw new BenchError(`--cpu-reps must be a positive integer, got ${value('cpu-reps')}`);
  return args;
}

const log = (line: string) => console.log(`[bench] ${line}`);

/** The response_format section (model-json.ts) in Node, through the benchmarks' Vite server. */
async function runJsonSection(server: BenchServer, args: Args): Promise<JsonFigures | Skipped> {
  try {
    const mod = await server.load<{ runJson(o: JsonRunOptions): Promise<JsonFigures> }>(join(suiteDir, 'model-json.ts'));
    return await mod.runJson({ modelDir: BENCH_MODEL_DIR, maxNewTokens: args.jsonTokens, reps: args.jsonReps, log });
  } catch (e) {
    log(`json section failed: ${errorText(e)}`);
    return { skipped: `json section failed: ${errorText(e)}` };
  }
}
const errorText = (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));

/** Optional checkpoint files are probed and may be absent: the pages' 404s are not errors. */
const OPTIONAL_404 = (text: string) => text.startsWith('Failed to load resource: the server responded with a status of 404');

/** The page's figures (model-page.ts), on the server the Node run used; Chromium is started for it alone. */
async function runBrowser(server: BenchServer, args: Args): Promise<BrowserFigures> {
  // Optional checkpoint files are probed and may be absent: their 404s are reported once, with the path.
  const b = await launchBenchPage(server, { quiet: OPTIONAL_404 });
  try {
    const q = new URLSearchParams({
      model: relative(join(BENCH_MODEL_DIR, '..'), BENCH_MODEL_DIR),
      tokens: String(args.tokens),
      reps: String(args.reps),
      peer: args.peer ? '1' : '0',
      dtypes: args.browserDtypes.join(','),
      ownPixels: args.ownPixels ? '1' : '0',
      profile: args.profile ? '1' : '0',
    });
    const pageUrl = `${b.url}model.html?${q}`;
    log(`Chromium ${b.version}, page ${pageUrl}`);
    b.page.on('response', (r) => {
      if (r.status() === 404) console.log(`[page] 404 ${new URL(r.url()).pathname} (optional files are probed; absent is fine)`);
    });
    return await runBenchPage<BrowserFigures>(
      b.page,
      pageUrl,
      { result: '__modelBenchResult', error: '__modelBenchError' },
      args.timeoutMs,
    );
  } finally {
    await b.close();
  }
}

/** The cpu column in Chromium (model-wasm-page.ts), with its ratios to transformers.js. */
async function runWasm(server: BenchServer, args: Args): Promise<WasmFigures> {
  const b = await launchBenchPage(server, { quiet: OPTIONAL_404 });
  try {
    const q = new URLSearchParams({
      model: relative(join(BENCH_MODEL_DIR, '..'), BENCH_MODEL_DIR),
      tokens: String(args.cpuTokens),
      reps: String(args.cpuReps),
      peer: args.peer ? '1' : '0',
    });
    const pageUrl = `${b.url}model-wasm.html?${q}`;
    log(`Chromium ${b.version}, page ${pageUrl}`);
    const page = await runBenchPage<WasmPageFigures>(
      b.page,
      pageUrl,
      { result: '__wasmBenchResult', error: '__wasmBenchError' },
      args.timeoutMs,
    );
    return { ...page, ...compareWasm(page) };
  } finally {
    await b.close();
  }
}

/** The decode plans on the language model alone (model-decode-plans.ts) in Node, or why they did not run. */
async function runDecodePlansSection(server: BenchServer, args: Args): Promise<DecodePlansResult | Skipped> {
  try {
    const mod = await server.load<{ runDecodePlansNode: typeof runDecodePlansNode }>(join(suiteDir, 'model-decode-plans-node.ts'));
    return await mod.runDecodePlansNode({ modelDir: BENCH_MODEL_DIR, steps: args.decodePlanSteps, log });
  } catch (e) {
    const skipped = { skipped: `decode plans (Node) failed: ${errorText(e)}` };
    log(skipped.skipped);
    return skipped;
  }
}

/**
 * The same in Chromium (decode-plans-page.ts), on a server of its own whose pages are cross-origin isolated
 * (performance.now() at microseconds there), or why they did not run.
 */
async function runDecodePlansBrowser(args: Args): Promise<DecodePlansResult | Skipped> {
  const server = await startBenchServer({ root: suiteDir, repoRoot, publicDir: join(BENCH_MODEL_DIR, '..'), isolated: true });
  try {
    const b = await launchBenchPage(server, { quiet: OPTIONAL_404 });
    try {
      const q = new URLSearchParams({ model: relative(join(BENCH_MODEL_DIR, '..'), BENCH_MODEL_DIR), steps: String(args.decodePlanSteps) });
      const pageUrl = `${b.url}decode-plans.html?${q}`;
      log(`Chromium ${b.version}, page ${pageUrl}`);
      return await runBenchPage<DecodePlansResult>(
        b.page,
        pageUrl,
        { result: '__decodePlansResult', error: '__decodePlansError' },
        args.timeoutMs,
      );
    } finally {
      await b.close();
    }
  } catch (e) {
    const skipped = { skipped: `decode plans (browser) failed: ${errorText(e)}` };
    log(skipped.skipped);
    return skipped;
  } finally {
    await server.close();
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const loadAverageAtStart = loadavg();
  log(`machine: ${cpus().length} CPUs, load average ${loadAverageAtStart.map((x) => x.toFixed(2)).join(' ')}`);
  log(
    `NOTE: the bench model's preprocessor_config.json has size.longest_edge = ${BENCH_LONGEST_EDGE} (the real SmolVLM-256M: 2048), ` +
      'so the image is ONE 512x512 tile (64 image tokens) instead of 13-17 tiles; weights are random.',
  );
  await ensureBenchModel(log);
  if (args.decodePlansOnly) {
    const server = await startBenchServer({ root: suiteDir, repoRoot, publicDir: join(BENCH_MODEL_DIR, '..') });
    try {
      const planArgs = { ...args, decodePlanSteps: args.decodePlanSteps || 6 };
      const decodePlans = args.node ? await runDecodePlansSection(server, planArgs) : { skipped: 'not requested (--no-node)' };
      const decodePlansBrowser = args.browser ? await runDecodePlansBrowser(planArgs) : { skipped: 'not requested (--no-browser)' };
      for (const r of [decodePlans, decodePlansBrowser]) if (!isSkipped(r)) console.log(`\n${formatDecodePlans(r)}`);
      console.log(`Total time: ${((Date.now() - started) / 1000).toFixed(1)} s`);
      console.log(
        JSON.stringify({
          bench: 'model',
          decodePlans,
          decodePlansBrowser,
          machine: { cpus: cpus().length, loadAverageAtStart, loadAverageAtEnd: loadavg() },
        }),
      );
    } finally {
      await server.close();
    }
    return;
  }
  if (args.jsonOnly) {
    const server = await startBenchServer({ root: suiteDir, repoRoot, publicDir: join(BENCH_MODEL_DIR, '..') });
    try {
      const json = await runJsonSection(server, args);
      if (!isSkipped(json)) console.log(`\n${formatJson(json)}`);
      console.log(`Total time: ${((Date.now() - started) / 1000).toFixed(1)} s`);
      console.log(
        JSON.stringify({ bench: 'model', json, machine: { cpus: cpus().length, loadAverageAtStart, loadAverageAtEnd: loadavg() } }),
      );
    } finally {
      await server.close();
    }
    return;
  }
  const input = await writeBenchInput(BENCH_MODEL_DIR, repoRoot);
  log(
    `request: ${input.inputIds.length} prompt tokens (${input.imageTokens} image tokens, ${input.numTiles} tile), ${args.tokens} new tokens, greedy (ours also sampled: ${JSON.stringify(BENCH_SAMPLING)})`,
  );

  let exported: ExportFigures | Skipped = { skipped: 'not needed (--no-peer / --quick)' };
  if ((args.peer && args.browser) || args.cpu) {
    try {
      exported = await ensureOnnxExport(BENCH_MODEL_DIR, repoRoot, log, args.forceExport);
    } catch (e) {
      exported = { skipped: `export failed: ${errorText(e)}` };
      log(exported.skipped);
      args.peer = false;
      args.cpu = false;
    }
  }
  const referencePath = join(BENCH_MODEL_DIR, 'onnx/verify/reference.json');
  let referenceTokens: number[] | null = null;
  try {
    referenceTokens = (JSON.parse(readFileSync(referencePath, 'utf8')) as { tokens: number[] }).tokens;
  } catch {
    referenceTokens = null; // no export yet: nothing to compare with
  }

  // The baseline first: the same request on the other tree (its own bench model, no peer), so that both
  // run in the same hour on the same machine.
  let baseline: Awaited<ReturnType<typeof runBaseline<Record<string, unknown>>>> | { skipped: string } | undefined;
  if (args.baseline) {
    const passOn = [`--tokens=${args.tokens}`, `--reps=${args.reps}`, '--no-peer', '--no-profile', `--dtypes=f32`, '--no-accuracy'];
    if (!args.node) passOn.push('--no-node');
    if (!args.browser) passOn.push('--no-browser');
    if (!args.cpu) passOn.push('--no-cpu');
    try {
      baseline = await runBaseline<Record<string, unknown>>(repoRoot, args.baseline, 'bench:model', passOn, log);
    } catch (e) {
      baseline = { skipped: `baseline failed: ${errorText(e)}` };
      log(baseline.skipped);
    }
  }

  // Nothing pre-bundled (transformers.js's web build and onnxruntime-web are ESM, served as they are); the
  // model folders are served at /<name>/ (weights, ONNX files, bench-input/).
  const server = await startBenchServer({ root: suiteDir, repoRoot, publicDir: join(BENCH_MODEL_DIR, '..') });
  let nodeRun: NodeRunResult = { byDtype: {}, accuracy: { skipped: 'not requested (--no-node)' } };
  let decodePlans: DecodePlansResult | Skipped = { skipped: 'not requested (--no-decode-plans, --no-node or --cpu-only)' };
  let decodePlansBrowser: DecodePlansResult | Skipped = { skipped: 'not requested (--no-decode-plans, --no-browser or --cpu-only)' };
  let browser: BrowserFigures | Skipped = { skipped: args.gpu ? 'not requested (--no-browser)' : 'not requested (--cpu-only)' };
  let cpu: CpuFigures | Skipped = { skipped: args.cpu ? 'not requested (--no-node)' : 'not requested (--no-cpu)' };
  let json: JsonFigures | Skipped = { skipped: args.json ? 'needs the Node WebGPU run' : 'not requested (--no-json)' };
  let cpuBrowser: WasmFigures | Skipped = { skipped: args.cpu ? 'not requested (--no-browser)' : 'not requested (--no-cpu)' };
  try {
    if (args.node && args.gpu) {
      try {
        const mod = await server.load<{ runNode(o: NodeRunOptions): Promise<NodeRunResult> }>(join(suiteDir, 'model-node.ts'));
        nodeRun = await mod.runNode({
          modelDir: BENCH_MODEL_DIR,
          repoRoot,
          maxNewTokens: args.tokens,
          warmReps: args.reps,
          dtypes: args.dtypes,
          accuracy: args.accuracy,
          profile: args.profile,
          log,
        });
      } catch (e) {
        nodeRun = { byDtype: { f32: { skipped: `Node run failed: ${errorText(e)}` } }, accuracy: { skipped: 'Node run failed' } };
        log(`Node run failed: ${errorText(e)}`);
      }
    }
    if (args.decodePlanSteps > 0 && args.node && args.gpu) decodePlans = await runDecodePlansSection(server, args);
    if (args.json && args.node && args.gpu) json = await runJsonSection(server, args);
    if (args.cpu && args.node) {
      try {
        const mod = await server.load<{ runCpu(o: CpuRunOptions): Promise<CpuFigures> }>(join(suiteDir, 'model-cpu.ts'));
        cpu = await mod.runCpu({ modelDir: BENCH_MODEL_DIR, repoRoot, maxNewTokens: args.cpuTokens, reps: args.cpuReps, log });
      } catch (e) {
        cpu = { skipped: `cpu run failed: ${errorText(e)}` };
        log(cpu.skipped);
      }
    }
    if (args.cpu && args.browser) {
      try {
        cpuBrowser = await runWasm(server, args);
      } catch (e) {
        cpuBrowser = { skipped: `cpu column in Chromium failed: ${errorText(e)}` };
        log(cpuBrowser.skipped);
      }
    }
    if (args.browser && args.gpu) {
      try {
        browser = await runBrowser(server, args);
      } catch (e) {
        browser = { skipped: `browser run failed: ${errorText(e)}` };
        log(browser.skipped);
      }
    }
  } finally {
    await server.close();
  }
  if (args.decodePlanSteps > 0 && args.browser && args.gpu) decodePlansBrowser = await runDecodePlansBrowser(args);

  const node: OursFigures | Skipped = nodeRun.byDtype.f32 ?? { skipped: args.node ? 'f32 not in --dtypes' : 'not requested (--no-node)' };
  const partial = { node, browser, referenceTokens };
  const result: ModelBenchResult = {
    bench: 'model',
    model: {
      path: relative(repoRoot, BENCH_MODEL_DIR),
      shape:
        'SmolVLM-256M-Instruct config: vision 768 hidden x 12 layers (512 px tiles, patch 16), text 576 hidden x 30 layers, 9/3 heads, vocab 49280',
      weights: 'deterministic random BF16 (scripts/make-bench-model.ts)',
      longestEdge: BENCH_LONGEST_EDGE,
      note: `preprocessor_config.json size.longest_edge = ${BENCH_LONGEST_EDGE} (real model: 2048): one 512x512 tile per image, not 13-17`,
    },
    request: {
      prompt: input.prompt,
      image: input.image,
      maxNewTokens: args.tokens,
      greedy: true,
      promptTokens: input.inputIds.length,
      imageTokens: input.imageTokens,
      numTiles: input.numTiles,
    },
    sampling: {
      params: BENCH_SAMPLING,
      sampledOverGreedyDecode: { node: sampledOverGreedy(node), browser: isSkipped(browser) ? null : sampledOverGreedy(browser.ours) },
    },
    referenceTokens,
    node,
    browser,
    cpu,
    cpuBrowser,
    json,
    decodePlans,
    decodePlansBrowser,
    export: exported,
    ratios: computeRatios(partial),
    dtypes: {
      node: nodeRun.byDtype,
      ratiosToF32: computeDtypeRatios(nodeRun.byDtype),
      accuracy: nodeRun.accuracy,
      goals: computeGoals(nodeRun.byDtype),
    },
    tokenAgreement: computeAgreement(partial),
    goals: {},
    machine: { cpus: cpus().length, loadAverageAtStart, loadAverageAtEnd: loadavg() },
    totalSeconds: (Date.now() - started) / 1000,
  };
  if (baseline) result.baseline = 'skipped' in baseline ? baseline : compareWithBaseline(result, baseline);
  result.goals = computeRunGoals(result);
  console.log('');
  console.log(formatModelReport(result));
  for (const r of [decodePlans, decodePlansBrowser]) if (!isSkipped(r)) console.log(`\n${formatDecodePlans(r)}`);
  if (!isSkipped(json)) console.log(`\n${formatJson(json)}`);
  console.log(`Total time: ${result.totalSeconds.toFixed(1)} s`);
  console.log(JSON.stringify(result));
}

// --family qwen2_5_vl|qwen3_vl: the Qwen-VL benchmark (qwen.ts), which runs on import.
if (process.argv.slice(2).some((a) => a === '--family' || a.startsWith('--family='))) {
  await import('./qwen');
} else {
  main().catch((e: unknown) => {
    console.error(errorText(e));
    process.exitCode = 1;
  });
}
