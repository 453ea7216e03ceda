// ONNX exports of tiny SmolVLM and Qwen-VL checkpoints for the CPU backend (onnxruntime), in the layout
// transformers.js and the onnx-community exports use: <model>/onnx/{vision_encoder,embed_tokens,
// decoder_model_merged}.onnx (f32, no dtype suffix). Built from the checkpoint's own safetensors by
// scripts/onnx/idefics3-onnx.ts and qwen-onnx.ts / qwen-vision-onnx.ts: no Python, no download. `npm run make:tiny` runs it after the checkpoints; by hand:
//
//   npx tsx scripts/make-tiny-onnx.ts [--if-missing] [model-dir ...]
//
// Without directories it exports ONNX_MODELS under public/models/. onnx/manifest.json records the sha256 of
// the weights each export came from, so a changed checkpoint is exported again (--if-missing skips current
// ones).

import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { halfToFloat } from '../src/kernels/f16';
import type { GraphBuilder } from './onnx/onnx-graph';
import { decoderGraph, embedTokensGraph, visionEncoderGraph } from './onnx/idefics3-onnx';
import type { WeightReader } from './onnx/onnx-layers';
import { qwenDecoderGraph, qwenEmbedTokensGraph } from './onnx/qwen-onnx';
import { qwenVisionEncoderGraph } from './onnx/qwen-vision-onnx';
import { sha256 } from './tiny-weights';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The tiny checkpoints exported: a separate lm_head (BF16), tied embeddings in two F16 shards, small heads
 * with 3 query heads per KV head, SmolVLM2's video checkpoint (video on the CPU backend), and both Qwen-VL
 * families (Qwen2.5-VL: biases, windows, a tied head; Qwen3-VL: q/k norms, DeepStack, a separate head).
 */
export const ONNX_MODELS = [
  'smolvlm-tiny',
  'smolvlm-tiny-tied',
  'smolvlm-tiny-hd8',
  'smolvlm2-video-tiny',
  'qwen2_5_vl-tiny',
  'qwen3_vl-tiny',
];

const RECIPE_FILES = [
  'scripts/make-tiny-onnx.ts',
  'scripts/onnx/idefics3-onnx.ts',
  'scripts/onnx/qwen-onnx.ts',
  'scripts/onnx/qwen-vision-onnx.ts',
  'scripts/onnx/onnx-graph.ts',
  'scripts/onnx/onnx-layers.ts',
  'src/kernels/rope-tables.ts',
];

/** The three graphs of a checkpoint, by its config's model_type. */
function graphsOf(config: Record<string, any>, read: WeightReader): Array<[string, GraphBuilder]> {
  if (config.model_type === 'qwen2_5_vl' || config.model_type === 'qwen3_vl') {
    return [
      ['vision_encoder.onnx', qwenVisionEncoderGraph(config, read)],
      ['embed_tokens.onnx', qwenEmbedTokensGraph(config, read)],
      ['decoder_model_merged.onnx', qwenDecoderGraph(config, read)],
    ];
  }
  return [
    ['vision_encoder.onnx', visionEncoderGraph(config, read)],
    ['embed_tokens.onnx', embedTokensGraph(config, read)],
    ['decoder_model_merged.onnx', decoderGraph(config, read)],
  ];
}

function recipeHash(): string {
  return sha256(new TextEncoder().encode(RECIPE_FILES.map((f) => readFileSync(join(root, f), 'utf8')).join('\0')));
}

/** Every tensor of the checkpoint's safetensors files, widened to float32. */
export function checkpointReader(dir: string): { read: WeightReader; digest: string } {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.safetensors'))
    .sort();
  if (files.length === 0) throw new Error(`${dir} holds no .safetensors file`);
  const tensors = new Map<string, { file: Uint8Array; dtype: string; shape: number[]; begin: number; end: number }>();
  const digests: string[] = [];
  for (const f of files) {
    const bytes = new Uint8Array(readFileSync(join(dir, f)));
    digests.push(sha256(bytes));
    const n = Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true));
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
    const data = bytes.subarray(8 + n);
    for (const [name, info] of Object.entries<{ dtype: string; shape: number[]; data_offsets: [number, number] }>(header)) {
      if (name === '__metadata__') continue;
      tensors.set(name, { file: data, dtype: info.dtype, shape: info.shape, begin: info.data_offsets[0], end: info.data_offsets[1] });
    }
  }
  const read: WeightReader = (name) => {
    const t = tensors.get(name);
    if (!t) throw new Error(`${dir} has no tensor ${name}`);
    const raw = t.file.slice(t.begin, t.end);
    const view = new DataView(raw.buffer);
    const count = t.shape.reduce((a, b) => a * b, 1);
    const out = new Float32Array(count);
    if (t.dtype === 'F32') out.set(new Float32Array(raw.buffer));
    else if (t.dtype === 'BF16') for (let i = 0; i < count; i++) out[i] = bf16(view.getUint16(2 * i, true));
    else if (t.dtype === 'F16') for (let i = 0; i < count; i++) out[i] = halfToFloat(view.getUint16(2 * i, true));
    else throw new Error(`${name} is ${t.dtype}; the export reads F32, BF16 and F16`);
    return { data: out, shape: t.shape };
  };
  return { read, digest: sha256(new TextEncoder().encode(digests.join(','))) };
}

const bf16Scratch = new DataView(new ArrayBuffer(4));
function bf16(bits: number): number {
  bf16Scratch.setUint32(0, bits << 16);
  return bf16Scratch.getFloat32(0);
}

/** Whether `dir`'s ONNX export exists and was made by the current recipe (the weights are checked on export). */
export function onnxExportCurrent(dir: string): boolean {
  const path = join(dir, 'onnx', 'manifest.json');
  if (!existsSync(path)) return false;
  const m = JSON.parse(readFileSync(path, 'utf8'));
  return m.recipe === recipeHash() && Object.keys(m.files ?? {}).every((f) => existsSync(join(dir, 'onnx', f)));
}

export function exportTinyOnnx(dir: string, options: { ifMissing?: boolean; log?: (s: string) => void } = {}): boolean {
  const log = options.log ?? ((s: string) => console.log(s));
  const config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
  const { read, digest } = checkpointReader(dir);
  const recipe = recipeHash();
  const out = join(dir, 'onnx');
  const manifestPath = join(out, 'manifest.json');
  if (options.ifMissing && existsSync(manifestPath)) {
    const m = JSON.parse(readFileSync(manifestPath, 'utf8'));
    if (m.weights === digest && m.recipe === recipe) return false;
  }
  mkdirSync(out, { recursive: true });
  const files: Record<string, { bytes: number; sha256: string }> = {};
  for (const [file, graph] of graphsOf(config, read)) {
    const bytes = graph.encode();
    writeFileSync(join(out, file), bytes);
    files[file] = { bytes: bytes.length, sha256: sha256(bytes) };
  }
  writeFileSync(
    manifestPath,
    `${JSON.stringify({ about: 'ONNX export made by scripts/make-tiny-onnx.ts (f32, opset 17) from this checkpoint', weights: digest, recipe, files }, null, 2)}\n`,
  );
  log(
    `[make-tiny-onnx] ${dir}/onnx: ${Object.entries(files)
      .map(([f, m]) => `${f} ${(m.bytes / 2 ** 20).toFixed(1)} MiB`)
      .join(', ')}`,
  );
  return true;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const ifMissing = args.includes('--if-missing');
  const dirs = args.filter((a) => !a.startsWith('--'));
  for (const dir of dirs.length > 0 ? dirs : ONNX_MODELS.map((m) => join(root, 'public/models', m))) exportTinyOnnx(dir, { ifMissing });
}
