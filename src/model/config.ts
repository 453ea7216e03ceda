// The parts of a Hugging Face Idefics3 / SmolVLM config.json that Tessera's runtime needs, validated.
// Matches HF `Idefics3Config` (+ `Idefics3VisionConfig`, `LlamaConfig` as text_config); `smolvlm`
// checkpoints use the same schema. Anything the runtime cannot run is a named error before any upload.

import { ModelConfigError, UnsupportedModelError } from '../errors';
import { checkHeadDim } from '../kernels/attention-head';

export const SUPPORTED_MODEL_TYPES = ['idefics3', 'smolvlm'] as const;
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
  imageTokenId: number;
  scaleFactor: number;
  /** lm_head shares the token embedding matrix (no lm_head.weight in the checkpoint). */
  tieWordEmbeddings: boolean;
  /** Image tokens per tile: (patchesPerSide / scaleFactor)^2. */
  imageSeqLen: number;
  vision: VisionConfig;
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
        '(SigLIP vision tower + pixel-shuffle connector + Llama decoder).',
    );
  }
  const v = sub(c, 'vision_config');
  const t = sub(c, 'text_config');
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
    patchesPerSide: Math.floor(imageSize / patchSize),
  };
  checkHeadDim('config.json vision_config (hidden_size / num_attention_heads)', vision.headDim);
  for (const [key, want] of [['hidden_act', 'gelu_pytorch_tanh']] as const) {
    if (v[key] !== undefined && v[key] !== want) {
      throw new UnsupportedModelError(`vision_config.${key} '${String(v[key])}' is not supported (Tessera implements '${want}')`);
    }
  }
  const tHidden = int(t, 'text_config.', 'hidden_size');
  const tHeads = int(t, 'text_config.', 'num_attention_heads');
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
  const scaleFactor = int(c, '', 'scale_factor', 2);
  if (vision.patchesPerSide % scaleFactor !== 0) {
    throw new ModelConfigError(
      `config.json: scale_factor ${scaleFactor} does not divide the ${vision.patchesPerSide} patches per side of a tile`,
    );
  }
  // HF `Idefics3ForConditionalGeneration.tie_weights` reads the top-level flag; Idefics3Config defaults it
  // to false.
  const tie = c.tie_word_embeddings === true;
  const imageTokenId = int(c, '', 'image_token_id');
  if (imageTokenId >= text.vocabSize) {
    throw new ModelConfigError(`config.json: image_token_id ${imageTokenId} is outside the vocabulary (vocab_size ${text.vocabSize})`);
  }
  return {
    modelType: modelType as ModelType,
    imageTokenId,
    scaleFactor,
    tieWordEmbeddings: tie,
    imageSeqLen: (vision.patchesPerSide / scaleFactor) ** 2,
    vision,
    text,
    torchDtype: typeof c.torch_dtype === 'string' ? c.torch_dtype : typeof c.dtype === 'string' ? c.dtype : undefined,
  };
}
