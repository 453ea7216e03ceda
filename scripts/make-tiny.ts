// `npm run make:tiny`: writes deterministic random-weight SmolVLM checkpoints in exactly the Hugging Face
// layout, at reduced sizes, with the real SmolVLM-256M tokenizer, chat template and processor files.
// Tests, `npm start` and the demo page use them; nothing is downloaded. THE WEIGHTS ARE RANDOM: the
// model's answers are noise, by design. Output (default public/models/):
//
//   smolvlm-tiny/        model_type idefics3, separate lm_head, BF16, one model.safetensors,
//                        chat_template.json (SmolVLM-256M-Instruct's own files)
//   smolvlm-tiny-tied/   model_type smolvlm, tied embeddings, F16, two shards + model.safetensors.index.json,
//                        chat_template.jinja (the loader's other variants)
//   and the head sizes and patch sizes of the other SmolVLM / Idefics3 checkpoints, at tiny width:
//   smolvlm-tiny-so400m/ the SigLIP so400m layout of SmolVLM-Instruct / SmolVLM2-2.2B: vision head_dim 72
//                        (144 / 2 heads), patch 14 over 126 px tiles (9 x 9 patches), scale_factor 3 (9
//                        image tokens per tile), model_type smolvlm, BF16
//   smolvlm-tiny-hd128/  text head_dim 128 (Idefics3-8B's), 2 heads / 1 kv head, BF16
//   smolvlm-tiny-hd8/    small heads: vision head_dim 16 (64 / 4), text head_dim 8 (12 heads / 4 kv), F16
//
// Every value comes from a PRNG seeded by the tensor's name, so the files are byte-identical on every
// run; manifest.json records their sha256 so goldens made from them can detect drift. index.json lists
// each checkpoint's files and what it is, for the demo's model picker (which then requests no file that
// is absent: see UrlSourceOptions.files).

import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeSafetensors, type TensorToWrite } from '../src/model/weights/safetensors-writer';
import { makeTinyAudio, TINY_AUDIO } from './make-tiny-audio';
import { exportTinyOnnx, ONNX_MODELS, onnxExportCurrent } from './make-tiny-onnx';
import { makeTinyQwen, TINY_QWEN } from './make-tiny-qwen';
import { makeTinyVideo, TINY_VIDEO } from './make-tiny-video';
import { sha256, tensorsFor, tinyConfig, TINY, writeJson, type TinySizes } from './tiny-weights';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const REAL = join(root, 'test/fixtures/models/SmolVLM-256M-Instruct');
const TOKENIZER_FILES = [
  'tokenizer.json',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'added_tokens.json',
  'generation_config.json',
];

/** The head- and patch-size variants: each has its own PyTorch goldens. */
export const TINY_SHAPES: Record<string, { sizes: TinySizes; modelType: string; dtype: TensorToWrite['dtype']; note: string }> = {
  'smolvlm-tiny-so400m': {
    sizes: {
      vision: { hidden_size: 144, intermediate_size: 288, num_hidden_layers: 2, num_attention_heads: 2, image_size: 126, patch_size: 14 },
      text: TINY.text,
      scale_factor: 3,
      max_image_size: 126,
      longest_edge: 504,
    },
    modelType: 'smolvlm',
    dtype: 'BF16',
    note: 'The SigLIP so400m layout (SmolVLM-Instruct, SmolVLM2-2.2B) at tiny width: vision head_dim 72, patch 14, 126 px tiles of 9 x 9 patches, scale_factor 3. BF16.',
  },
  'smolvlm-tiny-hd128': {
    sizes: {
      ...TINY,
      text: { ...TINY.text, hidden_size: 256, intermediate_size: 512, num_attention_heads: 2, num_key_value_heads: 1, head_dim: 128 },
    },
    modelType: 'idefics3',
    dtype: 'BF16',
    note: 'Text head_dim 128 (Idefics3-8B): 2 heads, 1 kv head. BF16.',
  },
  'smolvlm-tiny-hd8': {
    sizes: {
      ...TINY,
      vision: { ...TINY.vision, hidden_size: 64, intermediate_size: 128, num_attention_heads: 4 },
      text: { ...TINY.text, hidden_size: 96, intermediate_size: 192, num_attention_heads: 12, num_key_value_heads: 4, head_dim: 8 },
    },
    modelType: 'idefics3',
    dtype: 'F16',
    note: 'Small heads: vision head_dim 16 (64 / 4 heads), text head_dim 8 (12 heads, 4 kv heads). F16.',
  },
};

function copyProcessorFiles(dir: string, sizes: TinySizes = TINY): void {
  for (const f of TOKENIZER_FILES) copyFileSync(join(REAL, f), join(dir, f));
  const pre = JSON.parse(readFileSync(join(REAL, 'preprocessor_config.json'), 'utf8'));
  pre.max_image_size = { longest_edge: sizes.max_image_size };
  pre.size = { longest_edge: sizes.longest_edge };
  writeJson(join(dir, 'preprocessor_config.json'), pre);
  const patches = Math.floor(sizes.vision.image_size / sizes.vision.patch_size);
  writeJson(join(dir, 'processor_config.json'), {
    image_seq_len: (patches / sizes.scale_factor) ** 2,
    processor_class: 'Idefics3Processor',
  });
}

function readme(name: string, notes: string): string {
  return `# ${name}\n\nRandom weights at reduced sizes, made by \`npm run make:tiny\` from the real SmolVLM-256M-Instruct\nconfig schema, tokenizer and processor files. **Not a trained model: its answers are noise.**\n\n${notes}\n`;
}

/** One entry of public/models/index.json. */
export interface BundledModel {
  /** Folder name under public/models/. */
  id: string;
  description: string;
  /** Every file in the folder. */
  files: string[];
}

/** Both outputs are there (manifest.json for the goldens, index.json for the demo). */

export function makeTiny(outDir: string): Record<string, Record<string, string>> {
  const base = JSON.parse(readFileSync(join(REAL, 'config.json'), 'utf8'));
  const manifest: Record<string, Record<string, string>> = {};
  const descriptions: Record<string, string> = {
    'smolvlm-tiny': 'SmolVLM-shaped, tiny, random weights (idefics3, BF16, one file)',
    'smolvlm-tiny-tied': 'SmolVLM-shaped, tiny, random weights (smolvlm, tied embeddings, F16, two shards)',
    [TINY_VIDEO.name]: 'SmolVLM2-shaped, tiny, random weights, takes video (smolvlm, video_sampling)',
  };

  // 1. idefics3, separate lm_head, BF16, single file, chat_template.json
  {
    const dir = join(outDir, 'smolvlm-tiny');
    mkdirSync(dir, { recursive: true });
    const config = tinyConfig(base, 'idefics3', false);
    writeJson(join(dir, 'config.json'), config);
    copyProcessorFiles(dir);
    copyFileSync(join(REAL, 'chat_template.json'), join(dir, 'chat_template.json'));
    const bytes = writeSafetensors(tensorsFor(config, 'BF16'), { format: 'pt' });
    writeFileSync(join(dir, 'model.safetensors'), bytes);
    writeFileSync(join(dir, 'README.md'), readme('smolvlm-tiny', 'idefics3, separate lm_head, BF16, one model.safetensors.'));
    manifest['smolvlm-tiny'] = { 'model.safetensors': sha256(bytes) };
  }

  // 2. smolvlm, tied embeddings, F16, two shards + index, chat_template.jinja
  {
    const dir = join(outDir, 'smolvlm-tiny-tied');
    mkdirSync(dir, { recursive: true });
    const config = tinyConfig(base, 'smolvlm', true);
    delete config.torch_dtype;
    config.dtype = 'float16';
    writeJson(join(dir, 'config.json'), config);
    copyProcessorFiles(dir);
    const template = JSON.parse(readFileSync(join(REAL, 'chat_template.json'), 'utf8')).chat_template as string;
    writeFileSync(join(dir, 'chat_template.jinja'), template);
    const tensors = tensorsFor(config, 'F16');
    const half = Math.ceil(tensors.length / 2);
    const shards = [tensors.slice(0, half), tensors.slice(half)];
    const weightMap: Record<string, string> = {};
    manifest['smolvlm-tiny-tied'] = {};
    let totalSize = 0;
    shards.forEach((shard, i) => {
      const file = `model-0000${i + 1}-of-00002.safetensors`;
      const bytes = writeSafetensors(shard, { format: 'pt' });
      writeFileSync(join(dir, file), bytes);
      manifest['smolvlm-tiny-tied'][file] = sha256(bytes);
      for (const t of shard) {
        weightMap[t.name] = file;
        totalSize += t.data.length * 2;
      }
    });
    writeJson(join(dir, 'model.safetensors.index.json'), { metadata: { total_size: totalSize }, weight_map: weightMap });
    writeFileSync(
      join(dir, 'README.md'),
      readme('smolvlm-tiny-tied', 'model_type smolvlm, tied embeddings (no lm_head.weight), F16, two shards, chat_template.jinja.'),
    );
  }
  // 3. the head- and patch-size variants: one BF16 or F16 model.safetensors each, separate lm_head
  for (const [name, variant] of Object.entries(TINY_SHAPES)) {
    const dir = join(outDir, name);
    mkdirSync(dir, { recursive: true });
    const config = tinyConfig(base, variant.modelType, false, variant.sizes);
    writeJson(join(dir, 'config.json'), config);
    copyProcessorFiles(dir, variant.sizes);
    copyFileSync(join(REAL, 'chat_template.json'), join(dir, 'chat_template.json'));
    const bytes = writeSafetensors(tensorsFor(config, variant.dtype), { format: 'pt' });
    writeFileSync(join(dir, 'model.safetensors'), bytes);
    writeFileSync(join(dir, 'README.md'), readme(name, variant.note));
    manifest[name] = { 'model.safetensors': sha256(bytes) };
    descriptions[name] = `tiny, random weights: ${variant.note}`;
  }
  // 4. the SmolVLM2 video checkpoint (scripts/make-tiny-video.ts)
  manifest[TINY_VIDEO.name] = makeTinyVideo(outDir);
  // 5. the Voxtral audio checkpoints (scripts/make-tiny-audio.ts)
  for (const [name, files] of Object.entries(makeTinyAudio(outDir))) {
    manifest[name] = files;
    descriptions[name] = `tiny, random weights, takes audio: ${TINY_AUDIO[name].note}`;
  }
  // 6. the Qwen-VL checkpoints (scripts/make-tiny-qwen.ts)
  Object.assign(manifest, makeTinyQwen(outDir));
  for (const [name, spec] of Object.entries(TINY_QWEN)) descriptions[name] = `tiny, random weights: ${spec.note}`;
  writeJson(join(outDir, 'manifest.json'), manifest);
  // 7. ONNX exports of some of them, for the CPU backend (scripts/make-tiny-onnx.ts)
  for (const name of ONNX_MODELS) exportTinyOnnx(join(outDir, name), { log: () => {} });
  const models: BundledModel[] = Object.keys(manifest).map((id) => ({
    id,
    description: descriptions[id],
    files: listFiles(join(outDir, id)),
  }));
  writeJson(join(outDir, 'index.json'), { models });
  return manifest;
}

/** Every file under `dir`, as paths relative to it ('onnx/embed_tokens.onnx'), sorted. */
function listFiles(dir: string, prefix = ''): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true })
    .flatMap((e) => (e.isDirectory() ? listFiles(dir, `${prefix}${e.name}/`) : [`${prefix}${e.name}`]))
    .sort();
}

/** Every checkpoint makeTiny writes (the manifest's keys). */
export const TINY_MODELS = [
  'smolvlm-tiny',
  'smolvlm-tiny-tied',
  ...Object.keys(TINY_SHAPES),
  TINY_VIDEO.name,
  ...Object.keys(TINY_AUDIO),
  ...Object.keys(TINY_QWEN),
];

/** True when `outDir` has a manifest naming every tiny checkpoint and each one's files, and the demo's index listing each. */
export function tinyModelsPresent(outDir: string): boolean {
  const path = join(outDir, 'manifest.json');
  if (!existsSync(path) || !existsSync(join(outDir, 'index.json'))) return false;
  const manifest = JSON.parse(readFileSync(path, 'utf8')) as Record<string, Record<string, string>>;
  const listed = new Set((JSON.parse(readFileSync(join(outDir, 'index.json'), 'utf8')).models as BundledModel[]).map((m) => m.id));
  return (
    TINY_MODELS.every((m) => listed.has(m)) &&
    TINY_MODELS.every((m) => manifest[m] && Object.keys(manifest[m]).every((f) => existsSync(join(outDir, m, f)))) &&
    ONNX_MODELS.every((m) => onnxExportCurrent(join(outDir, m)))
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const outArg = process.argv.indexOf('--out');
  const outDir = resolve(root, outArg > 0 ? process.argv[outArg + 1] : 'public/models');
  if (process.argv.includes('--if-missing') && tinyModelsPresent(outDir)) process.exit(0);
  const t0 = performance.now();
  const manifest = makeTiny(outDir);
  console.log(
    `wrote ${Object.keys(manifest).join(', ')} to ${outDir} in ${((performance.now() - t0) / 1000).toFixed(1)} s (random weights)`,
  );
}
