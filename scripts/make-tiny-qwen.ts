// The tiny Qwen-VL checkpoints for `npm run make:tiny`: deterministic random weights (RANDOM: their
// answers are noise) in the layout and config schema of the public checkpoints
// (test/fixtures/models/Qwen2.5-VL-3B-Instruct, Qwen3-VL-2B-Instruct), at reduced sizes that vary what
// the real ones vary:
//
//   qwen2_5_vl-tiny/  model_type qwen2_5_vl, text fields at the top level (as Qwen2.5-VL-3B's), q/k/v biases,
//                     contiguous M-RoPE section [4, 6, 6] of head_dim 32, tied head, BF16, names model.* / visual.*
//   qwen3_vl-tiny/    model_type qwen3_vl, text_config, q/k norms, head_dim 64 with 2 heads over hidden 64
//                     (q width 128: head_dim is not hidden / heads, as in Qwen3-VL-4B), interleaved section
//                     [12, 10, 10], untied head (as Qwen3-VL-8B), F16, names model.language_model.*
//
// Both keep the real vocabulary (151936), so the real special-token ids hold. qwen2_5_vl-tiny has its
// vision tower (4 layers of 64, head_dim 32, windows of 56 px = 2 x 2 merge units, full attention in
// layers 1 and 3); qwen3_vl-tiny's has 3 layers of 64 over an 8 x 8 learned position grid, DeepStack taps
// after layers 0 and 1. The engine, the CLI, the demo's model list and the tests load them
// (docs/families.md).

import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseQwen25VlConfig } from '../src/families/qwen2_5_vl/config';
import { parseQwen3VlConfig } from '../src/families/qwen3_vl/config';
import type { ModelConfig } from '../src/model/config';
import { writeSafetensors, type TensorToWrite } from '../src/model/weights/safetensors-writer';
import { isScript } from './run-as-script';
import { sha256, tensorsFor, writeJson } from './tiny-weights';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const FIXTURES = join(root, 'test/fixtures/models');

interface TinyQwen {
  real: string;
  /** The preprocessor config's pixel budget at tiny size (the real files allow up to 16 million pixels). */
  pixels: (pre: Record<string, any>) => Record<string, any>;
  parse: (c: Record<string, any>) => ModelConfig;
  dtype: TensorToWrite['dtype'];
  /** The real config with the reduced sizes. */
  config: (real: Record<string, any>) => Record<string, any>;
  files: string[];
  note: string;
}

const NOTE = 'Random weights at reduced sizes, made by `npm run make:tiny`. Not a trained model.';

export const TINY_QWEN: Record<string, TinyQwen> = {
  'qwen2_5_vl-tiny': {
    real: 'Qwen2.5-VL-3B-Instruct',
    parse: parseQwen25VlConfig,
    // 224 x 224 at most: 16 x 16 patches, 64 tokens.
    pixels: (pre) => ({ ...pre, max_pixels: 224 * 224 }),
    dtype: 'BF16',
    config: (real) => ({
      ...real,
      hidden_size: 64,
      intermediate_size: 160,
      num_hidden_layers: 2,
      num_attention_heads: 2,
      num_key_value_heads: 1,
      max_position_embeddings: 4096,
      rope_scaling: { type: 'mrope', mrope_section: [4, 6, 6] },
      vision_config: {
        ...real.vision_config,
        depth: 4,
        hidden_size: 64,
        intermediate_size: 96,
        num_heads: 2,
        out_hidden_size: 64,
        window_size: 56,
        fullatt_block_indexes: [1, 3],
      },
      _tessera: NOTE,
    }),
    files: ['chat_template.json', 'generation_config.json', 'tokenizer_config.json'],
    note: 'qwen2_5_vl: text fields at the top level, q/k/v biases, contiguous M-RoPE [4, 6, 6] (head_dim 32), tied head, BF16.',
  },
  'qwen3_vl-tiny': {
    real: 'Qwen3-VL-2B-Instruct',
    parse: parseQwen3VlConfig,
    // 224 x 224 at most: 14 x 14 patches of 16, 49 tokens; at least 64 x 64.
    pixels: (pre) => ({ ...pre, size: { longest_edge: 224 * 224, shortest_edge: 64 * 64 } }),
    dtype: 'F16',
    config: (real) => ({
      ...real,
      tie_word_embeddings: false,
      text_config: {
        ...real.text_config,
        hidden_size: 64,
        intermediate_size: 128,
        num_hidden_layers: 3,
        num_attention_heads: 2,
        num_key_value_heads: 1,
        head_dim: 64,
        max_position_embeddings: 4096,
        rope_scaling: { ...real.text_config.rope_scaling, mrope_section: [12, 10, 10] },
        tie_word_embeddings: false,
      },
      vision_config: {
        ...real.vision_config,
        depth: 3,
        hidden_size: 64,
        intermediate_size: 128,
        num_heads: 2,
        num_position_embeddings: 64,
        out_hidden_size: 64,
        deepstack_visual_indexes: [0, 1],
      },
      _tessera: NOTE,
    }),
    files: ['chat_template.json', 'video_preprocessor_config.json', 'tokenizer_config.json'],
    note: 'qwen3_vl: q/k norms, head_dim 64 over hidden 64 (2 heads, 1 kv head), interleaved M-RoPE [12, 10, 10], untied head, F16.',
  },
};

export function makeTinyQwen(outDir: string): Record<string, Record<string, string>> {
  const manifest: Record<string, Record<string, string>> = {};
  for (const [name, spec] of Object.entries(TINY_QWEN)) {
    const dir = join(outDir, name);
    mkdirSync(dir, { recursive: true });
    const real = JSON.parse(readFileSync(join(FIXTURES, spec.real, 'config.json'), 'utf8'));
    const config = spec.config(real);
    writeJson(join(dir, 'config.json'), config);
    for (const f of spec.files) copyFileSync(join(FIXTURES, spec.real, f), join(dir, f));
    const pre = JSON.parse(readFileSync(join(FIXTURES, spec.real, 'preprocessor_config.json'), 'utf8'));
    writeJson(join(dir, 'preprocessor_config.json'), spec.pixels(pre));
    // The Qwen2 BPE of both families (Qwen2.5-VL-3B's files are byte-identical to these), without a
    // tokenizer.json: the tokenizer builds it as transformers does (src/processor/qwen2-bpe.ts).
    for (const f of ['vocab.json', 'merges.txt']) copyFileSync(join(FIXTURES, 'Qwen3-VL-2B-Instruct', f), join(dir, f));
    const bytes = writeSafetensors(tensorsFor(config, spec.dtype, spec.parse), { format: 'pt' });
    writeFileSync(join(dir, 'model.safetensors'), bytes);
    writeFileSync(
      join(dir, 'README.md'),
      `# ${name}\n\n${NOTE} Made from the config schema and processor files of ${spec.real}.\n\n${spec.note}\n`,
    );
    manifest[name] = { 'model.safetensors': sha256(bytes) };
  }
  return manifest;
}

// `npx tsx scripts/make-tiny-qwen.ts <dir>`: only these checkpoints (bench/gpu/on-device.sh checks a GPU's
// answers on them against the goldens); `npm run make:tiny` writes them with the rest.
if (isScript('make-tiny-qwen')) {
  const out = process.argv[2];
  if (!out) throw new Error('usage: make-tiny-qwen <output directory>');
  makeTinyQwen(out);
}
