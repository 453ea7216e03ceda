// `npm run bench:model -- --family qwen2_5_vl|qwen3_vl`: a Qwen-VL checkpoint at real widths and
// vocabulary (scripts/make-bench-qwen.ts: Qwen2.5-VL-3B's or Qwen3-VL-2B's, 4 vision and 4 text layers,
// random BF16 weights) answering about one 448 x 448 image and one 1280 x 720 image, with the real pixel
// budget, in Node on WebGPU (Dawn; SwiftShader on a machine without a GPU). For each image: a cold
// request (the first of its size: the tower's pipelines for that grid compile), then `--reps` warm ones,
// each with byte-distinct copies of the PNG (png-variant.ts) so the tower really runs; reported: vision
// encode ms, TTFT, prefill tokens/s (after the encode) and decode tokens/s, the engine's peak GPU memory
// (by area: the language model's device; the tower runs in an encoder worker on a device of its own,
// reported beside it from engine.stats().encoder.gpuMemory) and the process's peak resident memory (on SwiftShader, GPU buffers are host memory and
// count there too). Ends with ONE JSON line.
//
// The transformers.js peer is not run yet. scripts/onnx/qwen-onnx.ts and qwen-vision-onnx.ts write graphs
// in its Qwen-VL layout (the CPU backend runs them), but at these widths the f32 decoder with its 151936-row
// head is over protobuf's 2 GB (the writer has no external-data files yet), and neither side runs this bench
// in Chromium yet. The JSON line says so in `peer`.
//
// Flags: --family qwen2_5_vl|qwen3_vl (or both, comma-separated)  --tokens=N new tokens (default 16)  --reps=N
//        warm requests per image (default 1)  --no-build runs the dist/ already there (bench/gpu/on-device.sh,
//        where there is no vite)  --max-binding=BYTES acts as a GPU that binds at most that much (the
//        embedding and LM head then load in parts of rows)

import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import sharp from 'sharp';
import { type BenchQwenFamily, BENCH_QWEN, ensureBenchQwen, root as repoRoot } from '../../scripts/make-bench-qwen';
import type { TesseraInfo } from '../../src/engine/types';
import { table } from '../harness/table';
import { pngVariant } from './png-variant';

const log = (line: string) => console.error(`[bench] ${line}`);

interface Args {
  families: BenchQwenFamily[];
  tokens: number;
  reps: number;
  build: boolean;
  /** gpu.maxStorageBufferBindingSize: act as a GPU that binds at most this (the embedding and head load in parts). */
  maxBinding?: number;
}

function parseArgs(argv: readonly string[]): Args {
  const value = (name: string) => {
    const i = argv.indexOf(`--${name}`);
    if (i >= 0) return argv[i + 1];
    return argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
  };
  const family = value('family');
  const families = family ? (family.split(',') as BenchQwenFamily[]) : (Object.keys(BENCH_QWEN) as BenchQwenFamily[]);
  for (const f of families) if (!(f in BENCH_QWEN)) throw new Error(`--family=${f}: use qwen2_5_vl or qwen3_vl`);
  return {
    families,
    tokens: Number(value('tokens') ?? 16),
    reps: Number(value('reps') ?? 1),
    build: !argv.includes('--no-build'),
    maxBinding: value('max-binding') === undefined ? undefined : Number(value('max-binding')),
  };
}

/** Resident memory, sampled every 50 ms: its peak. */
function peakRss(): { stop(): number } {
  let peak = process.memoryUsage().rss;
  const timer = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 50);
  return {
    stop() {
      clearInterval(timer);
      return Math.max(peak, process.memoryUsage().rss);
    },
  };
}

interface RequestFigures {
  encodeMs: number;
  ttftMs: number;
  prefillTokensPerSecond: number;
  decodeTokensPerSecond: number;
  promptTokens: number;
  imageTokens: number;
  /** Random weights may meet a stop token early: decode tok/s is over the tokens made. */
  completionTokens: number;
  grid: string;
}

const figures = (info: TesseraInfo): RequestFigures => ({
  encodeMs: info.timings.encodeMs,
  ttftMs: info.timings.ttftMs,
  // The prompt's prefill after its image is encoded (timings.prefillMs includes the wait for the encode).
  prefillTokensPerSecond: (info.promptTokens * 1000) / (info.timings.ttftMs - info.timings.encodeMs),
  decodeTokensPerSecond: info.timings.decodeTokensPerSecond,
  promptTokens: info.promptTokens,
  imageTokens: info.imageTokens,
  completionTokens: info.tokenIds.length,
  grid: info.media.map((m) => (m.grid ? `${m.grid.t}x${m.grid.h}x${m.grid.w}` : '')).join(','),
});

const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function benchFamily(family: BenchQwenFamily, args: Args) {
  const dir = await ensureBenchQwen(family, log);
  const { createEngine } = (await import(pathToFileURL(join(repoRoot, 'dist/node.js')).href)) as typeof import('../../src/node');
  const rss = peakRss();
  const t0 = performance.now();
  const gpu = args.maxBinding === undefined ? undefined : { maxStorageBufferBindingSize: args.maxBinding };
  const engine = await createEngine({ model: dir, device: 'webgpu', kvCacheTokens: 4096, gpu });
  const loadMs = performance.now() - t0;
  const adapter = engine.gpu.adapter;
  log(`${family}: loaded in ${(loadMs / 1000).toFixed(1)} s on ${adapter.vendor} / ${adapter.architecture} / ${adapter.device}`);
  const sample = readFileSync(join(repoRoot, 'public/sample.png'));
  const images: Array<[string, Uint8Array]> = [];
  for (const [w, h] of [
    [448, 448],
    [1280, 720],
  ] as const) {
    images.push([`${w}x${h}`, new Uint8Array(await sharp(sample).resize(w, h, { fit: 'fill' }).png().toBuffer())]);
  }
  const rows = [];
  try {
    for (const [label, png] of images) {
      const ask = async (tag: string) => {
        const r = await engine.chat.completions.create({
          messages: [
            {
              role: 'user',
              content: [
                { type: 'image', image: pngVariant(png, tag) },
                { type: 'text', text: 'Describe this image.' },
              ],
            },
          ],
          max_tokens: args.tokens,
        });
        if (r.tessera.media[0]?.source !== 'encoded')
          throw new Error(`${label} ${tag}: the image was not encoded (${r.tessera.media[0]?.source})`);
        const f = figures(r.tessera);
        log(
          `${family} ${label} ${tag}: encode ${f.encodeMs.toFixed(0)} ms, TTFT ${f.ttftMs.toFixed(0)} ms, decode ${f.decodeTokensPerSecond.toFixed(2)} tok/s (${f.imageTokens} image tokens, grid ${f.grid})`,
        );
        return f;
      };
      const cold = await ask('cold');
      const warm: RequestFigures[] = [];
      for (let i = 0; i < args.reps; i++) warm.push(await ask(`warm-${i}`));
      const mid = warm.length ? warm.find((w) => w.ttftMs === median(warm.map((x) => x.ttftMs)))! : cold;
      rows.push({ image: label, cold, warm: mid });
    }
    const stats = engine.stats();
    const gpu = stats.gpuMemory;
    const m = engine.model;
    return {
      family,
      model: dir,
      maxBinding: args.maxBinding,
      /** Parts of rows the token embedding loaded in (more than one when it is larger than a binding). */
      embedParts: m.backend === 'webgpu' ? m.weights.rowParts('text.embed').length : undefined,
      adapter,
      loadMs,
      rows,
      peakGpuBytes: gpu.peakBytes,
      peakGpuByArea: gpu.peakByArea,
      /** The encoder worker's own device (the tower): its high-water mark. */
      encoderPeakGpuBytes: stats.encoder.gpuMemory?.peakBytes,
      peakRssBytes: rss.stop(),
    };
  } finally {
    engine.destroy();
  }
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.build) {
    log('building the package (vite build --mode lib): the engine runs from dist/ as users run it');
    execFileSync(process.execPath, [join(repoRoot, 'node_modules/vite/bin/vite.js'), 'build', '--mode', 'lib', '--logLevel', 'warn'], {
      cwd: repoRoot,
      stdio: 'inherit',
    });
  }
  const results = [];
  for (const family of args.families) results.push(await benchFamily(family, args));
  const mib = (b: number) => (b / 2 ** 20).toFixed(0);
  for (const r of results) {
    console.log(`\n${r.family} (${BENCH_QWEN[r.family].real} widths, 4 + 4 layers, random BF16), ${args.tokens} new tokens, Node + Dawn`);
    console.log(
      table(
        ['image', 'grid', 'image tokens', 'encode ms (cold / warm)', 'TTFT ms (cold / warm)', 'prefill tok/s', 'decode tok/s', 'peer'],
        r.rows.map((x) => [
          x.image,
          x.warm.grid,
          String(x.warm.imageTokens),
          `${x.cold.encodeMs.toFixed(0)} / ${x.warm.encodeMs.toFixed(0)}`,
          `${x.cold.ttftMs.toFixed(0)} / ${x.warm.ttftMs.toFixed(0)}`,
          x.warm.prefillTokensPerSecond.toFixed(1),
          x.warm.decodeTokensPerSecond.toFixed(2),
          'not run',
        ]),
      ),
    );
    const areas = Object.entries(r.peakGpuByArea)
      .map(([k, v]) => `${k} ${mib(v)}`)
      .join(', ');
    console.log(
      `peak GPU memory of the language model's device ${mib(r.peakGpuBytes)} MiB (${areas}), of the encoder worker's ` +
        `${r.encoderPeakGpuBytes === undefined ? 'not reported' : `${mib(r.encoderPeakGpuBytes)} MiB`}; peak resident memory ` +
        `${mib(r.peakRssBytes)} MiB (the encoder worker's device included); load ${(r.loadMs / 1000).toFixed(1)} s`,
    );
  }
  console.log(
    '\npeer: not run. scripts/onnx/ writes Qwen-VL graphs in the transformers.js layout, but not yet at these sizes (no external-data files), and this bench does not run in Chromium yet.',
  );
  console.log(
    JSON.stringify({
      bench: 'model-qwen',
      machine: { cpus: cpus().length, cpu: cpus()[0]?.model },
      tokens: args.tokens,
      reps: args.reps,
      peer: {
        skipped: 'no ONNX export of these sizes in the transformers.js layout yet (over 2 GB: needs external data), and no Chromium run',
      },
      results,
    }),
  );
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : e);
  process.exitCode = 1;
});
