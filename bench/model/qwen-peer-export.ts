// The transformers.js peer's copy of a Qwen-VL bench checkpoint (scripts/make-bench-qwen.ts): the same
// random weights as ONNX graphs in transformers.js 4.3.1's Qwen-VL layout (scripts/onnx/qwen-onnx.ts,
// qwen-vision-onnx.ts), float32, cut so onnxruntime-web's WebGPU EP can hold them on an adapter whose
// maxBufferSize is 1 GiB (SwiftShader's):
//   - every weight in external-data files of at most 1 GiB (`<graph>.onnx_data`, `_data_1`, ...; a 2 GB
//     protobuf could not hold the 151936 × 2048 head and four layers);
//   - the embedding table and the head in two row parts of 622 MB (1.2 GB each whole);
//   - the vision tower's attention in 4 groups of heads (a 1280 × 720 image's 4784 patches make 1.46 GB
//     of scores over 16 heads at once).
// The math is unchanged by the cuts (test/cpu/qwen-onnx-cut.test.ts holds them to the whole graphs).
// Qwen3-VL's decoder has no DeepStack input (transformers.js 4.3.1 feeds none), so that peer runs the
// model's speed, not its answers; its vision graph still computes the DeepStack levels, as ours does.
//
//   .cache/bench-models/<checkpoint>-peer/
//     config.json (the checkpoint's, with transformers.js_config.use_external_data_format naming each
//     graph's data file count, and Qwen2.5-VL's text keys also as a text_config: withTextConfig),
//     preprocessor_config.json, onnx/*.onnx + *.onnx_data*, manifest.json
//
// Skipped when manifest.json records the same recipe (these files' sources) and source weights.

import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { checkpointReader } from '../../scripts/make-tiny-onnx';
import type { GraphBuilder } from '../../scripts/onnx/onnx-graph';
import { qwenDecoderGraph, qwenEmbedTokensGraph } from '../../scripts/onnx/qwen-onnx';
import { qwenVisionEncoderGraph } from '../../scripts/onnx/qwen-vision-onnx';
import { writeOnnx } from '../../scripts/onnx/write-onnx';

const MAX_FILE_BYTES = 2 ** 30;
/** Two even parts of the 151936-row table at hidden 2048 (622 MB each, under 1 GiB). */
const MAX_WEIGHT_BYTES = 768 * 2 ** 20;
const HEAD_GROUPS = 4;

const RECIPE_SOURCES = [
  'bench/model/qwen-peer-export.ts',
  'scripts/onnx/onnx-graph.ts',
  'scripts/onnx/onnx-layers.ts',
  'scripts/onnx/qwen-onnx.ts',
  'scripts/onnx/qwen-vision-onnx.ts',
  'scripts/onnx/write-onnx.ts',
];

export interface PeerExport {
  /** The folder served to the page (its name is the transformers.js model id). */
  dir: string;
  /** Bytes of each written file, by name under onnx/. */
  files: Record<string, number>;
  /** Seconds the export took (0 when the copy was current). */
  seconds: number;
}

/**
 * transformers.js 4.3.1 reads a Qwen-VL decoder's sizes from config.text_config (configs.js
 * getNormalizedConfig). Qwen2.5-VL-3B-Instruct's own config.json keeps them at the top level, as older
 * transformers wrote it; newer transformers saves the same config with a text_config of model_type
 * 'qwen2_5_vl_text' built from those keys (Qwen2_5_VLConfig), which is what is written here.
 */
function withTextConfig(config: Record<string, any>): Record<string, any> {
  if (config.text_config || config.model_type !== 'qwen2_5_vl') return config;
  const text = Object.fromEntries(Object.entries(config).filter(([k]) => !['architectures', 'model_type', 'vision_config'].includes(k)));
  return { ...config, text_config: { ...text, model_type: 'qwen2_5_vl_text' } };
}

function recipe(repoRoot: string): string {
  const h = createHash('sha256');
  for (const f of RECIPE_SOURCES)
    h.update(f)
      .update('\0')
      .update(readFileSync(join(repoRoot, f)))
      .update('\0');
  return h.digest('hex');
}

/** The peer's export of the bench checkpoint in `source`, written beside it unless a current copy is there. */
export function ensureQwenPeerExport(source: string, repoRoot: string, log: (line: string) => void): PeerExport {
  const dir = `${source}-peer`;
  const manifestPath = join(dir, 'manifest.json');
  const weights = JSON.parse(readFileSync(join(source, 'manifest.json'), 'utf8')).files['model.safetensors'] as string;
  const want = recipe(repoRoot);
  if (existsSync(manifestPath)) {
    const m = JSON.parse(readFileSync(manifestPath, 'utf8'));
    if (m.recipe === want && m.weights === weights) {
      log(`peer export: ${dir} is current, not rewritten`);
      return { dir, files: m.files, seconds: 0 };
    }
  }
  log(`peer export: writing ${dir} (float32 ONNX in transformers.js's Qwen-VL layout, external data) ...`);
  const t0 = performance.now();
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'onnx'), { recursive: true });
  const config = JSON.parse(readFileSync(join(source, 'config.json'), 'utf8'));
  const { read } = checkpointReader(source);
  const files: Record<string, number> = {};
  const chunks: Record<string, number> = {};
  const graphs: Array<[string, () => GraphBuilder]> = [
    ['vision_encoder.onnx', () => qwenVisionEncoderGraph(config, read, { headGroups: HEAD_GROUPS })],
    ['embed_tokens.onnx', () => qwenEmbedTokensGraph(config, read, { maxWeightBytes: MAX_WEIGHT_BYTES })],
    ['decoder_model_merged.onnx', () => qwenDecoderGraph(config, read, { maxWeightBytes: MAX_WEIGHT_BYTES, deepstack: false })],
  ];
  // One graph at a time: the decoder's float32 weights alone are 2.5 GB at Qwen2.5-VL-3B's widths.
  for (const [name, build] of graphs) {
    const written = writeOnnx(join(dir, 'onnx'), name, build(), { external: true, maxFileBytes: MAX_FILE_BYTES }).bytes;
    Object.assign(files, written);
    chunks[name] = Object.keys(written).length - 1;
    log(
      `peer export: ${name} and ${chunks[name]} data file(s), ${(Object.values(written).reduce((a, b) => a + b, 0) / 2 ** 20).toFixed(0)} MiB`,
    );
  }
  writeFileSync(
    join(dir, 'config.json'),
    `${JSON.stringify({ ...withTextConfig(config), 'transformers.js_config': { use_external_data_format: chunks } }, null, 2)}\n`,
  );
  copyFileSync(join(source, 'preprocessor_config.json'), join(dir, 'preprocessor_config.json'));
  writeFileSync(manifestPath, `${JSON.stringify({ recipe: want, weights, files }, null, 2)}\n`);
  const seconds = (performance.now() - t0) / 1000;
  log(`peer export: written in ${seconds.toFixed(1)} s`);
  return { dir, files, seconds };
}
