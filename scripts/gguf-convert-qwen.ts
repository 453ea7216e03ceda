// A Qwen2.5-VL or Qwen3-VL checkpoint folder written as the GGUF pair llama.cpp's convert_hf_to_gguf.py
// makes of it (Qwen2VLModel / Qwen3VLTextModel for the decoder, Qwen2VLVisionModel / Qwen3VLVisionModel for
// --mmproj), with the repository's own writer (the layouts: src/families/qwen-gguf.ts and the families'
// gguf.ts). What the files cannot carry (Qwen2.5-VL's window size, the image processor's pixel budget) is
// what llama.cpp assumes: a checkpoint that differs there is not representable, and the tests convert
// copies of the tiny checkpoints that keep those values.
//
//   tsx scripts/gguf-convert-qwen.ts <checkpoint dir> <out dir> [type, as scripts/gguf-convert.ts]

import { mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseModelConfig } from '../src/families/registry';
import { type GgufEntry, ggmlType } from '../src/model/weights/gguf/gguf-format';
import type { GgufTensorToWrite } from '../src/model/weights/gguf/gguf-writer';
import { type ConvertedGguf, type ConvertType, readJson, readTensors, tokenizerEntries, typeFor, writeGgufFile } from './gguf-convert';
import { isScript } from './run-as-script';

/** HF decoder name → GGUF name (the decoder's prefix: model or model.language_model). */
function textName(hf: string, prefix: string): string | undefined {
  if (hf === 'lm_head.weight') return 'output.weight';
  if (hf === `${prefix}.embed_tokens.weight`) return 'token_embd.weight';
  if (hf === `${prefix}.norm.weight`) return 'output_norm.weight';
  const m = new RegExp(`^${prefix.replace('.', '\\.')}\\.layers\\.(\\d+)\\.(.+)\\.(weight|bias)$`).exec(hf);
  if (!m) return undefined;
  const block: Record<string, string> = {
    input_layernorm: 'attn_norm',
    post_attention_layernorm: 'ffn_norm',
    'self_attn.q_proj': 'attn_q',
    'self_attn.k_proj': 'attn_k',
    'self_attn.v_proj': 'attn_v',
    'self_attn.o_proj': 'attn_output',
    'self_attn.q_norm': 'attn_q_norm',
    'self_attn.k_norm': 'attn_k_norm',
    'mlp.gate_proj': 'ffn_gate',
    'mlp.up_proj': 'ffn_up',
    'mlp.down_proj': 'ffn_down',
  };
  return block[m[2]] ? `blk.${m[1]}.${block[m[2]]}.${m[3]}` : undefined;
}

/** HF tower name → GGUF name(s), with the converter's splits (the Conv3d taps; Qwen2.5-VL's qkv). */
function visionNames(hf: string, prefix: string, qwen3: boolean, taps: readonly number[]): string[] {
  const rest = hf.startsWith(`${prefix}.`) ? hf.slice(prefix.length + 1) : undefined;
  if (!rest) return [];
  if (rest === 'patch_embed.proj.weight') return ['v.patch_embd.weight', 'v.patch_embd.weight.1'];
  if (rest === 'patch_embed.proj.bias') return ['v.patch_embd.bias'];
  if (rest === 'pos_embed.weight') return ['v.position_embd.weight'];
  const merger: Record<string, string> = qwen3
    ? { 'merger.norm': 'v.post_ln', 'merger.linear_fc1': 'mm.0', 'merger.linear_fc2': 'mm.2' }
    : { 'merger.ln_q': 'v.post_ln', 'merger.mlp.0': 'mm.0', 'merger.mlp.2': 'mm.2' };
  const m = /^(.*)\.(weight|bias)$/.exec(rest);
  if (!m) return [];
  if (merger[m[1]]) return [`${merger[m[1]]}.${m[2]}`];
  const deep = /^deepstack_merger_list\.(\d+)\.(norm|linear_fc1|linear_fc2)$/.exec(m[1]);
  if (deep) return [`v.deepstack.${taps[Number(deep[1])]}.${{ norm: 'norm', linear_fc1: 'fc1', linear_fc2: 'fc2' }[deep[2]]}.${m[2]}`];
  const b = /^blocks\.(\d+)\.(.+)$/.exec(m[1]);
  if (!b) return [];
  const block: Record<string, string> = {
    'attn.proj': 'attn_out',
    norm1: 'ln1',
    norm2: 'ln2',
    'mlp.gate_proj': 'ffn_gate',
    'mlp.up_proj': 'ffn_up',
    'mlp.down_proj': 'ffn_down',
    'mlp.linear_fc1': 'ffn_up',
    'mlp.linear_fc2': 'ffn_down',
  };
  if (b[2] === 'attn.qkv')
    return qwen3 ? [`v.blk.${b[1]}.attn_qkv.${m[2]}`] : ['q', 'k', 'v'].map((x) => `v.blk.${b[1]}.attn_${x}.${m[2]}`);
  return block[b[2]] ? [`v.blk.${b[1]}.${block[b[2]]}.${m[2]}`] : [];
}

/** Part `index` of `count` equal slices along `axis` of a tensor. */
function slice(values: Float32Array, shape: readonly number[], axis: number, index: number, count: number): Float32Array {
  const outer = shape.slice(0, axis).reduce((a, b) => a * b, 1);
  const inner = shape.slice(axis + 1).reduce((a, b) => a * b, 1);
  const part = (shape[axis] / count) * inner;
  const out = new Float32Array(outer * part);
  for (let o = 0; o < outer; o++)
    out.set(values.subarray(o * shape[axis] * inner + index * part, o * shape[axis] * inner + (index + 1) * part), o * part);
  return out;
}

/** Writes the pair for the Qwen-VL checkpoint in `dir` into `outDir`; returns the file names. */
export async function convertQwenToGguf(dir: string, outDir: string, wanted: ConvertType = 'F16'): Promise<ConvertedGguf> {
  const raw = readJson(dir, 'config.json');
  const config = parseModelConfig(raw);
  const v = config.qwenVision;
  if ((config.family !== 'qwen2_5_vl' && config.family !== 'qwen3_vl') || !v)
    throw new Error(`${dir} is not a Qwen2.5-VL or Qwen3-VL checkpoint`);
  const qwen3 = v.kind === 'qwen3_vl';
  const t = config.text;
  const arch = qwen3 ? 'qwen3vl' : 'qwen2vl';
  const textPrefix = qwen3 ? 'model.language_model' : 'model';
  const taps = v.kind === 'qwen3_vl' ? v.deepstackTaps : [];
  const textRaw = (qwen3 ? raw.text_config : raw) as Record<string, unknown>;
  const pre = readJson(dir, 'preprocessor_config.json');
  const { values, shapes } = await readTensors(dir);

  const textTensors: GgufTensorToWrite[] = [];
  const visionTensors: GgufTensorToWrite[] = [];
  for (const [hf, shape] of shapes) {
    const name = textName(hf, textPrefix);
    if (name) {
      textTensors.push({ name, shape, type: ggmlType(typeFor(name, shape, wanted, false)), values: () => values.get(hf)! });
      continue;
    }
    const names = visionNames(hf, v.prefix, qwen3, taps);
    names.forEach((gguf, index) => {
      const patch = gguf.startsWith('v.patch_embd.weight');
      // The taps are [D, C, P, P] slices of the Conv3d; a split qkv is three [D, ...] row blocks.
      const partShape = patch ? shape.filter((_, i) => i !== 2) : names.length > 1 ? [shape[0] / 3, ...shape.slice(1)] : shape;
      const part = () =>
        patch
          ? slice(values.get(hf)!, shape, 2, index, 2)
          : names.length > 1
            ? slice(values.get(hf)!, shape, 0, index, 3)
            : values.get(hf)!;
      // Patch and position embeddings: F32 (F16 in an F16 file), as MmprojModel and Qwen2VLVisionModel force.
      const forced = patch ? (wanted === 'F16' ? 'F16' : 'F32') : gguf.startsWith('v.position_embd') ? 'F32' : undefined;
      const type = ggmlType(forced ?? typeFor(gguf, partShape, wanted, false));
      visionTensors.push({ name: gguf, shape: partShape, type, values: part });
    });
  }

  const section = [...(t.mrope?.section ?? []), 0].slice(0, 4);
  const textEntries: GgufEntry[] = [
    { key: 'general.architecture', type: 'string', value: arch },
    { key: 'general.name', type: 'string', value: basename(dir) },
    { key: `${arch}.block_count`, type: 'u32', value: t.numLayers },
    { key: `${arch}.context_length`, type: 'u32', value: t.maxPositions },
    { key: `${arch}.embedding_length`, type: 'u32', value: t.hiddenSize },
    { key: `${arch}.feed_forward_length`, type: 'u32', value: t.intermediateSize },
    { key: `${arch}.attention.head_count`, type: 'u32', value: t.numHeads },
    { key: `${arch}.attention.head_count_kv`, type: 'u32', value: t.numKvHeads },
    { key: `${arch}.rope.freq_base`, type: 'f32', value: t.ropeTheta },
    { key: `${arch}.attention.layer_norm_rms_epsilon`, type: 'f32', value: t.rmsNormEps },
    // The converter writes key/value lengths only when the config names head_dim.
    ...(textRaw.head_dim !== undefined
      ? [
          { key: `${arch}.attention.key_length`, type: 'u32' as const, value: t.headDim },
          { key: `${arch}.attention.value_length`, type: 'u32' as const, value: t.headDim },
        ]
      : []),
    { key: `${arch}.rope.dimension_sections`, type: 'array', itemType: 'i32', value: section },
    ...(qwen3 ? [{ key: `${arch}.n_deepstack_layers`, type: 'u32' as const, value: taps.length }] : []),
    ...tokenizerEntries(dir, t.vocabSize, 'qwen2'),
  ];
  const visionEntries: GgufEntry[] = [
    { key: 'general.architecture', type: 'string', value: 'clip' },
    { key: 'general.name', type: 'string', value: basename(dir) },
    { key: 'clip.has_vision_encoder', type: 'bool', value: true },
    { key: 'clip.projector_type', type: 'string', value: qwen3 ? 'qwen3vl_merger' : 'qwen2.5vl_merger' },
    { key: 'clip.vision.projection_dim', type: 'u32', value: t.hiddenSize },
    {
      key: 'clip.vision.image_size',
      type: 'u32',
      value:
        v.kind === 'qwen3_vl'
          ? v.gridPerSide * v.patchSize
          : (((raw.vision_config as Record<string, unknown>).image_size as number) ?? 560),
    },
    { key: 'clip.vision.patch_size', type: 'u32', value: v.patchSize },
    { key: 'clip.vision.embedding_length', type: 'u32', value: v.hiddenSize },
    { key: 'clip.vision.feed_forward_length', type: 'u32', value: v.intermediateSize },
    { key: 'clip.vision.block_count', type: 'u32', value: v.numLayers },
    { key: 'clip.vision.attention.head_count', type: 'u32', value: v.numHeads },
    { key: 'clip.vision.image_mean', type: 'array', itemType: 'f32', value: pre.image_mean as number[] },
    { key: 'clip.vision.image_std', type: 'array', itemType: 'f32', value: pre.image_std as number[] },
    { key: 'clip.vision.attention.layer_norm_epsilon', type: 'f32', value: t.rmsNormEps },
    ...(v.kind === 'qwen3_vl'
      ? [
          { key: 'clip.use_gelu', type: 'bool' as const, value: true },
          { key: 'clip.vision.spatial_merge_size', type: 'u32' as const, value: v.mergeSize },
          {
            key: 'clip.vision.is_deepstack_layers',
            type: 'array' as const,
            itemType: 'bool' as const,
            value: Array.from({ length: v.numLayers }, (_, i) => taps.includes(i)),
          },
        ]
      : [
          { key: 'clip.use_silu', type: 'bool' as const, value: true },
          { key: 'clip.vision.n_wa_pattern', type: 'u32' as const, value: v.fullAttentionLayers[0] + 1 },
        ]),
  ];
  mkdirSync(outDir, { recursive: true });
  const name = basename(dir);
  const files = { model: `${name}-${wanted}.gguf`, mmproj: `mmproj-${name}-${wanted}.gguf` };
  await writeGgufFile(join(outDir, files.model), textEntries, textTensors);
  await writeGgufFile(join(outDir, files.mmproj), visionEntries, visionTensors);
  return files;
}

if (isScript('gguf-convert-qwen')) {
  const [dir, out, type = 'F16'] = process.argv.slice(2);
  if (!dir || !out) {
    console.error('usage: tsx scripts/gguf-convert-qwen.ts <checkpoint dir> <out dir> [type]');
    process.exit(2);
  }
  const files = await convertQwenToGguf(dir, out, type as ConvertType);
  console.log(`wrote ${join(out, files.model)} and ${join(out, files.mmproj)}`);
}
