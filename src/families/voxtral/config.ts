// HF `VoxtralConfig` (+ `VoxtralEncoderConfig` as audio_config, `LlamaConfig` as text_config): a Whisper
// encoder, a frame-stacking projector, a Llama decoder. Checkpoint names: audio_tower.*,
// multi_modal_projector.*, language_model.model.*, language_model.lm_head.weight.

import { ModelConfigError, UnsupportedModelError } from '../../errors';
import { checkHeadDim } from '../../kernels/attention-head';
import {
  type AudioConfig,
  type AudioEncoderConfig,
  type ModelConfig,
  parseCommonConfig,
  placeholderId,
  type TextConfig,
} from '../../model/config';
import { int, type Json, sub } from '../../model/config-fields';

export function parseVoxtralConfig(c: Json): ModelConfig {
  const common = parseCommonConfig(c, {
    id: 'voxtral',
    decoder: { textDefaults: VOXTRAL_TEXT_DEFAULTS },
    decoderNames: { model: 'language_model.model', lmHead: 'language_model.lm_head.weight' },
  });
  return { ...common, audio: parseVoxtralAudio(c, common.text) };
}

/** HF `VoxtralConfig._default_text_config_kwargs`: what a Voxtral text_config leaves out means these. */
const VOXTRAL_TEXT_DEFAULTS: Json = {
  vocab_size: 131072,
  hidden_size: 3072,
  intermediate_size: 8192,
  num_hidden_layers: 30,
  num_key_value_heads: 8,
  max_position_embeddings: 131072,
  rms_norm_eps: 1e-5,
  rope_theta: 100000000.0,
  head_dim: 128,
};

/** HF `VoxtralEncoderConfig` (audio_config) and the projector. */
function parseVoxtralAudio(c: Json, text: TextConfig): AudioConfig {
  const a = sub(c, 'audio_config');
  const path = 'audio_config.';
  // HF VoxtralEncoderConfig's defaults (Voxtral-Mini-3B-2507's encoder, Whisper-large-v3's shape).
  const hidden = int(a, path, 'hidden_size', typeof a.d_model === 'number' ? a.d_model : 1280);
  const heads = int(a, path, 'num_attention_heads', typeof a.encoder_attention_heads === 'number' ? a.encoder_attention_heads : 20);
  if (hidden % heads !== 0) {
    throw new ModelConfigError(`config.json: audio hidden_size ${hidden} is not divisible by num_attention_heads ${heads}`);
  }
  const encoder: AudioEncoderConfig = {
    hiddenSize: hidden,
    intermediateSize: int(a, path, 'intermediate_size', typeof a.encoder_ffn_dim === 'number' ? a.encoder_ffn_dim : 5120),
    numLayers: int(a, path, 'num_hidden_layers', typeof a.encoder_layers === 'number' ? a.encoder_layers : 32),
    numHeads: heads,
    headDim: hidden / heads,
    numMelBins: int(a, path, 'num_mel_bins', 128),
    maxSourcePositions: int(a, path, 'max_source_positions', 1500),
    layerNormEps: 1e-5,
  };
  checkHeadDim('config.json audio_config (hidden_size / num_attention_heads)', encoder.headDim);
  if (a.activation_function !== undefined && a.activation_function !== 'gelu') {
    throw new UnsupportedModelError(
      `audio_config.activation_function '${String(a.activation_function)}' is not supported (Tessera implements 'gelu')`,
    );
  }
  if (a.scale_embedding === true) {
    throw new UnsupportedModelError('audio_config.scale_embedding = true is not supported (Voxtral encoders do not scale the conv output)');
  }
  if (c.projector_hidden_act !== undefined && c.projector_hidden_act !== 'gelu') {
    throw new UnsupportedModelError(
      `projector_hidden_act '${String(c.projector_hidden_act)}' is not supported (Tessera implements 'gelu')`,
    );
  }
  // HF `VoxtralForConditionalGeneration.get_audio_features`: the encoder output [chunks, frames, D] is read as
  // rows of intermediate_size, i.e. intermediate_size / D consecutive frames per projector row.
  if (encoder.intermediateSize % hidden !== 0) {
    throw new ModelConfigError(
      `config.json: audio intermediate_size ${encoder.intermediateSize} is not a multiple of hidden_size ${hidden}; ` +
        "Voxtral's projector stacks whole encoder frames into each row",
    );
  }
  const stack = encoder.intermediateSize / hidden;
  if (encoder.maxSourcePositions % stack !== 0) {
    throw new ModelConfigError(
      `config.json: audio max_source_positions ${encoder.maxSourcePositions} is not a multiple of the projector's ${stack} frames per token`,
    );
  }
  return {
    encoder,
    projector: { kind: 'stack-gelu-mlp', stack, inputSize: encoder.intermediateSize },
    audioTokenId: placeholderId(c, 'audio_token_id', text),
    tokensPerChunk: encoder.maxSourcePositions / stack,
  };
}
