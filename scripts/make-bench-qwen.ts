// `npx tsx scripts/make-bench-qwen.ts [qwen2_5_vl|qwen3_vl]`: the checkpoints `npm run bench:model --
// --family qwen2_5_vl|qwen3_vl` runs. Each has the REAL widths, head sizes, vocabulary (151936) and
// processor files of Qwen2.5-VL-3B-Instruct or Qwen3-VL-2B-Instruct (test/fixtures/models/), with the
// depth cut to what this 2-core machine runs in minutes: 4 vision and 4 text layers (Qwen2.5-VL: windowed
// layers 0-2, full attention in 3; Qwen3-VL: DeepStack taps after vision layers 0, 1 and 2, added after
// decoder layers 0-2), and deterministic RANDOM BF16 weights (the per-name PRNG init of
// scripts/tiny-weights.ts). Output (git-ignored):
//
//   .cache/bench-models/qwen2_5_vl-3b-random/, qwen3_vl-2b-random/
//     config.json (the real one, depths cut), chat_template.json, tokenizer_config.json, vocab.json,
//     merges.txt, generation_config.json or video_preprocessor_config.json, preprocessor_config.json
//     (the real pixel budget), model.safetensors (BF16), manifest.json (recipe + sha256)
//
// Regeneration is skipped when manifest.json has the same recipe and model.safetensors its recorded sha256.

import { copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseQwen25VlConfig } from '../src/families/qwen2_5_vl/config';
import { parseQwen3VlConfig } from '../src/families/qwen3_vl/config';
import type { ModelConfig } from '../src/model/config';
import { writeSafetensors } from '../src/model/weights/safetensors-writer';
import { benchModelIsCurrent } from './make-bench-model';
import { isScript } from './run-as-script';
import { sha256, tensorsFor, writeJson } from './tiny-weights';

/** The repository's root (bench/model/qwen.ts finds dist/ from it, so a bundle of both agrees on it). */
export const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const FIXTURES = join(root, 'test/fixtures/models');

export type BenchQwenFamily = 'qwen2_5_vl' | 'qwen3_vl';

interface BenchQwen {
  dir: string;
  real: string;
  parse: (c: Record<string, any>) => ModelConfig;
  /** The real config with the depths cut. */
  config: (real: Record<string, any>) => Record<string, any>;
  files: string[];
}

const LAYERS = 4;

export const BENCH_QWEN: Record<BenchQwenFamily, BenchQwen> = {
  qwen2_5_vl: {
    dir: join(root, '.cache/bench-models/qwen2_5_vl-3b-random'),
    real: 'Qwen2.5-VL-3B-Instruct',
    parse: parseQwen25VlConfig,
    config: (real) => ({
      ...real,
      num_hidden_layers: LAYERS,
      vision_config: { ...real.vision_config, depth: LAYERS, fullatt_block_indexes: [LAYERS - 1] },
    }),
    files: ['chat_template.json', 'generation_config.json', 'tokenizer_config.json', 'preprocessor_config.json'],
  },
  qwen3_vl: {
    dir: join(root, '.cache/bench-models/qwen3_vl-2b-random'),
    real: 'Qwen3-VL-2B-Instruct',
    parse: parseQwen3VlConfig,
    config: (real) => ({
      ...real,
      text_config: { ...real.text_config, num_hidden_layers: LAYERS },
      vision_config: { ...real.vision_config, depth: LAYERS, deepstack_visual_indexes: [0, 1, 2] },
    }),
    files: ['chat_template.json', 'tokenizer_config.json', 'preprocessor_config.json', 'video_preprocessor_config.json'],
  },
};

/** Bump when the files this script writes change, so old copies are regenerated. */
const RECIPE = `make-bench-qwen v1: real configs with ${LAYERS} vision and ${LAYERS} text layers, tiny-weights initTensor, BF16`;

interface Manifest {
  recipe: string;
  files: Record<string, string>;
}

function make(spec: BenchQwen): void {
  const dir = spec.dir;
  rmSync(join(dir, 'manifest.json'), { force: true }); // a half-written folder is never "current"
  mkdirSync(dir, { recursive: true });
  const files: Record<string, string> = {};
  const src = join(FIXTURES, spec.real);
  for (const f of spec.files) copyFileSync(join(src, f), join(dir, f));
  // The Qwen2 BPE of both families (Qwen2.5-VL-3B's files are byte-identical to these).
  for (const f of ['vocab.json', 'merges.txt']) copyFileSync(join(FIXTURES, 'Qwen3-VL-2B-Instruct', f), join(dir, f));
  const config = spec.config(JSON.parse(readFileSync(join(src, 'config.json'), 'utf8')));
  writeJson(join(dir, 'config.json'), config);
  for (const f of [...spec.files, 'vocab.json', 'merges.txt', 'config.json']) files[f] = sha256(readFileSync(join(dir, f)));
  const bytes = writeSafetensors(tensorsFor(config, 'BF16', spec.parse), { format: 'pt' });
  writeFileSync(join(dir, 'model.safetensors'), bytes);
  files['model.safetensors'] = sha256(bytes);
  writeFileSync(
    join(dir, 'README.md'),
    `# ${dir.split('/').at(-1)}\n\n${spec.real}'s widths, vocabulary and processor files with ${LAYERS} vision and ${LAYERS} text ` +
      'layers and deterministic RANDOM BF16 weights, made by `scripts/make-bench-qwen.ts` for `npm run bench:model -- --family`. ' +
      '**Not a trained model.**\n',
  );
  writeJson(join(dir, 'manifest.json'), { recipe: RECIPE, files } satisfies Manifest);
}

/** Makes the family's bench checkpoint unless a current copy is there; returns its folder. */
export async function ensureBenchQwen(family: BenchQwenFamily, log: (line: string) => void): Promise<string> {
  const spec = BENCH_QWEN[family];
  if (await benchModelIsCurrent(spec.dir, RECIPE)) {
    log(`bench model: ${spec.dir} is current, not regenerated`);
    return spec.dir;
  }
  log(`bench model: writing ${spec.dir} (${spec.real}'s widths, ${LAYERS} + ${LAYERS} layers, random BF16 weights) ...`);
  const t0 = performance.now();
  make(spec);
  log(`bench model: written in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  return spec.dir;
}

if (isScript('make-bench-qwen')) {
  const families = (process.argv.slice(2).filter((a) => !a.startsWith('--')) as BenchQwenFamily[]).filter((f) => f in BENCH_QWEN);
  for (const f of families.length ? families : (Object.keys(BENCH_QWEN) as BenchQwenFamily[])) {
    await ensureBenchQwen(f, (line) => console.log(line));
  }
}
