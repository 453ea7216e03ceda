// The parts of a Hugging Face config.json that Tessera's runtime needs, validated: what every family shares
// (the decoder, the head's tie, the checkpoint's tensor names) and the towers a family may have
// (`config.vision`, `config.audio`). Each family parses its own sections (src/families/<name>/config.ts);
// anything the runtime cannot run is a named error before any upload.

import { ModelConfigError, UnsupportedModelError } from '../errors';
import { checkHeadDim } from '../kernels/attention-head';
import { EPSILON, field, int, type Json, num, sub } from './config-fields';

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
interface AudioProjectorConfig {
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

/**
 * A Qwen-VL vision transformer: patch rows of C·T·P·P values (temporalPatchSize frames of patchSize²
 * pixels) through a Conv3d as one matmul, 2-D rotary attention, and a merger that folds each
 * mergeSize × mergeSize block of patches into one LM token.
 */
interface QwenVisionBase {
  hiddenSize: number;
  intermediateSize: number;
  numLayers: number;
  numHeads: number;
  /** hiddenSize / numHeads. */
  headDim: number;
  patchSize: number;
  temporalPatchSize: number;
  inChannels: number;
  /** Patches per side of the block the merger folds into one token. */
  mergeSize: number;
  /** The merger's output width (the decoder's hidden size). */
  outHiddenSize: number;
  /** Where the tower's tensors are in the checkpoint ('visual', 'model.visual'). */
  prefix: string;
  /** The <|image_pad|> token an image's rows replace (config.json image_token_id). */
  imageTokenId: number;
}

/**
 * Qwen2.5-VL's tower (HF `Qwen2_5_VisionTransformerPretrainedModel`): RMSNorm + SwiGLU blocks, attention
 * within windows of windowSize pixels except in the fullAttentionLayers.
 */
export interface Qwen25VisionConfig extends QwenVisionBase {
  kind: 'qwen2_5_vl';
  /** Attention windows, in pixels per side (a multiple of patchSize · mergeSize). */
  windowSize: number;
  /** Layers that attend over a whole frame rather than within windows. */
  fullAttentionLayers: readonly number[];
  /** Video time steps per second of M-RoPE's t axis. */
  tokensPerSecond: number;
}

/**
 * Qwen3-VL's tower (HF `Qwen3VLVisionModel`): a patch bias, learned positions on a gridPerSide² grid
 * interpolated bilinearly to each image's patch grid, LayerNorm + tanh-GELU MLP blocks attending over
 * each frame, and DeepStack: after each of the deepstackTaps layers, a merger of its own (LayerNorm after
 * the 2×2 fold) gives one level of rows the decoder adds (TextConfig.deepstackLayers).
 */
export interface Qwen3VisionConfig extends QwenVisionBase {
  kind: 'qwen3_vl';
  /** Side of the learned position grid: sqrt(num_position_embeddings). */
  gridPerSide: number;
  deepstackTaps: readonly number[];
}

export type QwenVisionConfig = Qwen25VisionConfig | Qwen3VisionConfig;

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
  /** q, k and v projections carry biases (Qwen2's decoder; o_proj has none). Llama: absent. */
  qkvBias?: boolean;
  /** RMSNorm per head on q and k before RoPE, with weights q_norm / k_norm of headDim (Qwen3's decoder). */
  qkNorm?: boolean;
  /**
   * M-RoPE (Qwen-VL): each token has three positions (t, h, w) and each frequency turns by one of them
   * (kernels/rope.ts mropeAxes). Absent: plain RoPE at the token's index.
   */
  mrope?: MropeConfig;
  /**
   * DeepStack (Qwen3-VL): after each of the first deepstackLayers decoder layers, that level's vision rows
   * are added to the hidden state at the media rows. Absent: none.
   */
  deepstackLayers?: number;
}

/** The frequencies of each M-RoPE axis (t, h, w; they sum to headDim / 2), contiguous or interleaved. */
export interface MropeConfig {
  section: readonly [number, number, number];
  interleaved: boolean;
}

/** What a family's decoder adds to the Llama layer, and how its config names it. */
export interface DecoderVariant {
  /** Where text_config's fields are (default: config.json's `text_config`; Qwen2.5-VL keeps them at the top level). */
  textSection?: (c: Json) => Json;
  /** Defaults for the fields the family's HF text config class leaves out. */
  textDefaults?: Json;
  qkvBias?: boolean;
  qkNorm?: boolean;
  /** text_config.rope_scaling → M-RoPE; without it, any rope_scaling is refused. */
  ropeScaling?: (ropeScaling: Json, headDim: number) => MropeConfig;
}

/** Where the decoder's tensors are in the checkpoint (its family's names). */
export interface DecoderTensorNames {
  /** Prefix of embed_tokens, layers.i.* and norm: 'model.text_model' (Idefics3), 'language_model.model' (Voxtral). */
  model: string;
  /** The untied LM head's tensor. */
  lmHead: string;
}

export interface ModelConfig {
  /** config.json's model_type. */
  modelType: string;
  /** The family that parsed it (src/families/registry.ts). */
  family: string;
  /** The decoder's checkpoint tensor names. */
  decoderNames: DecoderTensorNames;
  /**
   * Other spellings of the checkpoint's names, as [canonical prefix, alternative prefix]: a tensor the
   * checkpoint lacks under its canonical name is read under the alternative when present there (Qwen2.5-VL
   * fine-tunes saved by transformers 4.52 or later write model.language_model.* and model.visual.*).
   */
  checkpointSpellings?: ReadonlyArray<readonly [string, string]>;
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
  /** A Qwen-VL vision tower (qwen2_5_vl). */
  qwenVision?: QwenVisionConfig;
  text: TextConfig;
  /** dtype the checkpoint says it was saved in (informational; tensors carry their own). */
  torchDtype: string | undefined;
}

/**
 * The fields every family's config has: the decoder (text_config, where `textDefaults` fill what the
 * family's HF config class defaults), the LM head's tie and the saved dtype.
 */
export function parseCommonConfig(
  c: Json,
  family: { id: string; decoderNames: DecoderTensorNames; decoder?: DecoderVariant },
): Omit<ModelConfig, 'vision' | 'audio'> {
  const text = parseTextConfig(c, family.decoder ?? {});
  const { tie, tieIfHeadMissing } = tiedEmbeddings(c);
  const torchDtype = typeof c.torch_dtype === 'string' ? c.torch_dtype : typeof c.dtype === 'string' ? c.dtype : undefined;
  return {
    modelType: String(c.model_type),
    family: family.id,
    decoderNames: family.decoderNames,
    tieWordEmbeddings: tie,
    tieIfHeadMissing,
    text,
    torchDtype,
  };
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

function parseTextConfig(c: Json, variant: DecoderVariant): TextConfig {
  const defaults = variant.textDefaults ?? {};
  const t = { ...defaults, ...(variant.textSection ? variant.textSection(c) : sub(c, 'text_config')) };
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
    if (!variant.ropeScaling || typeof t.rope_scaling !== 'object') {
      throw new UnsupportedModelError(`text_config.rope_scaling ${JSON.stringify(t.rope_scaling)} is not supported (plain RoPE only)`);
    }
    text.mrope = variant.ropeScaling(t.rope_scaling as Json, text.headDim);
  }
  if (t.attention_bias === true || t.mlp_bias === true) {
    throw new UnsupportedModelError(
      'text_config.attention_bias / mlp_bias = true is not supported (biases on every attention and MLP projection; ' +
        'Tessera runs the Llama layer without biases, and the Qwen2 one with q/k/v biases)',
    );
  }
  if (variant.qkvBias) text.qkvBias = true;
  if (variant.qkNorm) text.qkNorm = true;
  return text;
}

/** A placeholder token id (image_token_id, audio_token_id) that must be in the vocabulary. */
export function placeholderId(c: Json, key: string, text: TextConfig): number {
  const id = field(c, '', key, 'number') as number;
  if (!Number.isInteger(id) || id < 0 || id >= text.vocabSize) {
    throw new ModelConfigError(`config.json: ${key} ${id} is not a token id of the vocabulary (vocab_size ${text.vocabSize})`);
  }
  return id;
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
