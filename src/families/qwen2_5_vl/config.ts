// HF `Qwen2_5_VLConfig`: the decoder part (`Qwen2_5_VLTextConfig`: a Qwen2 decoder, q/k/v biases, M-RoPE
// with contiguous sections). Its text fields are at config.json's top level in the public checkpoints
// (Qwen2.5-VL-3B-Instruct), and under text_config in those transformers 4.52+ saves.
// Checkpoint names (Qwen2.5-VL-3B-Instruct's model.safetensors.index.json): model.embed_tokens,
// model.layers.i.*, model.norm, visual.*, and lm_head.weight when the head is not tied.

import { ModelConfigError, UnsupportedModelError } from '../../errors';
import { type ModelConfig, parseCommonConfig, type Qwen25VisionConfig } from '../../model/config';
import { int, type Json, sub } from '../../model/config-fields';
import { checkRopeType, parseMropeSection, parseQwenVisionBase, qwenImageTokenId } from '../qwen-config';

/** HF `Qwen2_5_VLTextConfig.__init__`'s defaults the runtime reads. */
const QWEN2_5_VL_TEXT_DEFAULTS: Json = { rms_norm_eps: 1e-6, rope_theta: 1000000.0, max_position_embeddings: 32768 };

/** The decoder of a qwen2_5_vl config.json (the vision tower is parsed with it when it lands). */
export function parseQwen25VlText(c: Json): Omit<ModelConfig, 'vision' | 'audio'> {
  const section = (x: Json): Json => (x.text_config && typeof x.text_config === 'object' ? (x.text_config as Json) : x);
  const t = section(c);
  if (t.use_sliding_window === true) {
    throw new UnsupportedModelError('text_config.use_sliding_window = true is not supported (Tessera attends to the whole context)');
  }
  const common = parseCommonConfig(c, {
    id: 'qwen2_5_vl',
    decoderNames: { model: 'model', lmHead: 'lm_head.weight' },
    decoder: {
      textSection: section,
      textDefaults: QWEN2_5_VL_TEXT_DEFAULTS,
      qkvBias: true,
      // HF Qwen2_5_VLConfig requires rope_scaling {type: 'mrope', mrope_section}; its attention splits the
      // frequencies in order: section[0] t, then h, then w.
      ropeScaling: (rope, headDim) => {
        checkRopeType(rope, 'rope_scaling');
        return { section: parseMropeSection(rope, 'rope_scaling', headDim), interleaved: false };
      },
    },
  });
  // transformers 4.52+ saves (fine-tunes) spell the decoder model.language_model.* and the tower model.visual.*.
  common.checkpointSpellings = [
    ['model.', 'model.language_model.'],
    ['visual.', 'model.visual.'],
  ];
  // Without it the images' positions would be lost: HF's attention reads rope_scaling.mrope_section.
  if (!common.text.mrope)
    throw new ModelConfigError('config.json: a qwen2_5_vl decoder needs rope_scaling.mrope_section (M-RoPE); this config has none');
  return common;
}

/** A qwen2_5_vl config.json: the Qwen2 decoder and the vision tower. */
export function parseQwen25VlConfig(c: Json): ModelConfig {
  const common = parseQwen25VlText(c);
  return { ...common, qwenVision: { ...parseQwen25Vision(c, common.text.hiddenSize), imageTokenId: qwenImageTokenId(c, common.text) } };
}

/** HF `Qwen2_5_VLVisionConfig.__init__`'s defaults. */
const QWEN2_5_VL_VISION_DEFAULTS: Json = {
  depth: 32,
  hidden_size: 3584,
  hidden_act: 'silu',
  intermediate_size: 3420,
  num_heads: 16,
  in_channels: 3,
  patch_size: 14,
  spatial_merge_size: 2,
  temporal_patch_size: 2,
  tokens_per_second: 4,
  window_size: 112,
  out_hidden_size: 3584,
  fullatt_block_indexes: [7, 15, 23, 31],
};

/**
 * The vision tower of a qwen2_5_vl config.json. The public checkpoints name the input channels `in_chans`
 * (HF reads either: in_channels is the class's argument, in_chans an older spelling).
 */
function parseQwen25Vision(c: Json, outHidden: number): Omit<Qwen25VisionConfig, 'imageTokenId'> {
  const raw = sub(c, 'vision_config');
  const v: Json = { ...QWEN2_5_VL_VISION_DEFAULTS, ...raw, in_channels: raw.in_channels ?? raw.in_chans ?? 3 };
  const p = 'vision_config.';
  const base = parseQwenVisionBase(v, outHidden, { want: 'silu', why: "the Qwen2.5-VL tower's MLP is SwiGLU" });
  const windowSize = int(v, p, 'window_size');
  if (windowSize % (base.patchSize * base.mergeSize) !== 0) {
    throw new ModelConfigError(
      `config.json: ${p}window_size ${windowSize} is not a multiple of patch_size × spatial_merge_size = ${base.patchSize * base.mergeSize}`,
    );
  }
  const full = v.fullatt_block_indexes;
  if (!Array.isArray(full) || !full.every((i) => Number.isInteger(i) && i >= 0 && i < base.numLayers)) {
    throw new ModelConfigError(
      `config.json: ${p}fullatt_block_indexes must list layers of 0..${base.numLayers - 1}, found ${JSON.stringify(full)}`,
    );
  }
  return {
    kind: 'qwen2_5_vl',
    ...base,
    windowSize,
    fullAttentionLayers: full as number[],
    tokensPerSecond: int(v, p, 'tokens_per_second'),
    prefix: 'visual',
  };
}
