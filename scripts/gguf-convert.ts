// A SmolVLM (Idefics3) checkpoint folder written as the GGUF pair llama.cpp's convert_hf_to_gguf.py makes of
// it (its LlamaModel for the decoder, SmolVLMModel for --mmproj), with the repository's own GGUF writer:
// the tiny test checkpoints and benchmark models in GGUF form.
//
//   <name>.gguf          general.architecture llama: llama.* hyper-parameters, the tokenizer (gpt2 / smollm),
//                        model.text_model.* and lm_head as blk.N.* / token_embd / output_norm / output,
//                        q_proj and k_proj rows reordered per head for llama.cpp's adjacent-pair RoPE
//   mmproj-<name>.gguf   general.architecture clip, projector idefics3: clip.vision.* and the tower + connector
//
// Tensor types as the converter chooses them: 1-D tensors, *_norm weights and the vision embeddings in F32;
// every other matrix in the requested type, or F16 when its rows are not whole blocks of that type. The
// K-quant types are what llama-quantize makes of such a file (Q4_K_M: its mix, simplified). An mmproj is
// written as llama.cpp's converter writes one (its --outtype offers F32, F16, BF16 and Q8_0; llama-quantize
// quantizes the model file, not the mmproj): another requested type gives an F16 mmproj, as the pairs
// published beside a Q4_K_M model are.
//
//   tsx scripts/gguf-convert.ts <checkpoint dir> <out dir> [F32|F16|BF16|Q8_0|Q4_0|Q4_1|Q5_0|Q5_1|Q4_K|Q5_K|Q6_K|Q4_K_M]

import { closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { parseModelConfig } from '../src/families/registry';
import { qwen2BpeToTokenizerJson } from '../src/processor/qwen2-bpe';
import { type GgmlTypeName, type GgufEntry, ggmlType } from '../src/model/weights/gguf/gguf-format';
import { ggufChunks, type GgufTensorToWrite } from '../src/model/weights/gguf/gguf-writer';
import { parseSafetensorsHeader, readHeaderSize, type TensorInfo, toFloat32 } from '../src/model/weights/safetensors';
import { isScript } from './run-as-script';

type Json = Record<string, unknown>;
export const readJson = (dir: string, name: string): Json => JSON.parse(readFileSync(join(dir, name), 'utf8'));

/** llama.cpp's LlamaModel.permute: within each head of D rows, HF row j·D/2 + i goes to row 2i + j. */
export function permuteRows(values: Float32Array, rows: number, heads: number): Float32Array {
  const K = values.length / rows;
  const D = rows / heads;
  const out = new Float32Array(values.length);
  for (let h = 0; h < heads; h++) {
    for (let j = 0; j < 2; j++) {
      for (let i = 0; i < D / 2; i++)
        out.set(values.subarray((h * D + j * (D / 2) + i) * K, (h * D + j * (D / 2) + i + 1) * K), (h * D + 2 * i + j) * K);
    }
  }
  return out;
}

/** A file type: one tensor type, or Q4_K_M: Q4_K with Q6_K for attn_v, ffn_down and output (a mix like llama-quantize's). */
export type ConvertType = GgmlTypeName | 'Q4_K_M';

/** The type the converter stores a tensor in. */
/** The types an mmproj file is written in (the tensors of its towers and projector: v.*, a.*, mm.*). */
const MMPROJ_TYPES: readonly ConvertType[] = ['F32', 'F16', 'BF16', 'Q8_0'];

export function typeFor(ggufName: string, shape: readonly number[], wanted: ConvertType, forceF32: boolean): GgmlTypeName {
  if (forceF32 || shape.length <= 1 || ggufName.endsWith('_norm.weight') || !ggufName.endsWith('.weight')) return 'F32';
  if (/^(v|a|mm)\./.test(ggufName) && !MMPROJ_TYPES.includes(wanted)) return 'F16';
  const type = wanted !== 'Q4_K_M' ? wanted : /(attn_v|ffn_down)\.weight$|^output\.weight$/.test(ggufName) ? 'Q6_K' : 'Q4_K';
  return shape[shape.length - 1] % ggmlType(type).blockValues === 0 ? type : 'F16';
}

const TEXT_NAMES: Array<[RegExp, string]> = [
  [/^model\.text_model\.embed_tokens\.(weight)$/, 'token_embd'],
  [/^model\.text_model\.norm\.(weight)$/, 'output_norm'],
  [/^lm_head\.(weight)$/, 'output'],
  [/^model\.text_model\.layers\.(\d+)\.input_layernorm\.(weight)$/, 'blk.$.attn_norm'],
  [/^model\.text_model\.layers\.(\d+)\.post_attention_layernorm\.(weight)$/, 'blk.$.ffn_norm'],
  [/^model\.text_model\.layers\.(\d+)\.self_attn\.q_proj\.(weight|bias)$/, 'blk.$.attn_q'],
  [/^model\.text_model\.layers\.(\d+)\.self_attn\.k_proj\.(weight|bias)$/, 'blk.$.attn_k'],
  [/^model\.text_model\.layers\.(\d+)\.self_attn\.v_proj\.(weight|bias)$/, 'blk.$.attn_v'],
  [/^model\.text_model\.layers\.(\d+)\.self_attn\.o_proj\.(weight)$/, 'blk.$.attn_output'],
  [/^model\.text_model\.layers\.(\d+)\.mlp\.gate_proj\.(weight)$/, 'blk.$.ffn_gate'],
  [/^model\.text_model\.layers\.(\d+)\.mlp\.up_proj\.(weight)$/, 'blk.$.ffn_up'],
  [/^model\.text_model\.layers\.(\d+)\.mlp\.down_proj\.(weight)$/, 'blk.$.ffn_down'],
];

const VISION_NAMES: Array<[RegExp, string]> = [
  [/^model\.vision_model\.embeddings\.patch_embedding\.(weight|bias)$/, 'v.patch_embd'],
  [/^model\.vision_model\.embeddings\.position_embedding\.(weight)$/, 'v.position_embd'],
  [/^model\.vision_model\.post_layernorm\.(weight|bias)$/, 'v.post_ln'],
  [/^model\.connector\.modality_projection\.proj\.(weight)$/, 'mm.model.fc'],
  [/^model\.vision_model\.encoder\.layers\.(\d+)\.self_attn\.q_proj\.(weight|bias)$/, 'v.blk.$.attn_q'],
  [/^model\.vision_model\.encoder\.layers\.(\d+)\.self_attn\.k_proj\.(weight|bias)$/, 'v.blk.$.attn_k'],
  [/^model\.vision_model\.encoder\.layers\.(\d+)\.self_attn\.v_proj\.(weight|bias)$/, 'v.blk.$.attn_v'],
  [/^model\.vision_model\.encoder\.layers\.(\d+)\.self_attn\.out_proj\.(weight|bias)$/, 'v.blk.$.attn_out'],
  [/^model\.vision_model\.encoder\.layers\.(\d+)\.layer_norm1\.(weight|bias)$/, 'v.blk.$.ln1'],
  [/^model\.vision_model\.encoder\.layers\.(\d+)\.layer_norm2\.(weight|bias)$/, 'v.blk.$.ln2'],
  [/^model\.vision_model\.encoder\.layers\.(\d+)\.mlp\.fc1\.(weight|bias)$/, 'v.blk.$.ffn_up'],
  [/^model\.vision_model\.encoder\.layers\.(\d+)\.mlp\.fc2\.(weight|bias)$/, 'v.blk.$.ffn_down'],
];

function ggufName(hfName: string, table: Array<[RegExp, string]>): string | undefined {
  for (const [re, to] of table) {
    const m = re.exec(hfName);
    if (!m) continue;
    const suffix = m[m.length - 1];
    return `${m.length === 3 ? to.replace('$', m[1]) : to}.${suffix}`;
  }
  return undefined;
}

/** The tokenizer keys of the model .gguf, from tokenizer.json and tokenizer_config.json (the converter's _set_vocab_gpt2). */
export function tokenizerEntries(dir: string, vocabSize: number, pre: string): GgufEntry[] {
  const cfg = readJson(dir, 'tokenizer_config.json');
  // A Qwen2 tokenizer may come as vocab.json + merges.txt: the tokenizer.json transformers builds from them.
  const tok = (
    existsSync(join(dir, 'tokenizer.json'))
      ? readJson(dir, 'tokenizer.json')
      : qwen2BpeToTokenizerJson(readJson(dir, 'vocab.json'), readFileSync(join(dir, 'merges.txt'), 'utf8'), cfg, dir)
  ) as {
    model: { vocab: Record<string, number>; merges: unknown[] };
    added_tokens: Array<{ id: number; content: string; special: boolean }>;
  };
  const template =
    typeof cfg.chat_template === 'string'
      ? cfg.chat_template
      : existsSync(join(dir, 'chat_template.jinja'))
        ? readFileSync(join(dir, 'chat_template.jinja'), 'utf8')
        : existsSync(join(dir, 'chat_template.json'))
          ? (readJson(dir, 'chat_template.json').chat_template as string)
          : undefined;
  const tokens: string[] = [];
  const types: number[] = [];
  const byId = new Map<number, string>(Object.entries(tok.model.vocab).map(([t, id]) => [id, t]));
  const added = new Map(tok.added_tokens.map((t) => [t.id, t]));
  for (let id = 0; id < vocabSize; id++) {
    const a = added.get(id);
    const t = a?.content ?? byId.get(id);
    tokens.push(t ?? `[PAD${id}]`);
    types.push(t === undefined ? 5 : a ? (a.special ? 3 : 4) : 1);
  }
  const merges = tok.model.merges.map((m) => (Array.isArray(m) ? m.join(' ') : String(m)));
  const idOf = (key: string): GgufEntry[] => {
    const value = cfg[key];
    const text = value && typeof value === 'object' ? (value as { content?: unknown }).content : value;
    const id = typeof text === 'string' ? tokens.indexOf(text) : -1;
    return id >= 0
      ? [{ key: `tokenizer.ggml.${key === 'unk_token' ? 'unknown' : key.replace('_token', '')}_token_id`, type: 'u32', value: id }]
      : [];
  };
  return [
    { key: 'tokenizer.ggml.model', type: 'string', value: 'gpt2' },
    { key: 'tokenizer.ggml.pre', type: 'string', value: pre },
    { key: 'tokenizer.ggml.tokens', type: 'array', itemType: 'string', value: tokens },
    { key: 'tokenizer.ggml.token_type', type: 'array', itemType: 'i32', value: types },
    { key: 'tokenizer.ggml.merges', type: 'array', itemType: 'string', value: merges },
    ...idOf('bos_token'),
    ...idOf('eos_token'),
    ...idOf('unk_token'),
    ...idOf('pad_token'),
    ...(template !== undefined ? [{ key: 'tokenizer.chat_template', type: 'string' as const, value: template }] : []),
  ];
}

export interface ConvertedGguf {
  model: string;
  mmproj: string;
}

/** A GGUF file written a tensor at a time (a bench model's file is too large to hold twice). */
export async function writeGgufFile(path: string, entries: readonly GgufEntry[], tensors: readonly GgufTensorToWrite[]): Promise<void> {
  const file = await open(path, 'w');
  try {
    for (const chunk of ggufChunks(entries, tensors)) await file.write(chunk);
  } finally {
    await file.close();
  }
}

/** A checkpoint's tensors as f32, each read from its file when asked for (a model of several GB is never held whole). */
export interface CheckpointTensors {
  get(name: string): Float32Array | undefined;
}

/** Every tensor of a checkpoint folder (model.safetensors, or the shards its index names): shapes now, values on demand. */
export async function readTensors(dir: string): Promise<{ values: CheckpointTensors; shapes: Map<string, number[]> }> {
  const where = new Map<string, { path: string; info: TensorInfo; dataOffset: number }>();
  const shapes = new Map<string, number[]>();
  const index = existsSync(join(dir, 'model.safetensors.index.json')) ? readJson(dir, 'model.safetensors.index.json') : undefined;
  const files = index ? [...new Set(Object.values(index.weight_map as Record<string, string>))] : ['model.safetensors'];
  for (const file of files) {
    const path = join(dir, file);
    const fd = openSync(path, 'r');
    try {
      const first8 = new Uint8Array(8);
      readSync(fd, first8, 0, 8, 0);
      const size = readHeaderSize(first8, file);
      const json = new Uint8Array(size);
      readSync(fd, json, 0, size, 8);
      const header = parseSafetensorsHeader(json, size, file);
      for (const info of header.tensors.values()) {
        where.set(info.name, { path, info, dataOffset: header.dataOffset });
        shapes.set(info.name, info.shape);
      }
    } finally {
      closeSync(fd);
    }
  }
  const get = (name: string): Float32Array | undefined => {
    const at = where.get(name);
    if (!at) return undefined;
    const bytes = new Uint8Array(at.info.end - at.info.begin);
    const fd = openSync(at.path, 'r');
    try {
      for (let o = 0; o < bytes.byteLength; ) {
        const n = readSync(fd, bytes, o, bytes.byteLength - o, at.dataOffset + at.info.begin + o);
        if (n === 0) throw new Error(`${at.path} ends inside '${name}'`);
        o += n;
      }
    } finally {
      closeSync(fd);
    }
    return toFloat32(at.info, bytes);
  };
  return { values: { get }, shapes };
}

/** Writes the pair for the Idefics3 checkpoint in `dir` into `outDir`; returns the file names. */
export async function convertIdefics3ToGguf(dir: string, outDir: string, wanted: ConvertType = 'F16'): Promise<ConvertedGguf> {
  const raw = readJson(dir, 'config.json');
  const config = parseModelConfig(raw);
  if (config.family !== 'idefics3' || !config.vision) throw new Error(`${dir} is not an Idefics3 checkpoint`);
  const t = config.text;
  const v = config.vision;
  const pre = readJson(dir, 'preprocessor_config.json');
  const { values, shapes } = await readTensors(dir);
  const tensors = (table: Array<[RegExp, string]>, vision: boolean): GgufTensorToWrite[] => {
    const out: GgufTensorToWrite[] = [];
    for (const [hf, shape] of shapes) {
      const name = ggufName(hf, table);
      if (!name) continue;
      const heads = /attn_q\./.test(name) && !vision ? t.numHeads : /attn_k\./.test(name) && !vision ? t.numKvHeads : 0;
      const type = ggmlType(typeFor(name, shape, wanted, vision && hf.includes('.embeddings.')));
      out.push({ name, shape, type, values: () => (heads ? permuteRows(values.get(hf)!, shape[0], heads) : values.get(hf)!) });
    }
    return out;
  };
  const textEntries: GgufEntry[] = [
    { key: 'general.architecture', type: 'string', value: 'llama' },
    { key: 'general.name', type: 'string', value: basename(dir) },
    { key: 'llama.block_count', type: 'u32', value: t.numLayers },
    { key: 'llama.context_length', type: 'u32', value: t.maxPositions },
    { key: 'llama.embedding_length', type: 'u32', value: t.hiddenSize },
    { key: 'llama.feed_forward_length', type: 'u32', value: t.intermediateSize },
    { key: 'llama.attention.head_count', type: 'u32', value: t.numHeads },
    { key: 'llama.attention.head_count_kv', type: 'u32', value: t.numKvHeads },
    { key: 'llama.rope.freq_base', type: 'f32', value: t.ropeTheta },
    { key: 'llama.attention.layer_norm_rms_epsilon', type: 'f32', value: t.rmsNormEps },
    { key: 'llama.attention.key_length', type: 'u32', value: t.headDim },
    { key: 'llama.attention.value_length', type: 'u32', value: t.headDim },
    { key: 'llama.vocab_size', type: 'u32', value: t.vocabSize },
    { key: 'llama.rope.dimension_count', type: 'u32', value: t.headDim },
    ...tokenizerEntries(dir, t.vocabSize, 'smollm'),
  ];
  const size = pre.size as { longest_edge?: number } | undefined;
  const visionEntries: GgufEntry[] = [
    { key: 'general.architecture', type: 'string', value: 'clip' },
    { key: 'general.name', type: 'string', value: basename(dir) },
    { key: 'clip.has_vision_encoder', type: 'bool', value: true },
    { key: 'clip.projector_type', type: 'string', value: 'idefics3' },
    { key: 'clip.vision.projection_dim', type: 'u32', value: t.hiddenSize },
    { key: 'clip.vision.image_size', type: 'u32', value: v.imageSize },
    { key: 'clip.vision.patch_size', type: 'u32', value: v.patchSize },
    { key: 'clip.vision.embedding_length', type: 'u32', value: v.hiddenSize },
    { key: 'clip.vision.feed_forward_length', type: 'u32', value: v.intermediateSize },
    { key: 'clip.vision.block_count', type: 'u32', value: v.numLayers },
    { key: 'clip.vision.attention.head_count', type: 'u32', value: v.numHeads },
    { key: 'clip.vision.image_mean', type: 'array', itemType: 'f32', value: pre.image_mean as number[] },
    { key: 'clip.vision.image_std', type: 'array', itemType: 'f32', value: pre.image_std as number[] },
    { key: 'clip.vision.attention.layer_norm_epsilon', type: 'f32', value: v.layerNormEps },
    { key: 'clip.vision.projector.scale_factor', type: 'u32', value: v.scaleFactor },
    { key: 'clip.use_gelu', type: 'bool', value: true },
    { key: 'clip.vision.preproc_image_size', type: 'u32', value: size?.longest_edge ?? v.imageSize },
  ];
  mkdirSync(outDir, { recursive: true });
  const name = basename(dir);
  const files = { model: `${name}-${wanted}.gguf`, mmproj: `mmproj-${name}-${wanted}.gguf` };
  await writeGgufFile(join(outDir, files.model), textEntries, tensors(TEXT_NAMES, false));
  await writeGgufFile(join(outDir, files.mmproj), visionEntries, tensors(VISION_NAMES, true));
  return files;
}

if (isScript('gguf-convert')) {
  const [dir, out, type = 'F16'] = process.argv.slice(2);
  if (!dir || !out) {
    console.error('usage: tsx scripts/gguf-convert.ts <checkpoint dir> <out dir> [type]');
    process.exit(2);
  }
  const files = await convertIdefics3ToGguf(dir, out, type as ConvertType);
  console.log(`wrote ${join(out, files.model)} and ${join(out, files.mmproj)}`);
}
