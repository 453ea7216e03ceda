// Voxtral as llama.cpp converts it: a `llama` model .gguf (the decoder, from language_model.*, q/k rows
// reordered for llama.cpp's RoPE; the Tekken vocabulary as tokenizer.ggml.* with pre 'tekken') and an mmproj
// .gguf whose clip.projector_type is `voxtral` (the Whisper encoder and the projector). Names and keys as
// llama.cpp's convert_hf_to_gguf.py writes them (its LlamaModel, and VoxtralWhisperEncoderModel on
// WhisperEncoderModel and MmprojModel); the inverse is read here into the HF checkpoint's config.json,
// preprocessor_config.json and tensor names.
//
//   model .gguf               HF (language_model.)                mmproj .gguf           HF
//   token_embd                model.embed_tokens                  a.conv1d.1 / 2         audio_tower.conv1 / conv2
//   output_norm               model.norm                                                 (bias stored as [C, 1])
//   output (absent when tied) lm_head                             a.position_embd        audio_tower.embed_positions
//   blk.N.attn_norm/ffn_norm  model.layers.N.input_layernorm /    a.blk.N.attn_q/k/v     audio_tower.layers.N.self_attn.q/k/v_proj
//                             post_attention_layernorm            a.blk.N.attn_out       ...self_attn.out_proj
//   blk.N.attn_q/k/v/output   model.layers.N.self_attn.q/k/v/o    a.blk.N.ln1 / ln2      ...self_attn_layer_norm / final_layer_norm
//   blk.N.ffn_gate/up/down    model.layers.N.mlp.gate/up/down     a.blk.N.ffn_up / down  ...fc1 / fc2
//                                                                 a.post_ln              audio_tower.layer_norm
//                                                                 mm.a.mlp.1 / 2         multi_modal_projector.linear_1 / 2
//
// What the mmproj does not carry comes from HF's defaults or from llama.cpp's own constants for it:
//   max_source_positions   the rows of a.position_embd (HF default 1500)
//   projector stack        intermediate_size / hidden_size, as HF's get_audio_features reads it; the
//                          converter writes clip.audio.projector.stack_factor as a literal 4
//                          ("== intermediate_size // hidden_size"), true of Voxtral-Mini but not read here
//   feature extractor      clip.cpp's Voxtral constants: 30 s chunks at 16 kHz, n_fft 400, hop 160
//                          (tools/mtmd/clip.cpp `case PROJECTOR_TYPE_VOXTRAL`), num_mel_bins from the file
//   audio_token_id         the vocabulary's [AUDIO]

import { ModelConfigError } from '../../errors';
import type { Json } from '../../model/config-fields';
import type { GgufHeader } from '../../model/weights/gguf/gguf-format';
import type { GgufTensorRef } from '../../model/weights/gguf/gguf-plan';
import type { GgufFamily } from '../family';
import { decoderTensor, splitSuffix } from '../gguf-decoder';
import { GgufMetadata } from '../gguf-metadata';

const AUDIO_BLOCK: Record<string, string> = {
  attn_q: 'self_attn.q_proj',
  attn_k: 'self_attn.k_proj',
  attn_v: 'self_attn.v_proj',
  attn_out: 'self_attn.out_proj',
  ln1: 'self_attn_layer_norm',
  ln2: 'final_layer_norm',
  ffn_up: 'fc1',
  ffn_down: 'fc2',
};

const AUDIO_GLOBAL: Record<string, string> = {
  'a.conv1d.1': 'audio_tower.conv1',
  'a.conv1d.2': 'audio_tower.conv2',
  'a.position_embd': 'audio_tower.embed_positions',
  'a.post_ln': 'audio_tower.layer_norm',
  'mm.a.mlp.1': 'multi_modal_projector.linear_1',
  'mm.a.mlp.2': 'multi_modal_projector.linear_2',
};

/** The decoder's tensors: llama.cpp's Llama layout, q/k rows reordered (gguf-decoder.ts). */
function textTensor(ggufName: string, model: GgufHeader): GgufTensorRef | undefined {
  const meta = new GgufMetadata(model, 'the model .gguf');
  const q = meta.number('llama.attention.head_count');
  return decoderTensor(
    ggufName,
    { model: 'language_model.model', head: 'language_model.lm_head' },
    { q, kv: meta.number('llama.attention.head_count_kv', q) },
  );
}

function audioTensor(ggufName: string): GgufTensorRef | undefined {
  const parts = splitSuffix(ggufName);
  if (!parts) return undefined;
  const [base, suffix] = parts;
  if (Object.hasOwn(AUDIO_GLOBAL, base)) {
    const hfName = `${AUDIO_GLOBAL[base]}.${suffix}`;
    // The converter stores the conv biases unsqueezed, [C] as [C, 1] (WhisperEncoderModel.modify_tensors).
    return base.startsWith('a.conv1d.') && suffix === 'bias' ? { hfName, reshape: true } : { hfName };
  }
  const m = /^a\.blk\.(\d+)\.(\w+)$/.exec(base);
  if (!m || !Object.hasOwn(AUDIO_BLOCK, m[2])) return undefined;
  return { hfName: `audio_tower.layers.${m[1]}.${AUDIO_BLOCK[m[2]]}.${suffix}` };
}

function configFiles(model: GgufHeader, mmproj: GgufHeader | undefined, where: string): Record<string, Json> {
  const t = new GgufMetadata(model, `${where} (model .gguf)`);
  if (!mmproj) return {};
  const a = new GgufMetadata(mmproj, `${where} (mmproj .gguf)`);
  const hidden = t.number('llama.embedding_length');
  const heads = t.number('llama.attention.head_count');
  const tokens = model.metadata.get('tokenizer.ggml.tokens');
  const tied = !model.tensors.has('output.weight');
  const audioTokenId = t.tokenId('[AUDIO]');
  if (audioTokenId === undefined) {
    throw new ModelConfigError(
      `${where} (model .gguf): the vocabulary (tokenizer.ggml.tokens) has no [AUDIO] token, which Voxtral prompts need; the file is not a Voxtral model`,
    );
  }
  // Written only for rope types llama.cpp scales (linear, yarn, longrope); handed on so that the config
  // parser refuses it by name, as it would in a config.json.
  const ropeScaling = model.metadata.get('llama.rope.scaling.type');
  const positions = mmproj.tensors.get('a.position_embd.weight');
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
    hidden_act: 'silu',
    rope_scaling: typeof ropeScaling === 'string' && ropeScaling !== 'none' ? { rope_type: ropeScaling } : null,
    tie_word_embeddings: tied,
  };
  const audioConfig: Json = {
    model_type: 'voxtral_encoder',
    hidden_size: a.number('clip.audio.embedding_length'),
    intermediate_size: a.number('clip.audio.feed_forward_length'),
    num_hidden_layers: a.number('clip.audio.block_count'),
    num_attention_heads: a.number('clip.audio.attention.head_count'),
    num_mel_bins: a.number('clip.audio.num_mel_bins'),
    max_source_positions: positions?.shape[0] ?? 1500,
    // clip.cpp runs the Voxtral FFN as FFN_GELU_ERF, HF's 'gelu'.
    activation_function: 'gelu',
    scale_embedding: false,
  };
  const config: Json = {
    architectures: ['VoxtralForConditionalGeneration'],
    model_type: 'voxtral',
    audio_token_id: audioTokenId,
    projector_hidden_act: 'gelu',
    hidden_size: hidden,
    vocab_size: textConfig.vocab_size,
    tie_word_embeddings: tied,
    text_config: textConfig,
    audio_config: audioConfig,
  };
  // What WhisperFeatureExtractor reads (processor/audio/log-mel-config.ts); GGUF carries only the mel bins.
  const chunkSeconds = 30;
  const samplingRate = 16000;
  const hopLength = 160;
  const preprocessor: Json = {
    feature_extractor_type: 'WhisperFeatureExtractor',
    processor_class: 'VoxtralProcessor',
    feature_size: audioConfig.num_mel_bins,
    sampling_rate: samplingRate,
    n_fft: 400,
    hop_length: hopLength,
    chunk_length: chunkSeconds,
    n_samples: chunkSeconds * samplingRate,
    nb_max_frames: (chunkSeconds * samplingRate) / hopLength,
    padding_side: 'right',
    padding_value: 0,
    dither: 0,
    return_attention_mask: false,
  };
  return { 'config.json': config, 'preprocessor_config.json': preprocessor };
}

export const voxtralGguf: GgufFamily = {
  reads: (model, mmproj) =>
    model.metadata.get('general.architecture') === 'llama' && mmproj?.metadata.get('clip.projector_type') === 'voxtral',
  files: configFiles,
  tensor: (file, ggufName, { model }) => (file === 'model' ? textTensor(ggufName, model) : audioTensor(ggufName)),
};
