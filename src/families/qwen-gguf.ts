// Qwen2.5-VL and Qwen3-VL as llama.cpp converts them (convert_hf_to_gguf.py's Qwen2VLModel / Qwen3VLTextModel
// for the decoder, Qwen2VLVisionModel / Qwen3VLVisionModel for --mmproj): what both families share.
//
//   model .gguf (qwen2vl / qwen3vl)     HF ({prefix} = model, or model.language_model for Qwen3-VL)
//   token_embd / output_norm / output   {prefix}.embed_tokens / {prefix}.norm / lm_head (absent when tied)
//   blk.N.attn_norm / ffn_norm          {prefix}.layers.N.input_layernorm / post_attention_layernorm
//   blk.N.attn_q / k / v / output       ...self_attn.q_proj / k_proj / v_proj (+ biases) / o_proj
//   blk.N.attn_q_norm / attn_k_norm     ...self_attn.q_norm / k_norm (Qwen3-VL)
//   blk.N.ffn_gate / up / down          ...mlp.gate_proj / up_proj / down_proj
// No rows are reordered (these architectures use llama.cpp's NEOX / M-RoPE, as HF does).
//
// Hyper-parameters a GGUF pair does not carry take the values of the public checkpoints' files
// (test/fixtures/models/Qwen2.5-VL-3B-Instruct, Qwen3-VL-2B-Instruct): the image processor's pixel budget,
// Qwen2.5-VL's window of 112 px and tokens_per_second 2, Qwen3-VL's video processor.

import type { Json } from '../model/config-fields';
import type { GgufHeader } from '../model/weights/gguf/gguf-format';
import type { GgufTensorRef } from '../model/weights/gguf/gguf-plan';
import { decoderTensor } from './gguf-decoder';
import { GgufMetadata } from './gguf-metadata';

/** The HF name of a decoder tensor of a qwen2vl / qwen3vl model .gguf (no rows reordered). */
export function qwenTextTensor(ggufName: string, prefix: string): GgufTensorRef | undefined {
  return decoderTensor(ggufName, { model: prefix, head: 'lm_head' });
}

/** The decoder's config fields from `{arch}.*`, and its M-RoPE sections (rope.dimension_sections, padded to 4). */
export function qwenTextFields(model: GgufHeader, where: string): { fields: Json; section: number[] } {
  const t = new GgufMetadata(model, `${where} (model .gguf)`);
  const arch = t.string('general.architecture');
  const heads = t.number(`${arch}.attention.head_count`);
  const hidden = t.number(`${arch}.embedding_length`);
  const tokens = model.metadata.get('tokenizer.ggml.tokens');
  const fields: Json = {
    hidden_size: hidden,
    intermediate_size: t.number(`${arch}.feed_forward_length`),
    num_hidden_layers: t.number(`${arch}.block_count`),
    num_attention_heads: heads,
    num_key_value_heads: t.number(`${arch}.attention.head_count_kv`, heads),
    head_dim: t.number(`${arch}.attention.key_length`, hidden / heads),
    rms_norm_eps: t.number(`${arch}.attention.layer_norm_rms_epsilon`),
    rope_theta: t.number(`${arch}.rope.freq_base`),
    max_position_embeddings: t.number(`${arch}.context_length`),
    vocab_size: t.number(`${arch}.vocab_size`, Array.isArray(tokens) ? tokens.length : undefined),
    tie_word_embeddings: !model.tensors.has('output.weight'),
  };
  return { fields, section: t.numbers(`${arch}.rope.dimension_sections`).slice(0, 3) };
}

/** The special token ids a Qwen-VL config.json names, from the vocabulary. */
export function qwenTokenIds(model: GgufHeader, where: string): Json {
  const t = new GgufMetadata(model, `${where} (model .gguf)`);
  const ids: Json = {};
  for (const [key, token] of [
    ['image_token_id', '<|image_pad|>'],
    ['video_token_id', '<|video_pad|>'],
    ['vision_start_token_id', '<|vision_start|>'],
    ['vision_end_token_id', '<|vision_end|>'],
  ] as const) {
    const id = t.tokenId(token);
    if (id !== undefined) ids[key] = id;
  }
  return ids;
}

/** The vision tower's sizes both families read from clip.vision.*. */
export function qwenVisionFields(mmproj: GgufHeader, where: string): Json {
  const v = new GgufMetadata(mmproj, `${where} (mmproj .gguf)`);
  return {
    depth: v.number('clip.vision.block_count'),
    hidden_size: v.number('clip.vision.embedding_length'),
    intermediate_size: v.number('clip.vision.feed_forward_length'),
    num_heads: v.number('clip.vision.attention.head_count'),
    out_hidden_size: v.number('clip.vision.projection_dim'),
    patch_size: v.number('clip.vision.patch_size'),
    // The converter writes spatial_merge_size only when the config has it; llama.cpp's loader defaults to 2.
    spatial_merge_size: v.number('clip.vision.spatial_merge_size', 2),
    // The converter asserts a temporal patch of 2 (it splits the Conv3d into two tensors).
    temporal_patch_size: 2,
  };
}

/** The image normalisation the mmproj carries. */
export function qwenImageNormalization(mmproj: GgufHeader, where: string): Json {
  const v = new GgufMetadata(mmproj, `${where} (mmproj .gguf)`);
  return { image_mean: v.numbers('clip.vision.image_mean'), image_std: v.numbers('clip.vision.image_std') };
}

/**
 * The patch embedding: the converter stores the Conv3d's two temporal taps as v.patch_embd.weight and
 * v.patch_embd.weight.1 ([D, C, P, P] each); together they are HF's [D, C, 2, P, P].
 */
export function qwenPatchTensor(ggufName: string, prefix: string): GgufTensorRef | undefined {
  const weight = `${prefix}.patch_embed.proj.weight`;
  if (ggufName === 'v.patch_embd.weight') return { hfName: weight, slice: { axis: 2, index: 0, count: 2 } };
  if (ggufName === 'v.patch_embd.weight.1') return { hfName: weight, slice: { axis: 2, index: 1, count: 2 } };
  if (ggufName === 'v.patch_embd.bias') return { hfName: `${prefix}.patch_embed.proj.bias` };
  return undefined;
}
