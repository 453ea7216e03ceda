// A Voxtral checkpoint folder written as the GGUF pair llama.cpp's convert_hf_to_gguf.py makes of it (its
// LlamaModel for the decoder, VoxtralWhisperEncoderModel for --mmproj), with the repository's own GGUF
// writer: the tiny test checkpoints in GGUF form. Read back by src/families/voxtral/gguf.ts.
//
//   <name>.gguf          general.architecture llama: llama.* hyper-parameters, the Tekken vocabulary
//                        (tokenizer.ggml.model gpt2, pre tekken, add_bos_token true), language_model.* as
//                        blk.N.* / token_embd / output_norm / output (absent when tied), q_proj and k_proj rows
//                        reordered per head for llama.cpp's adjacent-pair RoPE
//   mmproj-<name>.gguf   general.architecture clip, projector voxtral: clip.audio.*, the Whisper encoder as
//                        a.*, the projector as mm.a.mlp.1 / 2
//
// Tensor types as the converter chooses them: 1-D tensors, *_norm weights, biases and a.position_embd in
// F32; the conv weights in F16 whatever the file type (WhisperEncoderModel.tensor_force_quant); every other
// matrix in the requested type, or F16 when its rows are not whole blocks of that type. The conv biases are
// stored unsqueezed, [C] as [C, 1], as the converter's modify_tensors does.
//
// The vocabulary: a checkpoint with tokenizer.json (the tiny ones, and transformers' saves) goes through the
// converter's _set_vocab_gpt2, whose pre-tokenizer name comes from a hash of the tokenizer's ids on a check
// text; 'tekken' is the name its table gives Mistral's Tekken tokenizer (Mistral-Nemo). That a Voxtral
// tokenizer.json hashes to it is UNVERIFIED (an unknown hash stops the real converter). A checkpoint with only
// tekken.json goes through _set_vocab_mistral, which writes pre 'tekken' too, but the converter then carries on
// into the other vocab paths (no return), so the keys of a published Voxtral GGUF are UNVERIFIED as a whole.
//
//   tsx scripts/gguf-convert-voxtral.ts <checkpoint dir> <out dir> [F32|F16|BF16|Q8_0|Q4_0|Q4_1|Q5_0|Q5_1|Q4_K|Q5_K|Q6_K|Q4_K_M]

import { mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { parseModelConfig } from '../src/families/registry';
import { type GgufEntry, ggmlType } from '../src/model/weights/gguf/gguf-format';
import type { GgufTensorToWrite } from '../src/model/weights/gguf/gguf-writer';
import {
  type ConvertedGguf,
  type ConvertType,
  permuteRows,
  readJson,
  readTensors,
  tokenizerEntries,
  typeFor,
  writeGgufFile,
} from './gguf-convert';
import { isScript } from './run-as-script';

const TEXT_NAMES: Array<[RegExp, string]> = [
  [/^language_model\.model\.embed_tokens\.(weight)$/, 'token_embd'],
  [/^language_model\.model\.norm\.(weight)$/, 'output_norm'],
  [/^language_model\.lm_head\.(weight)$/, 'output'],
  [/^language_model\.model\.layers\.(\d+)\.input_layernorm\.(weight)$/, 'blk.$.attn_norm'],
  [/^language_model\.model\.layers\.(\d+)\.post_attention_layernorm\.(weight)$/, 'blk.$.ffn_norm'],
  [/^language_model\.model\.layers\.(\d+)\.self_attn\.q_proj\.(weight|bias)$/, 'blk.$.attn_q'],
  [/^language_model\.model\.layers\.(\d+)\.self_attn\.k_proj\.(weight|bias)$/, 'blk.$.attn_k'],
  [/^language_model\.model\.layers\.(\d+)\.self_attn\.v_proj\.(weight|bias)$/, 'blk.$.attn_v'],
  [/^language_model\.model\.layers\.(\d+)\.self_attn\.o_proj\.(weight)$/, 'blk.$.attn_output'],
  [/^language_model\.model\.layers\.(\d+)\.mlp\.gate_proj\.(weight)$/, 'blk.$.ffn_gate'],
  [/^language_model\.model\.layers\.(\d+)\.mlp\.up_proj\.(weight)$/, 'blk.$.ffn_up'],
  [/^language_model\.model\.layers\.(\d+)\.mlp\.down_proj\.(weight)$/, 'blk.$.ffn_down'],
];

const AUDIO_NAMES: Array<[RegExp, string]> = [
  [/^audio_tower\.conv1\.(weight|bias)$/, 'a.conv1d.1'],
  [/^audio_tower\.conv2\.(weight|bias)$/, 'a.conv1d.2'],
  [/^audio_tower\.embed_positions\.(weight)$/, 'a.position_embd'],
  [/^audio_tower\.layer_norm\.(weight|bias)$/, 'a.post_ln'],
  [/^multi_modal_projector\.linear_1\.(weight)$/, 'mm.a.mlp.1'],
  [/^multi_modal_projector\.linear_2\.(weight)$/, 'mm.a.mlp.2'],
  [/^audio_tower\.layers\.(\d+)\.self_attn\.q_proj\.(weight|bias)$/, 'a.blk.$.attn_q'],
  [/^audio_tower\.layers\.(\d+)\.self_attn\.k_proj\.(weight|bias)$/, 'a.blk.$.attn_k'],
  [/^audio_tower\.layers\.(\d+)\.self_attn\.v_proj\.(weight|bias)$/, 'a.blk.$.attn_v'],
  [/^audio_tower\.layers\.(\d+)\.self_attn\.out_proj\.(weight|bias)$/, 'a.blk.$.attn_out'],
  [/^audio_tower\.layers\.(\d+)\.self_attn_layer_norm\.(weight|bias)$/, 'a.blk.$.ln1'],
  [/^audio_tower\.layers\.(\d+)\.final_layer_norm\.(weight|bias)$/, 'a.blk.$.ln2'],
  [/^audio_tower\.layers\.(\d+)\.fc1\.(weight|bias)$/, 'a.blk.$.ffn_up'],
  [/^audio_tower\.layers\.(\d+)\.fc2\.(weight|bias)$/, 'a.blk.$.ffn_down'],
];

function ggufName(hfName: string, table: Array<[RegExp, string]>): string | undefined {
  for (const [re, to] of table) {
    const m = re.exec(hfName);
    if (m) return `${m.length === 3 ? to.replace('$', m[1]) : to}.${m[m.length - 1]}`;
  }
  return undefined;
}

/**
 * The vocabulary keys: _set_vocab_gpt2's (tokenizerEntries, pre 'tekken'), plus what gguf.SpecialVocab takes
 * from tokenizer_config.json's add_bos_token / add_eos_token and LlamaModel from its add_prefix_space.
 */
export function voxtralTokenizerEntries(dir: string, vocabSize: number): GgufEntry[] {
  const entries = tokenizerEntries(dir, vocabSize, 'tekken');
  const cfg = readJson(dir, 'tokenizer_config.json');
  const extra: GgufEntry[] = [];
  for (const [key, from] of [
    ['tokenizer.ggml.add_bos_token', 'add_bos_token'],
    ['tokenizer.ggml.add_eos_token', 'add_eos_token'],
    ['tokenizer.ggml.add_space_prefix', 'add_prefix_space'],
  ] as const) {
    const v = cfg[from];
    if (typeof v === 'boolean' && !entries.some((e) => e.key === key)) extra.push({ key, type: 'bool', value: v });
  }
  return [...entries, ...extra];
}

/** Writes the pair for the Voxtral checkpoint in `dir` into `outDir`; returns the file names. */
export async function convertVoxtralToGguf(dir: string, outDir: string, wanted: ConvertType = 'F16'): Promise<ConvertedGguf> {
  const config = parseModelConfig(readJson(dir, 'config.json'));
  if (config.family !== 'voxtral' || !config.audio) throw new Error(`${dir} is not a Voxtral checkpoint`);
  const t = config.text;
  const e = config.audio.encoder;
  const { values, shapes } = await readTensors(dir);
  const tensors = (table: Array<[RegExp, string]>, audio: boolean): GgufTensorToWrite[] => {
    const out: GgufTensorToWrite[] = [];
    for (const [hf, hfShape] of shapes) {
      const name = ggufName(hf, table);
      if (!name) continue;
      const heads = audio ? 0 : /attn_q\./.test(name) ? t.numHeads : /attn_k\./.test(name) ? t.numKvHeads : 0;
      const convBias = audio && /^a\.conv1d\.\d\.bias$/.test(name);
      const shape = convBias ? [hfShape[0], 1] : hfShape;
      const type =
        audio && /^a\.conv1d\.\d\.weight$/.test(name) ? 'F16' : typeFor(name, shape, wanted, audio && name.startsWith('a.position_embd.'));
      out.push({
        name,
        shape,
        type: ggmlType(type),
        values: () => (heads ? permuteRows(values.get(hf)!, hfShape[0], heads) : values.get(hf)!),
      });
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
    ...voxtralTokenizerEntries(dir, t.vocabSize),
  ];
  const audioEntries: GgufEntry[] = [
    { key: 'general.architecture', type: 'string', value: 'clip' },
    { key: 'general.name', type: 'string', value: basename(dir) },
    { key: 'clip.has_audio_encoder', type: 'bool', value: true },
    { key: 'clip.projector_type', type: 'string', value: 'voxtral' },
    { key: 'clip.audio.projection_dim', type: 'u32', value: t.hiddenSize },
    { key: 'clip.audio.embedding_length', type: 'u32', value: e.hiddenSize },
    { key: 'clip.audio.feed_forward_length', type: 'u32', value: e.intermediateSize },
    { key: 'clip.audio.block_count', type: 'u32', value: e.numLayers },
    { key: 'clip.audio.attention.head_count', type: 'u32', value: e.numHeads },
    { key: 'clip.audio.num_mel_bins', type: 'u32', value: e.numMelBins },
    { key: 'clip.audio.attention.layer_norm_epsilon', type: 'f32', value: e.layerNormEps },
    // A literal in the converter ("== intermediate_size // hidden_size", true of Voxtral-Mini), so written
    // as it is even for a checkpoint that stacks another number of frames (voxtral-tiny-odd: 3).
    { key: 'clip.audio.projector.stack_factor', type: 'u32', value: 4 },
  ];
  mkdirSync(outDir, { recursive: true });
  const name = basename(dir);
  const files = { model: `${name}-${wanted}.gguf`, mmproj: `mmproj-${name}-${wanted}.gguf` };
  await writeGgufFile(join(outDir, files.model), textEntries, tensors(TEXT_NAMES, false));
  await writeGgufFile(join(outDir, files.mmproj), audioEntries, tensors(AUDIO_NAMES, true));
  return files;
}

if (isScript('gguf-convert-voxtral')) {
  const [dir, out, type = 'F16'] = process.argv.slice(2);
  if (!dir || !out) {
    console.error('usage: tsx scripts/gguf-convert-voxtral.ts <checkpoint dir> <out dir> [type]');
    process.exit(2);
  }
  const files = await convertVoxtralToGguf(dir, out, type as ConvertType);
  console.log(`wrote ${join(out, files.model)} and ${join(out, files.mmproj)}`);
}
