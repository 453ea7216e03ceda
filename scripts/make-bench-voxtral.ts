// `npx tsx scripts/make-bench-voxtral.ts [full|one-layer]`: the checkpoints `npm run bench:load` loads.
// Both have Voxtral-Mini-3B-2507's REAL config (test/fixtures/models/Voxtral-Mini-3B-2507: text 3072 wide,
// 8192 MLP, 32/8 heads of 128, vocabulary 131072 with a separate lm_head; audio tower 1280 wide, 20 heads,
// 5120 MLP), tokenizer and feature-extractor files, and deterministic RANDOM BF16 weights (the per-name
// PRNG init of scripts/tiny-weights.ts):
//
//   full        all 30 text and 32 audio layers: 4.7 GB of BF16, the real checkpoint's size
//   one-layer   1 text and 1 audio layer: the same embedding and head (768 MiB each), to show that
//               memory during a load does not grow with depth
//
// Written as Hugging Face writes a large checkpoint (scripts/safetensors-shards.ts: shards of at most
// 2 GiB and model.safetensors.index.json), one tensor at a time. Output (git-ignored):
//
//   .cache/bench-models/voxtral-3b-random/, voxtral-3b-random-one-layer/
//     config.json, tokenizer.json, tokenizer_config.json, preprocessor_config.json, the shards, the index,
//     README.md, manifest.json (recipe, and every file's size and sha256 as written)
//
// Regeneration is skipped when manifest.json has the same recipe and every file its recorded size (a
// 4.7 GB file is not re-hashed on every run).

import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseVoxtralConfig } from '../src/families/voxtral/config';
import { root } from './make-bench-qwen';
import { isScript } from './run-as-script';
import { writeSafetensorsShards, type WrittenFile } from './safetensors-shards';
import { sha256, tensorSpecsFor, writeJson } from './tiny-weights';

const REAL = join(root, 'test/fixtures/models/Voxtral-Mini-3B-2507');
const COPIED = ['tokenizer.json', 'tokenizer_config.json', 'preprocessor_config.json'];
const MAX_SHARD_BYTES = 2 * 2 ** 30;

export type BenchVoxtralDepth = 'full' | 'one-layer';

export const BENCH_VOXTRAL: Record<BenchVoxtralDepth, { dir: string; layers?: number }> = {
  full: { dir: join(root, '.cache/bench-models/voxtral-3b-random') },
  'one-layer': { dir: join(root, '.cache/bench-models/voxtral-3b-random-one-layer'), layers: 1 },
};

/** Bump when the files this script writes change, so old copies are regenerated. */
const RECIPE = 'make-bench-voxtral v1: the real config (depth cut for one-layer), tiny-weights initTensor, BF16, 2 GiB shards';

interface Manifest {
  recipe: string;
  files: Record<string, WrittenFile>;
}

/** The real config, with `layers` text and audio layers when given. */
export function benchVoxtralConfig(layers?: number): Record<string, any> {
  const config = JSON.parse(readFileSync(join(REAL, 'config.json'), 'utf8'));
  if (layers !== undefined) {
    config.text_config = { ...config.text_config, num_hidden_layers: layers };
    config.audio_config = { ...config.audio_config, num_hidden_layers: layers };
  }
  config._tessera = "Voxtral-Mini-3B-2507's config with RANDOM weights: npm run bench:load. Not a trained model.";
  return config;
}

function isCurrent(dir: string): boolean {
  const path = join(dir, 'manifest.json');
  if (!existsSync(path)) return false;
  const manifest = JSON.parse(readFileSync(path, 'utf8')) as Manifest;
  return (
    manifest.recipe === RECIPE &&
    Object.entries(manifest.files).every(([f, w]) => existsSync(join(dir, f)) && statSync(join(dir, f)).size === w.bytes)
  );
}

function make(depth: BenchVoxtralDepth, log: (line: string) => void): void {
  const { dir, layers } = BENCH_VOXTRAL[depth];
  rmSync(dir, { recursive: true, force: true }); // a half-written folder has no manifest, so is never "current"
  mkdirSync(dir, { recursive: true });
  const files: Record<string, WrittenFile> = {};
  const record = (f: string) => {
    const bytes = readFileSync(join(dir, f));
    files[f] = { bytes: bytes.byteLength, sha256: sha256(bytes) };
  };
  for (const f of COPIED) {
    copyFileSync(join(REAL, f), join(dir, f));
    record(f);
  }
  const config = benchVoxtralConfig(layers);
  writeJson(join(dir, 'config.json'), config);
  record('config.json');
  let lastLog = performance.now();
  const shards = writeSafetensorsShards(dir, tensorSpecsFor(config, parseVoxtralConfig), 'BF16', MAX_SHARD_BYTES, (name, done, total) => {
    if (performance.now() - lastLog < 10_000 && done < total) return;
    lastLog = performance.now();
    log(`bench model: ${done} / ${total} tensors written (${name})`);
  });
  Object.assign(files, shards);
  if (existsSync(join(dir, 'model.safetensors.index.json'))) record('model.safetensors.index.json');
  writeFileSync(
    join(dir, 'README.md'),
    `# ${dir.split('/').at(-1)}\n\nVoxtral-Mini-3B-2507's config${layers ? ` cut to ${layers} text and ${layers} audio layer` : ''}, ` +
      'tokenizer and feature-extractor files with deterministic RANDOM BF16 weights, made by ' +
      '`scripts/make-bench-voxtral.ts` for `npm run bench:load`. **Not a trained model.**\n',
  );
  writeJson(join(dir, 'manifest.json'), { recipe: RECIPE, files } satisfies Manifest);
}

/** Makes the bench checkpoint of that depth unless a current copy is there; returns its folder. */
export function ensureBenchVoxtral(depth: BenchVoxtralDepth, log: (line: string) => void): string {
  const { dir } = BENCH_VOXTRAL[depth];
  if (isCurrent(dir)) {
    log(`bench model: ${dir} is current, not regenerated`);
    return dir;
  }
  log(`bench model: writing ${dir} (Voxtral-Mini-3B-2507's widths, ${depth}, random BF16 weights) ...`);
  const t0 = performance.now();
  make(depth, log);
  log(`bench model: written in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return dir;
}

if (isScript('make-bench-voxtral')) {
  const wanted = process.argv.slice(2).filter((a): a is BenchVoxtralDepth => a in BENCH_VOXTRAL);
  for (const depth of wanted.length ? wanted : (Object.keys(BENCH_VOXTRAL) as BenchVoxtralDepth[])) {
    ensureBenchVoxtral(depth, (line) => console.log(line));
  }
}
