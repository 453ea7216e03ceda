// `npm run bench:model -- --family qwen2_5_vl|qwen3_vl`: a Qwen-VL checkpoint at real widths and
// vocabulary (scripts/make-bench-qwen.ts: Qwen2.5-VL-3B's or Qwen3-VL-2B's, 4 vision and 4 text layers,
// random BF16 weights) answering about one 448 x 448 image and one 1280 x 720 image, with the real pixel
// budget. For each image: a cold request (the first of its size: the tower's pipelines for that grid
// compile), then `--reps` warm ones, each with byte-distinct copies of the PNG (png-variant.ts) so the
// tower really runs; reported: vision encode ms, TTFT, decode tokens/s and peak GPU memory.
//
//   1. Node (from the built package) on WebGPU (Dawn; SwiftShader on a machine without a GPU): also prefill
//      tokens/s, the peak GPU memory by area (the language model's device; the tower runs in an encoder
//      worker on a device of its own, reported beside it from engine.stats().encoder.gpuMemory) and the
//      process's peak resident memory (on SwiftShader, GPU buffers are host memory and count there too).
//   2. Chromium (qwen-browser.ts, qwen-page.ts): ours, then the peer, transformers.js 4.3.1 on
//      onnxruntime-web's WebGPU EP (fp32) on an ONNX export of the same weights in its Qwen-VL layout
//      (qwen-peer-export.ts), one after the other in the same page, the same inputs, greedy; printed side
//      by side with ratios against the issue's goals (encode >= 8x, decode >= 10x, peak memory <= 1.0x).
//      transformers.js has no DeepStack, so the Qwen3-VL peer runs the model's speed, not its answers.
// Ends with ONE JSON line.
//
// Flags: --family qwen2_5_vl|qwen3_vl (or both, comma-separated)  --tokens=N new tokens (default 16)  --reps=N
//        warm requests per image (default 1)  --no-build runs the dist/ already there (bench/gpu/on-device.sh,
//        where there is no vite)  --max-binding=BYTES acts as a GPU that binds at most that much (the
//        embedding and LM head then load in parts of rows; Node only)  --no-node  --no-browser  --no-peer
//        --timeout-min=N for each family's page (default 120: the peer's cold requests take minutes here)
//        --images=448x448,1280x720 (default both)  --no-ours (Chromium: the peer alone)

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
import type { QwenBrowserResult } from './qwen-browser';
import { formatQwenBrowser, qwenRatios } from './qwen-report';

const log = (line: string) => console.error(`[bench] ${line}`);

interface Args {
  families: BenchQwenFamily[];
  tokens: number;
  reps: number;
  build: boolean;
  /** gpu.maxStorageBufferBindingSize: act as a GPU that binds at most this (the embedding and head load in parts). */
  maxBinding?: number;
  node: boolean;
  browser: boolean;
  /** Ours in Chromium (--no-ours: the peer alone). */
  ours: boolean;
  peer: boolean;
  timeoutMs: number;
  /** Which of the two images ('448x448', '1280x720'). */
  images: string[];
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
    node: !argv.includes('--no-node'),
    browser: !argv.includes('--no-browser'),
    ours: !argv.includes('--no-ours'),
    peer: !argv.includes('--no-peer'),
    timeoutMs: Number(value('timeout-min') ?? 120) * 60_000,
    images: (value('images') ?? IMAGE_SIZES.map(([w, h]) => `${w}x${h}`).join(',')).split(','),
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

const IMAGE_SIZES = [
  [448, 448],
  [1280, 720],
] as const;

/** The images asked for: public/sample.png resized (stretched) to 448 x 448 and 1280 x 720. */
async function benchImages(labels: readonly string[]): Promise<Array<[string, Uint8Array]>> {
  const sample = readFileSync(join(repoRoot, 'public/sample.png'));
  const images: Array<[string, Uint8Array]> = [];
  for (const label of labels) {
    const size = IMAGE_SIZES.find(([w, h]) => `${w}x${h}` === label);
    if (!size) throw new Error(`--images=${label}: use ${IMAGE_SIZES.map(([w, h]) => `${w}x${h}`).join(' or ')}`);
    const [w, h] = size;
    images.push([`${w}x${h}`, new Uint8Array(await sharp(sample).resize(w, h, { fit: 'fill' }).png().toBuffer())]);
  }
  return images;
}

async function benchNode(family: BenchQwenFamily, dir: string, images: ReadonlyArray<[string, Uint8Array]>, args: Args) {
  const { createEngine } = (await import(pathToFileURL(join(repoRoot, 'dist/node.js')).href)) as typeof import('../../src/node');
  const rss = peakRss();
  const t0 = performance.now();
  const gpu = args.maxBinding === undefined ? undefined : { maxStorageBufferBindingSize: args.maxBinding };
  const engine = await createEngine({ model: dir, device: 'webgpu', kvCacheTokens: 4096, gpu });
  const loadMs = performance.now() - t0;
  const adapter = engine.gpu.adapter;
  log(`${family}: loaded in ${(loadMs / 1000).toFixed(1)} s on ${adapter.vendor} / ${adapter.architecture} / ${adapter.device}`);
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

type NodeResult = Awaited<ReturnType<typeof benchNode>>;

interface FamilyResult {
  family: BenchQwenFamily;
  model: string;
  node?: NodeResult;
  browser?: QwenBrowserResult | { skipped: string };
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.build && args.node) {
    log('building the package (vite build --mode lib): the engine runs from dist/ as users run it');
    execFileSync(process.execPath, [join(repoRoot, 'node_modules/vite/bin/vite.js'), 'build', '--mode', 'lib', '--logLevel', 'warn'], {
      cwd: repoRoot,
      stdio: 'inherit',
    });
  }
  const images = await benchImages(args.images);
  const results: FamilyResult[] = [];
  for (const family of args.families) {
    const dir = await ensureBenchQwen(family, log);
    const r: FamilyResult = { family, model: dir };
    if (args.node) r.node = await benchNode(family, dir, images, args);
    if (args.browser) {
      try {
        // Loaded only here, by URL: bench/gpu/pack.sh bundles this file for a machine with no Chromium, Vite
        // or Playwright (on-device.sh passes --no-browser), and esbuild leaves such an import out.
        const { runQwenBrowser } = (await import(new URL('./qwen-browser.ts', import.meta.url).href)) as typeof import('./qwen-browser');
        r.browser = await runQwenBrowser({
          family,
          dir,
          repoRoot,
          images,
          tokens: args.tokens,
          reps: args.reps,
          ours: args.ours,
          peer: args.peer,
          timeoutMs: args.timeoutMs,
          log,
        });
      } catch (e) {
        r.browser = { skipped: `the Chromium page failed: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}` };
        log(r.browser.skipped);
      }
    }
    results.push(r);
  }
  const mib = (b: number) => (b / 2 ** 20).toFixed(0);
  for (const { family, node: r, browser } of results) {
    const title = `${family} (${BENCH_QWEN[family].real} widths, 4 + 4 layers, random BF16), ${args.tokens} new tokens`;
    if (r) {
      console.log(`\n${title}, Node + Dawn`);
      console.log(
        table(
          ['image', 'grid', 'image tokens', 'encode ms (cold / warm)', 'TTFT ms (cold / warm)', 'prefill tok/s', 'decode tok/s'],
          r.rows.map((x) => [
            x.image,
            x.warm.grid,
            String(x.warm.imageTokens),
            `${x.cold.encodeMs.toFixed(0)} / ${x.warm.encodeMs.toFixed(0)}`,
            `${x.cold.ttftMs.toFixed(0)} / ${x.warm.ttftMs.toFixed(0)}`,
            x.warm.prefillTokensPerSecond.toFixed(1),
            x.warm.decodeTokensPerSecond.toFixed(2),
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
    if (browser) console.log(`\n${title}, Chromium\n${formatQwenBrowser(family, browser, args.reps)}`);
  }
  console.log(
    JSON.stringify({
      bench: 'model-qwen',
      machine: { cpus: cpus().length, cpu: cpus()[0]?.model },
      tokens: args.tokens,
      reps: args.reps,
      results: results.map((r) => ({
        ...r,
        ratios: r.browser && 'page' in r.browser ? qwenRatios(r.browser.page) : undefined,
      })),
    }),
  );
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : e);
  process.exitCode = 1;
});
