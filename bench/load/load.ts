// `npm run bench:load`: what loading a checkpoint at real widths costs. The checkpoint is the Qwen2.5-VL-3B
// bench model (scripts/make-bench-qwen.ts: the real widths and vocabulary, 4 + 4 layers, random BF16, 1.4 GB
// in one file; its largest tensor is the tied 151936 x 2048 embedding, 594 MiB), loaded by createEngine in
// a fresh Node process per load (bench/load/load-child.mjs) with each dtype: load time, the peak of live
// ArrayBuffer bytes after a full GC (what the load holds in JS: the goal is <= 1.25 x the largest tensor +
// 256 MiB), the process's peak resident memory (on SwiftShader GPU buffers are host memory and count there
// too) and the GPU memory. With --baseline=<git-ref>, the same loads on that tree's build (a worktree under
// .cache/baseline/, built with vite), alternating with this tree's. Ends with ONE JSON line.
//
// The same weights as a GGUF pair (--gguf=Q4_K_M,Q8_0: scripts/gguf-convert-qwen.ts writes them once, beside
// the bench model) load with this tree only: the blocks go to the GPU as they are, nothing is quantized.
//
// Flags: --dtypes=f32,q4  --gguf=Q4_K_M (none: --gguf=)  --baseline=<ref>  --reps=N loads per dtype and tree (default 1)

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, symlinkSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { convertQwenToGguf } from '../../scripts/gguf-convert-qwen';
import type { ConvertType } from '../../scripts/gguf-convert';
import { BENCH_QWEN, ensureBenchQwen, root as repoRoot } from '../../scripts/make-bench-qwen';
import { baselineTree } from '../harness/baseline';
import { table } from '../harness/table';

const log = (line: string) => console.error(`[bench:load] ${line}`);

function value(name: string): string | undefined {
  const argv = process.argv.slice(2);
  const i = argv.indexOf(`--${name}`);
  if (i >= 0) return argv[i + 1];
  return argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
}

interface LoadFigures {
  dtype: string;
  loadMs: number;
  peakArrayBuffers: number;
  baseRss: number;
  peakRss: number;
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

function loadOnce(dist: string, model: string, dtype: string): LoadFigures {
  const r = spawnSync(process.execPath, ['--expose-gc', join(repoRoot, 'bench/load/load-child.mjs'), dist, model, dtype], {
    encoding: 'utf8',
    env: process.env,
    maxBuffer: 1 << 24,
  });
  const line = r.stdout.trim().split('\n').pop() ?? '';
  if (r.status !== 0 || !line.startsWith('{'))
    throw new Error(`load (${dist}, ${dtype}) failed: ${r.stderr.trim().split('\n').slice(-5).join(' | ')}`);
  return JSON.parse(line) as LoadFigures;
}

async function main(): Promise<void> {
  const dtypes = (value('dtypes') ?? 'f32,q4').split(',');
  const reps = Number(value('reps') ?? 1);
  const baselineRef = value('baseline');
  const model = await ensureBenchQwen('qwen2_5_vl', log);
  log('building this tree (vite build --mode lib)');
  const trees: Array<{ name: string; dist: string }> = [{ name: 'this tree', dist: build(repoRoot) }];
  if (baselineRef) {
    const { sha, dir } = baselineTree(repoRoot, baselineRef);
    log(`building ${baselineRef} (${sha.slice(0, 12)}) in ${dir}`);
    trees.push({ name: `${baselineRef} (${sha.slice(0, 12)})`, dist: build(dir) });
  }
  const largest = 151936 * 2048 * 2;
  const ggufTypes = (value('gguf') ?? 'Q4_K_M').split(',').filter(Boolean) as ConvertType[];
  const runs: Array<{ tree: string } & LoadFigures> = [];
  for (const dtype of dtypes) {
    for (let i = 0; i < reps; i++) {
      // Alternate which tree loads first.
      const order = i % 2 === 0 ? trees : [...trees].reverse();
      for (const t of order) {
        log(`${t.name}: loading with dtype ${dtype}`);
        const f = loadOnce(t.dist, model, dtype);
        log(
          `${t.name} ${dtype}: ${(f.loadMs / 1000).toFixed(1)} s, live ArrayBuffers ${(f.peakArrayBuffers / 2 ** 20).toFixed(0)} MiB, RSS ${(f.peakRss / 2 ** 20).toFixed(0)} MiB`,
        );
        runs.push({ tree: t.name, ...f });
      }
    }
  }
  for (const type of ggufTypes) {
    const dir = `${model}-gguf-${type}`;
    const files = { model: `${model.split('/').at(-1)}-${type}.gguf` };
    if (!existsSync(join(dir, files.model))) {
      log(`writing the GGUF pair (${type}) in ${dir}`);
      await convertQwenToGguf(model, dir, type);
    }
    for (let i = 0; i < reps; i++) {
      log(`this tree: loading the ${type} GGUF pair`);
      const f = loadOnce(trees[0].dist, join(dir, files.model), 'f32');
      log(`this tree GGUF ${type}: ${(f.loadMs / 1000).toFixed(1)} s, live ArrayBuffers ${(f.peakArrayBuffers / 2 ** 20).toFixed(0)} MiB`);
      runs.push({ tree: trees[0].name, ...f, dtype: `GGUF ${type}` });
    }
  }
  const mib = (b: number) => (b / 2 ** 20).toFixed(0);
  console.log(
    `\n${BENCH_QWEN.qwen2_5_vl.real} widths (4 + 4 layers, random BF16, 1.4 GB; largest tensor ${mib(largest)} MiB), createEngine in a fresh Node process`,
  );
  console.log(
    table(
      ['tree', 'dtype', 'load s', 'peak live ArrayBuffers MiB', '/ largest tensor', 'peak RSS MiB (from)', 'GPU peak MiB', 'weights MiB'],
      runs.map((r) => [
        r.tree,
        r.dtype,
        (r.loadMs / 1000).toFixed(1),
        mib(r.peakArrayBuffers),
        (r.peakArrayBuffers / largest).toFixed(2),
        `${mib(r.peakRss)} (${mib(r.baseRss)})`,
        mib(r.gpuPeakBytes),
        mib(r.weightBytes),
      ]),
    ),
  );
  console.log(
    JSON.stringify({ bench: 'load', machine: { cpus: cpus().length, cpu: cpus()[0]?.model }, model, largestTensorBytes: largest, runs }),
  );
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : e);
  process.exitCode = 1;
});
