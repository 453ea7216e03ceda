// `npm run bench:load`: what loading a real-sized checkpoint costs. The checkpoints are Voxtral-Mini-3B-2507's
// real config with random BF16 weights (scripts/make-bench-voxtral.ts): all 30 text and 32 audio layers
// (4.7 GB in three shards; the largest tensor is the 131072 x 3072 embedding, 768 MiB, and the separate head
// is as large), and the same with one layer each (1.9 GB), which shows whether memory grows with depth.
//
// Node: createEngine in a fresh process per load (bench/load/load-child.mjs), twice: a timed run (the load
// time and its phases, the peak resident memory) and a memory run (a full GC every 100 ms and the live
// ArrayBuffer bytes after each: what the load holds in JS, whose goal is <= 1.25 x the largest tensor +
// 256 MiB; that many GCs slow the load, so its time is not reported). On SwiftShader GPU buffers are host
// memory and count in the resident figure.
// Chromium: the same loads in headless Chromium (bench/load/load-chromium.ts), a fresh browser per load,
// each process's resident memory read through the DevTools protocol's process list.
//
// Each checkpoint loads bf16 -> each dtype, and as a GGUF pair of the same weights (scripts/gguf-convert-
// voxtral.ts writes it once, beside the checkpoint), whose blocks go to the GPU as they are. The ratio the
// issue sets (GGUF q4 >= 3x faster than bf16 -> q4) is printed per checkpoint and place, for the whole load
// and for the language model's weights alone (the rest of a load compiles pipelines, which no file format
// changes). With --baseline=<git-ref>, the Node loads also run on that tree's build (a worktree under
// .cache/baseline/, built with vite), alternating with this tree's. Ends with ONE JSON line.
//
// Flags: --models=full,one-layer  --dtypes=f32,f16,q4 (Node)  --gguf=Q4_K_M (none: --gguf=)
//        --chromium=q4 (dtypes loaded in Chromium besides the GGUF pairs; none: --chromium=)
//        --chromium-models=full  --chromium-gc (a full GC of the page before each heap sample: what the load
//        keeps alive, not what V8 has yet to collect)  --memory=false (no memory runs)  --baseline=<ref>
//        --reps=N (default 1)

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { dirname, join } from 'node:path';
import type { ConvertType } from '../../scripts/gguf-convert';
import { convertVoxtralToGguf } from '../../scripts/gguf-convert-voxtral';
import { root as repoRoot } from '../../scripts/make-bench-qwen';
import { BENCH_VOXTRAL, type BenchVoxtralDepth, ensureBenchVoxtral } from '../../scripts/make-bench-voxtral';
import { baselineTree } from '../harness/baseline';
import { startBenchServer } from '../harness/server';
import { table } from '../harness/table';
import { type ChromiumLoadFigures, loadInChromium } from './load-chromium';

const log = (line: string) => console.error(`[bench:load] ${line}`);

function value(name: string): string | undefined {
  const argv = process.argv.slice(2);
  const i = argv.indexOf(`--${name}`);
  if (i >= 0) return argv[i + 1];
  return argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}
const list = (name: string, fallback: string) => (value(name) ?? fallback).split(',').filter(Boolean);

/** The largest tensor of both checkpoints: the embedding (and the head), 131072 x 3072 BF16. */
const LARGEST_BYTES = 131072 * 3072 * 2;
const HOST_GOAL_BYTES = 1.25 * LARGEST_BYTES + 256 * 2 ** 20;
/** Bump when scripts/gguf-convert*.ts write other files, so the pairs here are written again. */
const GGUF_RECIPE = 'gguf-convert v2: the mmproj in F32, F16, BF16 or Q8_0 only (F16 beside a K-quant model)';

interface NodeChild {
  loadMs: number;
  weightsMs: number;
  peakArrayBuffers?: number;
  baseRss: number;
  peakRss: number;
  gpuPeakBytes: number;
  weightBytes: number;
}

interface Run {
  model: BenchVoxtralDepth;
  place: 'node' | 'chromium';
  tree: string;
  /** 'q4' (bf16 -> q4 at load) or 'GGUF Q4_K_M'. */
  load: string;
  loadMs: number;
  weightsMs: number;
  /** Node: peak live ArrayBuffers; Chromium: the renderer's growth over its resident memory before the load. */
  hostBytes?: number;
  /** Node: the process's peak resident memory; Chromium: the renderer's. */
  peakRss: number;
  baseRss: number;
  /** Chromium: the GPU process's peak resident memory (on SwiftShader, where the GPU buffers are). */
  gpuProcessPeakRss?: number;
  /** Chromium: the page's peak V8 heap and ArrayBuffer backing stores over their values before the load. */
  pageHeapBytes?: number;
  pageArrayBufferBytes?: number;
  gpuPeakBytes: number;
  weightBytes: number;
}

function build(dir: string): string {
  if (!existsSync(join(dir, 'node_modules'))) symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'));
  execFileSync(process.execPath, [join(repoRoot, 'node_modules/vite/bin/vite.js'), 'build', '--mode', 'lib', '--logLevel', 'warn'], {
    cwd: dir,
    stdio: 'inherit',
  });
  return join(dir, 'dist');
}

function nodeChild(dist: string, model: string, dtype: string, mode: 'time' | 'memory'): NodeChild {
  const r = spawnSync(
    process.execPath,
    [...(mode === 'memory' ? ['--expose-gc'] : []), join(repoRoot, 'bench/load/load-child.mjs'), dist, model, dtype, mode],
    { encoding: 'utf8', env: process.env, maxBuffer: 1 << 24 },
  );
  const line = r.stdout.trim().split('\n').pop() ?? '';
  if (r.status !== 0 || !line.startsWith('{'))
    throw new Error(`load (${dist}, ${model}, ${dtype}, ${mode}) failed: ${r.stderr.trim().split('\n').slice(-5).join(' | ')}`);
  return JSON.parse(line) as NodeChild;
}

function loadInNode(dist: string, model: string, dtype: string, memory: boolean): Omit<Run, 'model' | 'place' | 'tree' | 'load'> {
  const timed = nodeChild(dist, model, dtype, 'time');
  const measured = memory ? nodeChild(dist, model, dtype, 'memory') : undefined;
  return {
    loadMs: timed.loadMs,
    weightsMs: timed.weightsMs,
    hostBytes: measured?.peakArrayBuffers,
    peakRss: timed.peakRss,
    baseRss: timed.baseRss,
    gpuPeakBytes: timed.gpuPeakBytes,
    weightBytes: timed.weightBytes,
  };
}

function fromChromium(f: ChromiumLoadFigures): Omit<Run, 'model' | 'place' | 'tree' | 'load'> {
  const renderer = f.processes.renderer ?? { baseRss: 0, peakRss: 0 };
  return {
    loadMs: f.loadMs,
    weightsMs: f.weightsMs,
    hostBytes: renderer.peakRss - renderer.baseRss,
    peakRss: renderer.peakRss,
    baseRss: renderer.baseRss,
    gpuProcessPeakRss: f.processes.GPU?.peakRss,
    pageHeapBytes: f.page.peakHeapBytes,
    pageArrayBufferBytes: f.page.peakBackingStoreBytes,
    gpuPeakBytes: f.gpuPeakBytes,
    weightBytes: f.weightBytes,
  };
}

const mib = (b: number | undefined) => (b === undefined ? '-' : (b / 2 ** 20).toFixed(0));
const seconds = (ms: number) => (ms / 1000).toFixed(1);

async function main(): Promise<void> {
  const models = list('models', 'full,one-layer') as BenchVoxtralDepth[];
  const dtypes = list('dtypes', 'f32,f16,q4');
  const ggufTypes = list('gguf', 'Q4_K_M') as ConvertType[];
  const chromiumDtypes = list('chromium', 'q4');
  const chromiumModels = list('chromium-models', 'full') as BenchVoxtralDepth[];
  const memory = value('memory') !== 'false';
  const chromiumGc = process.argv.includes('--chromium-gc');
  const reps = Number(value('reps') ?? 1);
  const baselineRef = value('baseline');
  for (const m of [...models, ...chromiumModels])
    if (!(m in BENCH_VOXTRAL)) throw new Error(`--models: no checkpoint '${m}' (full, one-layer)`);

  const dirs = new Map<BenchVoxtralDepth, string>();
  const ggufs = new Map<string, { model: string; mmproj: string }>();
  for (const m of new Set([...models, ...chromiumModels])) {
    const dir = ensureBenchVoxtral(m, log);
    dirs.set(m, dir);
    for (const type of ggufTypes) {
      const out = `${dir}-gguf-${type}`;
      const name = dir.split('/').at(-1);
      const files = { model: `${name}-${type}.gguf`, mmproj: `mmproj-${name}-${type}.gguf` };
      const stamp = join(out, 'converted.txt');
      const current = existsSync(stamp) && readFileSync(stamp, 'utf8') === GGUF_RECIPE;
      if (!current || !existsSync(join(out, files.model)) || !existsSync(join(out, files.mmproj))) {
        log(`writing the ${type} GGUF pair of ${name} in ${out}`);
        const t0 = performance.now();
        await convertVoxtralToGguf(dir, out, type);
        writeFileSync(stamp, GGUF_RECIPE);
        log(`written in ${seconds(performance.now() - t0)} s`);
      }
      ggufs.set(`${m} ${type}`, { model: join(out, files.model), mmproj: join(out, files.mmproj) });
    }
  }

  log('building this tree (vite build --mode lib)');
  const trees: Array<{ name: string; dist: string }> = [{ name: 'this tree', dist: build(repoRoot) }];
  if (baselineRef) {
    const { sha, dir } = baselineTree(repoRoot, baselineRef);
    log(`building ${baselineRef} (${sha.slice(0, 12)}) in ${dir}`);
    trees.push({ name: `${baselineRef} (${sha.slice(0, 12)})`, dist: build(dir) });
  }

  const runs: Run[] = [];
  const report = (r: Run) => {
    runs.push(r);
    log(
      `${r.model} ${r.place} ${r.tree} ${r.load}: ${seconds(r.loadMs)} s (weights ${seconds(r.weightsMs)} s), host ${mib(r.hostBytes)} MiB, ` +
        `peak RSS ${mib(r.peakRss)} MiB, GPU ${mib(r.gpuPeakBytes)} MiB`,
    );
  };
  for (const model of models) {
    const dir = dirs.get(model)!;
    for (const dtype of dtypes) {
      for (let i = 0; i < reps; i++) {
        // Alternate which tree loads first.
        for (const t of i % 2 === 0 ? trees : [...trees].reverse()) {
          log(`${model}, Node, ${t.name}: bf16 -> ${dtype}`);
          report({ model, place: 'node', tree: t.name, load: dtype, ...loadInNode(t.dist, dir, dtype, memory) });
        }
      }
    }
    for (const type of ggufTypes) {
      for (let i = 0; i < reps; i++) {
        log(`${model}, Node, this tree: the ${type} GGUF pair`);
        report({
          model,
          place: 'node',
          tree: trees[0].name,
          load: `GGUF ${type}`,
          ...loadInNode(trees[0].dist, ggufs.get(`${model} ${type}`)!.model, 'f32', memory),
        });
      }
    }
  }
  if (chromiumModels.length > 0 && (chromiumDtypes.length > 0 || ggufTypes.length > 0)) {
    const server = await startBenchServer({
      root: join(repoRoot, 'bench/load'),
      repoRoot,
      publicDir: dirname(dirs.get(chromiumModels[0])!),
    });
    try {
      for (const model of chromiumModels) {
        const folder = `/${dirs.get(model)!.split('/').at(-1)}/`;
        const loads = [
          ...chromiumDtypes.map((dtype) => ({ load: dtype, request: { model: folder, dtype } })),
          ...ggufTypes.map((type) => {
            const pair = ggufs.get(`${model} ${type}`)!;
            const at = (path: string) => `/${path.split('/').slice(-2).join('/')}`;
            return { load: `GGUF ${type}`, request: { model: at(pair.model), mmproj: at(pair.mmproj), dtype: 'f32' } };
          }),
        ];
        for (const { load, request } of loads) {
          for (let i = 0; i < reps; i++) {
            log(`${model}, Chromium: ${load}`);
            report({
              model,
              place: 'chromium',
              tree: trees[0].name,
              load,
              ...fromChromium(await loadInChromium(server, request, log, chromiumGc)),
            });
          }
        }
      }
    } finally {
      await server.close();
    }
  }

  console.log(
    `\nVoxtral-Mini-3B-2507's config, random BF16 weights (full: 30 + 32 layers, 4.7 GB; one-layer: 1 + 1, 1.9 GB). ` +
      `Largest tensor ${mib(LARGEST_BYTES)} MiB; host goal <= 1.25 x that + 256 MiB = ${mib(HOST_GOAL_BYTES)} MiB.\n` +
      "host: Node, the peak of live ArrayBuffers (a memory run with a GC every 100 ms); Chromium, the renderer's peak resident memory " +
      "over its resident memory before the load (beside it, the page's V8 heap and ArrayBuffers). weights: the language model's weights, until the first compile event; " +
      'the rest compiles pipelines and starts the media encoder (its weights included).',
  );
  console.log(
    table(
      [
        'model',
        'place',
        'tree',
        'load',
        'load s',
        'weights s',
        'host MiB',
        '/ goal',
        'peak RSS MiB (from)',
        'GPU process MiB',
        'GPU peak MiB',
        'weights MiB',
      ],
      runs.map((r) => [
        r.model,
        r.place,
        r.tree,
        r.load,
        seconds(r.loadMs),
        seconds(r.weightsMs),
        mib(r.hostBytes),
        r.hostBytes === undefined ? '-' : (r.hostBytes / HOST_GOAL_BYTES).toFixed(2),
        r.pageHeapBytes === undefined ? '-' : `${mib(r.pageHeapBytes)} / ${mib(r.pageArrayBufferBytes)}`,
        `${mib(r.peakRss)} (${mib(r.baseRss)})`,
        mib(r.gpuProcessPeakRss),
        mib(r.gpuPeakBytes),
        mib(r.weightBytes),
      ]),
    ),
  );
  const ratios: Array<{ model: string; place: string; gguf: string; load: number; weights: number }> = [];
  for (const model of new Set(runs.map((r) => r.model))) {
    for (const place of ['node', 'chromium'] as const) {
      const mean = (load: string, key: 'loadMs' | 'weightsMs') => {
        const of = runs.filter((r) => r.model === model && r.place === place && r.tree === trees[0].name && r.load === load);
        return of.length ? of.reduce((a, r) => a + r[key], 0) / of.length : undefined;
      };
      for (const type of ggufTypes) {
        const [q4, gguf, q4w, ggufw] = [
          mean('q4', 'loadMs'),
          mean(`GGUF ${type}`, 'loadMs'),
          mean('q4', 'weightsMs'),
          mean(`GGUF ${type}`, 'weightsMs'),
        ];
        if (q4 === undefined || gguf === undefined || q4w === undefined || ggufw === undefined) continue;
        ratios.push({ model, place, gguf: type, load: q4 / gguf, weights: q4w / ggufw });
        console.log(
          `${model}, ${place}: GGUF ${type} loads ${(q4 / gguf).toFixed(2)}x as fast as bf16 -> q4 (goal >= 3x); ` +
            `the language model's weights ${(q4w / ggufw).toFixed(2)}x`,
        );
      }
    }
  }
  console.log(
    JSON.stringify({
      bench: 'load',
      machine: { cpus: cpus().length, cpu: cpus()[0]?.model },
      largestTensorBytes: LARGEST_BYTES,
      hostGoalBytes: HOST_GOAL_BYTES,
      runs,
      ratios,
    }),
  );
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : e);
  process.exitCode = 1;
});
