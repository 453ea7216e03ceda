// The parts of a Hugging Face config.json that Tessera's runtime needs, validated. Two families:
//   idefics3 / smolvlm  HF `Idefics3Config` (+ `Idefics3VisionConfig`, `LlamaConfig` as text_config):
//                       a SigLIP tower, a pixel-shuffle connector, a Llama decoder. `config.vision`.
//   voxtral             HF `VoxtralConfig` (+ `VoxtralEncoderConfig` as audio_config, `LlamaConfig` as
//                       text_config): a Whisper encoder, a frame-stacking projector, a Llama decoder.
//                       `config.audio`.
// Anything the runtime cannot run is a named error before any upload.

import { ModelConfigError, UnsupportedModelError } from '../errors';
import { checkHeadDim } from '../kernels/attention-head';

export const SUPPORTED_MODEL_TYPES = ['idefics3', 'smolvlm', 'voxtral'] as const;
export type ModelType = (typeof SUPPORTED_MODEL_TYPES)[number];

export interface VisionConfig {
  hiddenSize: number;
  intermediateSize: number;
  numLayers: number;
  numHeads: number;
  headDim: number;
  imageSize: number;
  patchSize: number;
  numChannels: number;
  layerNormEps: number;
  /** Patches per side of a full tile: floor(image_size / patch_size). */
  patchesPerSide: number;
  /** The `<image>` placeholder's token id. */
  imageTokenId: number;
  /** The connector's pixel-shuffle factor. */
  scaleFactor: number;
  /** Image tokens per tile: (patchesPerSide / scaleFactor)^2. */
  imageSeqLen: number;
}

/**
 * A Whisper-style encoder (HF `VoxtralEncoder`): conv1d(mel -> D, k3) + GELU, conv1d(D -> D, k3, stride 2)
 * + GELU, learned positions, pre-LN layers (attention with q/v/out biases and none on k; fc1 + GELU + fc2),
 * a final LayerNorm. One 30-second chunk of `2 * maxSourcePositions` mel frames gives maxSourcePositions
 * encoder frames.
 */
export interface AudioEncoderConfig {
  hiddenSize: number;
  intermediateSize: number;
  numLayers: number;
  numHeads: number;
  /** hidden_size / num_attention_heads (HF `VoxtralAttention` derives it so; a config's head_dim is not read). */
  headDim: number;
  numMelBins: number;
  /** Encoder frames per chunk (the learned position table's length). */
  maxSourcePositions: number;
  /** PyTorch nn.LayerNorm's default: the HF encoder builds its norms without an eps. */
  layerNormEps: number;
}

/** Voxtral's projector: `stack` consecutive encoder frames as one row -> linear -> GELU -> linear (no biases). */
export interface AudioProjectorConfig {
  kind: 'stack-gelu-mlp';
  /** Encoder frames per LM token: audio intermediate_size / hidden_size (4 for Voxtral). */
  stack: number;
  /** Width of the stacked row (audio intermediate_size). */
  inputSize: number;
}

export interface AudioConfig {
  encoder: AudioEncoderConfig;
  projector: AudioProjectorConfig;
  /** The audio placeholder's token id (`[AUDIO]`). */
  audioTokenId: number;
  /** LM tokens per chunk: maxSourcePositions / stack (375 for Voxtral). */
  tokensPerChunk: number;
}

export interface TextConfig {
  hiddenSize: number;
  intermediateSize: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  rmsNormEps: number;
  ropeTheta: number;
  vocabSize: number;
  maxPositions: number;
}

export interface ModelConfig {
  modelType: ModelType;
  /** lm_head shares the token embedding matrix (no lm_head.weight in the checkpoint). */
  tieWordEmbeddings: boolean;
  /**
   * The LM head is the token embedding matrix when the checkpoint has no lm_head tensor: text_config ties
   * while the top level says false (tieWordEmbeddings is then false, and a present lm_head is used).
   */
  tieIfHeadMissing?: boolean;
  /** The image side (idefics3, smolvlm); undefined for a model without a vision tower. */
  vision?: VisionConfig;
  /** The audio side (voxtral); undefined for a model without an audio tower. */
  audio?: AudioConfig;
  text: TextConfig;
  /** dtype the checkpoint says it was saved in (informational; tensors carry their own). */
  torchDtype: string | undefined;
}

type Json = Record<string, unknown>;

function field(obj: Json, path: string, key: string, kind: 'number' | 'string' | 'boolean'): unknown {
  const v = obj[key];
  if (typeof v !== kind) {
    throw new ModelConfigError(`config.json: ${path}${key} must be a ${kind}, found ${v === undefined ? 'nothing' : JSON.stringify(v)}`);
  }
  return v;
}

function int(obj: Json, path: string, key: string, fallback?: number): number {
  if (obj[key] === undefined && fallback !== undefined) return fallback;
  const v = field(obj, path, key, 'number') as number;
  if (!Number.isInteger(v) || v <= 0) throw new ModelConfigError(`config.json: ${path}${key} must be a positive integer, found ${v}`);
  return v;
}

/**
 * A real number in (min, max), exclusive. JSON cannot carry NaN, but 1e999 parses as Infinity, and a
 * negative or zero epsilon or RoPE base gives NaN or Infinity in every layer: generation would then
 * silently return token id 0.
 */
function num(obj: Json, path: string, key: string, fallback: number, range: { min: number; max: number; why: string }): number {
  if (obj[key] === undefined) return fallback;
  const v = field(obj, path, key, 'number') as number;
  if (!(Number.isFinite(v) && v > range.min && v < range.max)) {
    throw new ModelConfigError(
      `config.json: ${path}${key} is ${v} but must be a finite number above ${range.min}${range.max < Infinity ? ` and below ${range.max}` : ''} (${range.why})`,
    );
  }
  return v;
}

const EPSILON = { min: 0, max: 1, why: 'the epsilon added to the variance in a norm' };

function sub(obj: Json, key: string): Json {
  const v = obj[key];
  if (!v || typeof v !== 'object') throw new ModelConfigError(`config.json: '${key}' is missing or not an object`);
  return v as Json;
}

export function parseModelConfig(raw: unknown): ModelConfig {
  if (!raw || typeof raw !== 'object') throw new ModelConfigError('config.json is not a JSON object');
  const c = raw as Json;
  const modelType = c.model_type;
  if (typeof modelType !== 'string' || !(SUPPORTED_MODEL_TYPES as readonly string[]).includes(modelType)) {
    throw new UnsupportedModelError(
      `model_type '${String(modelType)}' is not supported; Tessera runs ${SUPPORTED_MODEL_TYPES.join(', ')} checkpoints ` +
        '(SigLIP vision tower + pixel-shuffle connector + Llama decoder; Whisper audio encoder + frame-stacking projector + Llama decoder).',
    );
  }
  const text = parseTextConfig(c, modelType === 'voxtral' ? VOXTRAL_TEXT_DEFAULTS : {});
  const { tie, tieIfHeadMissing } = tiedEmbeddings(c);
  const torchDtype = typeof c.torch_dtype === 'string' ? c.torch_dtype : typeof c.dtype === 'string' ? c.dtype : undefined;
  const common = { modelType: modelType as ModelType, tieWordEmbeddings: tie, tieIfHeadMissing, text, torchDtype };
  if (modelType === 'voxtral') return { ...common, audio: parseVoxtralAudio(c, text) };
  return { ...common, vision: parseIdefics3Vision(c, text) };
}

/**
 * Whether the LM head is the token embedding matrix. HF `Idefics3ForConditionalGeneration.tie_weights` reads
 * the top-level flag (Idefics3Config and VoxtralConfig default it to false), but a transformers save of a
 * tied composite model can write the flag only in text_config, with no lm_head tensor: a flag found only
 * there ties too. When the top level says false and text_config says true, a checkpoint without an lm_head
 * tensor is tied rather than refused.
 */
function tiedEmbeddings(c: Json): { tie: boolean; tieIfHeadMissing: boolean } {
  const top = c.tie_word_embeddings;
  const textConfig = c.text_config;
  const inText = textConfig && typeof textConfig === 'object' ? (textConfig as Json).tie_word_embeddings : undefined;
  for (const [where, v] of [
    ['tie_word_embeddings', top],
    ['text_config.tie_word_embeddings', inText],
  ] as const) {
    if (v !== undefined && v !== null && typeof v !== 'boolean') {
      throw new ModelConfigError(`config.json: ${where} must be true or false, found ${JSON.stringify(v)}`);
    }
  }
  const tie = top === true || ((top === undefined || top === null) && inText === true);
  return { tie, tieIfHeadMissing: !tie && inText === true };
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

function parseTextConfig(c: Json, defaults: Json): TextConfig {
  const t = { ...defaults, ...sub(c, 'text_config') };
  const tHidden = int(t, 'text_config.', 'hidden_size');
  const tHeads = int(t, 'text_config.', 'num_attention_heads', typeof defaults.hidden_size === 'number' ? 32 : undefined);
  const tKvHeads = int(t, 'text_config.', 'num_key_value_heads', tHeads);
  if (tHeads % tKvHeads !== 0) {
    throw new ModelConfigError(`config.json: num_attention_heads ${tHeads} is not a multiple of num_key_value_heads ${tKvHeads}`);
  }
  const text: TextConfig = {
    hiddenSize: tHidden,
    intermediateSize: int(t, 'text_config.', 'intermediate_size'),
    numLayers: int(t, 'text_config.', 'num_hidden_layers'),
    numHeads: tHeads,
    numKvHeads: tKvHeads,
    headDim: int(t, 'text_config.', 'head_dim', tHidden / tHeads),
    rmsNormEps: num(t, 'text_config.', 'rms_norm_eps', 1e-6, EPSILON),
    ropeTheta: num(t, 'text_config.', 'rope_theta', 10000, { min: 1, max: Infinity, why: 'the RoPE base: frequencies are theta^(-2i/d)' }),
    vocabSize: int(t, 'text_config.', 'vocab_size', typeof c.vocab_size === 'number' ? c.vocab_size : undefined),
    maxPositions: int(t, 'text_config.', 'max_position_embeddings', 8192),
  };
  checkHeadDim('config.json text_config', text.headDim);
  if (t.hidden_act !== undefined && t.hidden_act !== 'silu') {
    throw new UnsupportedModelError(`text_config.hidden_act '${String(t.hidden_act)}' is not supported (Tessera implements 'silu')`);
  }
  if (t.rope_scaling !== undefined && t.rope_scaling !== null) {
    throw new UnsupportedModelError(`text_config.rope_scaling ${JSON.stringify(t.rope_scaling)} is not supported (plain RoPE only)`);
  }
  if (t.attention_bias === true || t.mlp_bias === true) {
    throw new UnsupportedModelError('text_config.attention_bias / mlp_bias = true is not supported (Llama without biases only)');
  }
  return text;
}

function placeholderId(c: Json, key: string, text: TextConfig): number {
  const id = field(c, '', key, 'number') as number;
  if (!Number.isInteger(id) || id < 0 || id >= text.vocabSize) {
    throw new ModelConfigError(`config.json: ${key} ${id} is not a token id of the vocabulary (vocab_size ${text.vocabSize})`);
  }
  return id;
}

function parseIdefics3Vision(c: Json, text: TextConfig): VisionConfig {
  const v = sub(c, 'vision_config');
  const vHidden = int(v, 'vision_config.', 'hidden_size');
  const vHeads = int(v, 'vision_config.', 'num_attention_heads');
  if (vHidden % vHeads !== 0) {
    throw new ModelConfigError(`config.json: vision hidden_size ${vHidden} is not divisible by num_attention_heads ${vHeads}`);
  }
  const imageSize = int(v, 'vision_config.', 'image_size');
  const patchSize = int(v, 'vision_config.', 'patch_size');
  // Like HF `Idefics3VisionEmbeddings` (num_patches_per_side = image_size // patch_size): a stride-P conv
  // over a tile whose side is not a multiple of P drops the last pixels (SmolVLM-Instruct: 384 px / 14).
  if (imageSize < patchSize) {
    throw new ModelConfigError(`config.json: vision image_size ${imageSize} is smaller than patch_size ${patchSize}`);
  }
  const patchesPerSide = Math.floor(imageSize / patchSize);
  const scaleFactor = int(c, '', 'scale_factor', 2);
  if (patchesPerSide % scaleFactor !== 0) {
    throw new ModelConfigError(`config.json: scale_factor ${scaleFactor} does not divide the ${patchesPerSide} patches per side of a tile`);
  }
  const vision: VisionConfig = {
    hiddenSize: vHidden,
    intermediateSize: int(v, 'vision_config.', 'intermediate_size'),
    numLayers: int(v, 'vision_config.', 'num_hidden_layers'),
    numHeads: vHeads,
    headDim: vHidden / vHeads,
    imageSize,
    patchSize,
    numChannels: int(v, 'vision_config.', 'num_channels', 3),
    layerNormEps: num(v, 'vision_config.', 'layer_norm_eps', 1e-6, EPSILON),
    patchesPerSide,
    imageTokenId: placeholderId(c, 'image_token_id', text),
    scaleFactor,
    imageSeqLen: (patchesPerSide / scaleFactor) ** 2,
  };
  checkHeadDim('config.json vision_config (hidden_size / num_attention_heads)', vision.headDim);
  for (const [key, want] of [['hidden_act', 'gelu_pytorch_tanh']] as const) {
    if (v[key] !== undefined && v[key] !== want) {
      throw new UnsupportedModelError(`vision_config.${key} '${String(v[key])}' is not supported (Tessera implements '${want}')`);
    }
  }
  return vision;
}

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

/** The vision side, or a named error saying the model has none (what image and video paths call). */
export function requireVision(config: ModelConfig): VisionConfig {
  if (!config.vision) {
    throw new UnsupportedModelError(
      `model_type '${config.modelType}' has no vision tower; it takes text${config.audio ? ' and audio' : ''} only`,
    );
  }
  return config.vision;
}
