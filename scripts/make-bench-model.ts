// `npx tsx scripts/make-bench-model.ts`: the checkpoint `npm run bench:model` runs. It has the REAL
// SmolVLM-256M-Instruct shape (config.json copied verbatim: vision 768 x 12 layers, text 576 x 30 layers,
// 9/3 heads, vocab 49280) and the real tokenizer, chat template and processor files, but deterministic
// RANDOM BF16 weights (the per-name PRNG init of scripts/make-tiny.ts). Output (git-ignored):
//
//   .cache/bench-models/smolvlm-256m-random/
//     config.json, tokenizer*.json, special_tokens_map.json, added_tokens.json, generation_config.json,
//     chat_template.json, processor_config.json    copied from test/fixtures/models/SmolVLM-256M-Instruct
//     preprocessor_config.json                     the real one with size.longest_edge = 512 (see below)
//     model.safetensors                            BF16, ~513 MB
//     manifest.json                                recipe + sha256 of every file written here
//
// ONE DELIBERATE CHANGE: size.longest_edge is 512 instead of 2048, so an image is resized to fit 512 and
// becomes exactly ONE 512x512 tile (no split, 64 image tokens). With 2048 every image becomes 13-17 tiles,
// and the onnxruntime-web peer on a CPU WebGPU (SwiftShader) would take hours. The benchmark prints this.
//
// Regeneration is skipped when manifest.json has the same recipe and model.safetensors still has the
// recorded sha256 (`--force` regenerates anyway). The ONNX export for the transformers.js peer
// (bench/onnx-export/) writes its own onnx/ folder and manifest next to these files.

import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createReadStream } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeSafetensors } from '../src/model/weights/safetensors-writer';
import { sha256, tensorsFor, writeJson } from './tiny-weights';
import { isScript } from './run-as-script';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const REAL = join(root, 'test/fixtures/models/SmolVLM-256M-Instruct');
const COPIED = [
  'config.json',
  'tokenizer.json',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'added_tokens.json',
  'generation_config.json',
  'chat_template.json',
  'processor_config.json',
];

/** Where the bench model lives, relative to the repository root. */
export const BENCH_MODEL_DIR = join(root, '.cache/bench-models/smolvlm-256m-random');
/** preprocessor_config.json size.longest_edge of the bench model (the real checkpoint has 2048). */
export const BENCH_LONGEST_EDGE = 512;
/** Bump when the files this script writes change, so old copies are regenerated. */
const RECIPE = `make-bench-model v1: real SmolVLM-256M-Instruct config, make-tiny initTensor, BF16, longest_edge ${BENCH_LONGEST_EDGE}`;

export class BenchModelError extends Error {
  override readonly name = 'BenchModelError';
}

interface Manifest {
  recipe: string;
  files: Record<string, string>;
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** True when `dir` holds this recipe's files (`recipe`: another bench checkpoint's) with the recorded model.safetensors sha256. */
export async function benchModelIsCurrent(dir: string = BENCH_MODEL_DIR, recipe: string = RECIPE): Promise<boolean> {
  const manifestPath = join(dir, 'manifest.json');
  if (!existsSync(manifestPath)) return false;
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as Manifest;
  if (manifest.recipe !== recipe) return false;
  for (const name of Object.keys(manifest.files)) if (!existsSync(join(dir, name))) return false;
  const weights = join(dir, 'model.safetensors');
  return (await sha256File(weights)) === manifest.files['model.safetensors'];
}

/** Writes the bench model into `dir` (replacing what is there) and returns its manifest. */
export function makeBenchModel(dir: string = BENCH_MODEL_DIR): Manifest {
  rmSync(join(dir, 'manifest.json'), { force: true }); // a half-written folder is never "current"
  mkdirSync(dir, { recursive: true });
  const files: Record<string, string> = {};
  for (const f of COPIED) {
    copyFileSync(join(REAL, f), join(dir, f));
    files[f] = sha256(readFileSync(join(dir, f)));
  }
  const pre = JSON.parse(readFileSync(join(REAL, 'preprocessor_config.json'), 'utf8'));
  if (pre.max_image_size?.longest_edge !== BENCH_LONGEST_EDGE) {
    throw new BenchModelError(
      `the real preprocessor_config.json has max_image_size ${JSON.stringify(pre.max_image_size)}; this script assumes 512-px tiles`,
    );
  }
  pre.size = { longest_edge: BENCH_LONGEST_EDGE };
  writeJson(join(dir, 'preprocessor_config.json'), pre);
  files['preprocessor_config.json'] = sha256(readFileSync(join(dir, 'preprocessor_config.json')));

  const config = JSON.parse(readFileSync(join(REAL, 'config.json'), 'utf8'));
  const bytes = writeSafetensors(tensorsFor(config, 'BF16'), { format: 'pt' });
  writeFileSync(join(dir, 'model.safetensors'), bytes);
  files['model.safetensors'] = sha256(bytes);

  writeFileSync(
    join(dir, 'README.md'),
    "# smolvlm-256m-random\n\nSmolVLM-256M-Instruct's real config, tokenizer and processor files with deterministic RANDOM BF16\n" +
      'weights, made by `scripts/make-bench-model.ts` for `npm run bench:model`. **Not a trained model.**\n\n' +
      `preprocessor_config.json has size.longest_edge = ${BENCH_LONGEST_EDGE} (the real model: 2048), so an image is one 512x512 tile.\n`,
  );
  const manifest: Manifest = { recipe: RECIPE, files };
  writeJson(join(dir, 'manifest.json'), manifest);
  return manifest;
}

/** Makes the bench model unless a current copy is there; says what it did through `log`. */
export async function ensureBenchModel(log: (line: string) => void, options: { dir?: string; force?: boolean } = {}): Promise<void> {
  const dir = options.dir ?? BENCH_MODEL_DIR;
  if (!options.force && (await benchModelIsCurrent(dir))) {
    log(`bench model: ${dir} is current (manifest sha256 matches), not regenerated`);
    return;
  }
  log(`bench model: writing ${dir} (random BF16 weights at the real SmolVLM-256M shape, ~0.5 GB) ...`);
  const t0 = performance.now();
  makeBenchModel(dir);
  log(`bench model: written in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}

if (isScript('make-bench-model')) {
  ensureBenchModel((line) => console.log(line), { force: process.argv.includes('--force') }).catch((e: unknown) => {
    console.error(e instanceof Error ? `${e.name}: ${e.message}` : e);
    process.exitCode = 1;
  });
}
