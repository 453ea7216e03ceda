// HF `Qwen3VLConfig`: the decoder part (`Qwen3VLTextConfig`: a Qwen3 decoder, q/k RMSNorm per head, no
// biases, interleaved M-RoPE). Checkpoint names (Qwen3-VL-2B/4B-Instruct, one model.safetensors):
// model.language_model.embed_tokens, model.language_model.layers.i.*, model.language_model.norm,
// model.visual.*, and lm_head.weight when the head is not tied (Qwen3-VL-8B).

import { ModelConfigError } from '../../errors';
import { type ModelConfig, parseCommonConfig, type Qwen3VisionConfig } from '../../model/config';
import { int, type Json, sub } from '../../model/config-fields';
import { checkRopeType, parseMropeSection, parseQwenVisionBase, qwenImageTokenId } from '../qwen-config';

/** HF `Qwen3VLTextConfig.__init__`'s defaults the runtime reads (transformers 4.57). */
const QWEN3_VL_TEXT_DEFAULTS: Json = {
  head_dim: 128,
  rms_norm_eps: 1e-6,
  rope_theta: 5000000.0,
  max_position_embeddings: 128000,
  num_key_value_heads: 32,
};

/** The section `Qwen3VLTextRotaryEmbedding` takes when rope_scaling names none. */
const DEFAULT_SECTION = [24, 20, 20];

/** The decoder of a qwen3_vl config.json (the vision tower and DeepStack are parsed with it when they land). */
export function parseQwen3VlText(c: Json): Omit<ModelConfig, 'vision' | 'audio'> {
  let json = c;
  const text = c.text_config;
  // transformers 5 writes rope_parameters {rope_type, rope_theta, mrope_section, mrope_interleaved} in
  // place of rope_theta + rope_scaling.
  if (text && typeof text === 'object' && (text as Json).rope_parameters && (text as Json).rope_scaling === undefined) {
    const params = (text as Json).rope_parameters as Json;
    if (typeof params !== 'object') throw new ModelConfigError('config.json: text_config.rope_parameters is not an object');
    json = { ...c, text_config: { ...(text as Json), rope_scaling: params, rope_theta: params.rope_theta ?? (text as Json).rope_theta } };
  }
  const common = parseCommonConfig(json, {
    id: 'qwen3_vl',
    decoderNames: { model: 'model.language_model', lmHead: 'lm_head.weight' },
    decoder: {
      textDefaults: QWEN3_VL_TEXT_DEFAULTS,
      qkNorm: true,
      // Qwen3-VL's rotary embedding always interleaves the axes (apply_interleaved_mrope), whatever
      // rope_scaling.mrope_interleaved says.
      ropeScaling: (rope, headDim) => {
        checkRopeType(rope, 'text_config.rope_scaling');
        return { section: parseMropeSection(rope, 'text_config.rope_scaling', headDim, DEFAULT_SECTION), interleaved: true };
      },
    },
  });
  // DeepStack: the vision tower's deepstack_visual_indexes name the tower layers it taps; decoder layer
  // i takes the i-th one's rows (HF Qwen3VLTextModel: deepstack_visual_embeds[layer_idx]).
  const vision = c.vision_config;
  // HF Qwen3VLVisionConfig's default when the field is left out: [8, 16, 24].
  const taps = vision && typeof vision === 'object' ? ((vision as Json).deepstack_visual_indexes ?? [8, 16, 24]) : undefined;
  if (taps !== undefined) {
    if (!Array.isArray(taps) || !taps.every((i) => Number.isInteger(i) && i >= 0)) {
      throw new ModelConfigError(
        `config.json: vision_config.deepstack_visual_indexes must list tower layers, found ${JSON.stringify(taps)}`,
      );
    }
    if (taps.length > common.text.numLayers) {
      throw new ModelConfigError(
        `config.json: ${taps.length} DeepStack levels (vision_config.deepstack_visual_indexes) but ${common.text.numLayers} decoder layers to add them to`,
      );
    }
    if (taps.length > 0) common.text.deepstackLayers = taps.length;
  }
  if (!common.text.mrope) {
    const section = parseMropeSection({}, 'text_config.rope_scaling', common.text.headDim, DEFAULT_SECTION);
    common.text.mrope = { section, interleaved: true };
  }
  return common;
}

/** A qwen3_vl config.json: the Qwen3 decoder with DeepStack and the vision tower. */
export function parseQwen3VlConfig(c: Json): ModelConfig {
  const common = parseQwen3VlText(c);
  return { ...common, qwenVision: { ...parseQwen3Vision(c, common.text.hiddenSize), imageTokenId: qwenImageTokenId(c, common.text) } };
}

/** HF `Qwen3VLVisionConfig.__init__`'s defaults. */
const QWEN3_VL_VISION_DEFAULTS: Json = {
  depth: 27,
  hidden_size: 1152,
  hidden_act: 'gelu_pytorch_tanh',
  intermediate_size: 4304,
  num_heads: 16,
  in_channels: 3,
  patch_size: 16,
  spatial_merge_size: 2,
  temporal_patch_size: 2,
  out_hidden_size: 3584,
  num_position_embeddings: 2304,
  deepstack_visual_indexes: [8, 16, 24],
};

function parseQwen3Vision(c: Json, outHidden: number): Omit<Qwen3VisionConfig, 'imageTokenId'> {
  const v: Json = { ...QWEN3_VL_VISION_DEFAULTS, ...sub(c, 'vision_config') };
  const p = 'vision_config.';
  const base = parseQwenVisionBase(v, outHidden, { want: 'gelu_pytorch_tanh', why: 'Tessera implements' });
  const positions = int(v, p, 'num_position_embeddings');
  const gridPerSide = Math.round(Math.sqrt(positions));
  if (gridPerSide * gridPerSide !== positions) {
    throw new ModelConfigError(`config.json: ${p}num_position_embeddings ${positions} is not a square grid of learned positions`);
  }
  const taps = v.deepstack_visual_indexes as number[];
  if (!taps.every((i) => i < base.numLayers)) {
    throw new ModelConfigError(
      `config.json: ${p}deepstack_visual_indexes ${JSON.stringify(taps)} must be layers of 0..${base.numLayers - 1}`,
    );
  }
  return { kind: 'qwen3_vl', ...base, prefix: 'model.visual', gridPerSide, deepstackTaps: taps };
}
