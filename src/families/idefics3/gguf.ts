// SmolVLM / SmolVLM2 as llama.cpp converts them: a `llama` model .gguf (the decoder, from
// model.text_model.*, q/k rows reordered for llama.cpp's RoPE) and an mmproj .gguf whose clip.projector_type
// is `idefics3` (the SigLIP tower and the connector). Names and keys as llama.cpp's convert_hf_to_gguf.py
// writes them (its LlamaModel and SmolVLMModel); the inverse is read here into the HF checkpoint's
// config.json, preprocessor_config.json and tensor names.
//
//   model .gguf                          HF                                   mmproj .gguf              HF (model.vision_model.)
//   token_embd                           model.text_model.embed_tokens        v.patch_embd              embeddings.patch_embedding
//   output_norm                          model.text_model.norm                v.position_embd           embeddings.position_embedding
//   output (absent when tied)            lm_head                              v.blk.N.attn_q/k/v/out    encoder.layers.N.self_attn.q/k/v/out_proj
//   blk.N.attn_norm / ffn_norm           layers.N.input_layernorm /           v.blk.N.ln1 / ln2         encoder.layers.N.layer_norm1 / 2
//                                        post_attention_layernorm             v.blk.N.ffn_up / down     encoder.layers.N.mlp.fc1 / fc2
//   blk.N.attn_q / k / v / output        layers.N.self_attn.q/k/v/o_proj      v.post_ln                 post_layernorm
//   blk.N.ffn_gate / up / down           layers.N.mlp.gate/up/down_proj       mm.model.fc               model.connector.modality_projection.proj

import type { Json } from '../../model/config-fields';
import type { GgufHeader } from '../../model/weights/gguf/gguf-format';
import type { GgufTensorRef } from '../../model/weights/gguf/gguf-plan';
import type { GgufFamily } from '../family';
import { decoderTensor, splitSuffix } from '../gguf-decoder';
import { GgufMetadata } from '../gguf-metadata';

const VISION_BLOCK: Record<string, string> = {
  attn_q: 'self_attn.q_proj',
  attn_k: 'self_attn.k_proj',
  attn_v: 'self_attn.v_proj',
  attn_out: 'self_attn.out_proj',
  ln1: 'layer_norm1',
  ln2: 'layer_norm2',
  ffn_up: 'mlp.fc1',
  ffn_down: 'mlp.fc2',
};

const VISION_GLOBAL: Record<string, string> = {
  'v.patch_embd': 'model.vision_model.embeddings.patch_embedding',
  'v.position_embd': 'model.vision_model.embeddings.position_embedding',
  'v.post_ln': 'model.vision_model.post_layernorm',
  'mm.model.fc': 'model.connector.modality_projection.proj',
};

/** The decoder's tensors: llama.cpp's Llama layout, q/k rows reordered (gguf-decoder.ts). */
function textTensor(ggufName: string, model: GgufHeader): GgufTensorRef | undefined {
  const meta = new GgufMetadata(model, 'the model .gguf');
  const q = meta.number('llama.attention.head_count');
  return decoderTensor(
    ggufName,
    { model: 'model.text_model', head: 'lm_head' },
    { q, kv: meta.number('llama.attention.head_count_kv', q) },
  );
}

function visionTensor(ggufName: string): GgufTensorRef | undefined {
  const parts = splitSuffix(ggufName);
  if (!parts) return undefined;
  const [base, suffix] = parts;
  if (Object.hasOwn(VISION_GLOBAL, base)) return { hfName: `${VISION_GLOBAL[base]}.${suffix}` };
  const m = /^v\.blk\.(\d+)\.(\w+)$/.exec(base);
  if (!m || !Object.hasOwn(VISION_BLOCK, m[2])) return undefined;
  return { hfName: `model.vision_model.encoder.layers.${m[1]}.${VISION_BLOCK[m[2]]}.${suffix}` };
}

function configFiles(model: GgufHeader, mmproj: GgufHeader | undefined, where: string): Record<string, Json> {
  const t = new GgufMetadata(model, `${where} (model .gguf)`);
  if (!mmproj) return {};
  const v = new GgufMetadata(mmproj, `${where} (mmproj .gguf)`);
  const hidden = t.number('llama.embedding_length');
  const heads = t.number('llama.attention.head_count');
  const tokens = model.metadata.get('tokenizer.ggml.tokens');
  const tied = !model.tensors.has('output.weight');
  const imageSize = v.number('clip.vision.image_size');
  const patchSize = v.number('clip.vision.patch_size');
  const scaleFactor = v.number('clip.vision.projector.scale_factor', 2);
  const imageTokenId = t.tokenId('<image>');
  const textConfig: Json = {
    model_type: 'llama',
    hidden_size: hidden,
    intermediate_size: t.number('llama.feed_forward_length'),
    num_hidden_layers: t.number('llama.block_count'),
    num_attention_heads: heads,
    num_key_value_heads: t.number('llama.attention.head_count_kv', heads),
    head_dim: t.number('llama.attention.key_length', hidden / heads),
    rms_norm_eps: t.number('llama.attention.layer_norm_rms_epsilon'),
    rope_theta: t.number('llama.rope.freq_base', 10000),
    vocab_size: t.number('llama.vocab_size', Array.isArray(tokens) ? tokens.length : undefined),
    max_position_embeddings: t.number('llama.context_length'),
    tie_word_embeddings: tied,
  };
  const config: Json = {
    architectures: ['Idefics3ForConditionalGeneration'],
    model_type: 'idefics3',
    ...(imageTokenId !== undefined ? { image_token_id: imageTokenId } : {}),
    scale_factor: scaleFactor,
    tie_word_embeddings: tied,
    text_config: textConfig,
    vision_config: {
      hidden_size: v.number('clip.vision.embedding_length'),
      intermediate_size: v.number('clip.vision.feed_forward_length'),
      num_hidden_layers: v.number('clip.vision.block_count'),
      num_attention_heads: v.number('clip.vision.attention.head_count'),
      image_size: imageSize,
      patch_size: patchSize,
      num_channels: 3,
      layer_norm_eps: v.number('clip.vision.attention.layer_norm_epsilon', 1e-5),
    },
  };
  // What Idefics3ImageProcessor reads; the converter keeps the normalisation and the longest edge of the
  // resize (clip.vision.preproc_image_size), and a tile is the tower's image_size.
  const preprocessor: Json = {
    image_processor_type: 'Idefics3ImageProcessor',
    processor_class: 'Idefics3Processor',
    do_convert_rgb: true,
    do_image_splitting: true,
    do_normalize: true,
    do_pad: true,
    do_rescale: true,
    do_resize: true,
    image_mean: v.numbers('clip.vision.image_mean'),
    image_std: v.numbers('clip.vision.image_std'),
    max_image_size: { longest_edge: imageSize },
    size: { longest_edge: v.number('clip.vision.preproc_image_size', imageSize) },
    resample: 1,
    rescale_factor: 1 / 255,
  };
  const perSide = Math.floor(imageSize / patchSize) / scaleFactor;
  return {
    'config.json': config,
    'preprocessor_config.json': preprocessor,
    'processor_config.json': { processor_class: 'Idefics3Processor', image_seq_len: perSide * perSide },
  };
}

export const idefics3Gguf: GgufFamily = {
  reads: (model, mmproj) =>
    model.metadata.get('general.architecture') === 'llama' && mmproj?.metadata.get('clip.projector_type') === 'idefics3',
  files: configFiles,
  tensor: (file, ggufName, headers) => (file === 'model' ? textTensor(ggufName, headers.model) : visionTensor(ggufName)),
};
