// HF `Idefics3Config` (+ `Idefics3VisionConfig`, `LlamaConfig` as text_config), which SmolVLM and SmolVLM2
// checkpoints use: a SigLIP tower, a pixel-shuffle connector, a Llama decoder. Checkpoint names:
// model.vision_model.*, model.connector.*, model.text_model.*, lm_head.weight.

import { ModelConfigError, UnsupportedModelError } from '../../errors';
import { checkHeadDim } from '../../kernels/attention-head';
import { type ModelConfig, parseCommonConfig, placeholderId, type TextConfig, type VisionConfig } from '../../model/config';
import { EPSILON, int, type Json, num, sub } from '../../model/config-fields';

export function parseIdefics3Config(c: Json): ModelConfig {
  const common = parseCommonConfig(c, { id: 'idefics3', decoderNames: { model: 'model.text_model', lmHead: 'lm_head.weight' } });
  return { ...common, vision: parseIdefics3Vision(c, common.text) };
}

/** HF `Idefics3VisionConfig.__init__`'s defaults. */
const IDEFICS3_VISION_DEFAULTS: Json = {
  hidden_size: 1152,
  intermediate_size: 3072,
  num_hidden_layers: 12,
  num_attention_heads: 16,
  num_channels: 3,
  image_size: 224,
  patch_size: 32,
  layer_norm_eps: 1e-6,
};

/**
 * HF `Idefics3VisionConfig` (SmolVLM's `SmolVLMVisionConfig` has the same fields and defaults) and the
 * connector's scale_factor. A field the file leaves out takes that class's default, as transformers loads
 * it: SmolVLM2-500M-Video-Instruct's vision_config names neither intermediate_size nor num_hidden_layers.
 */
function parseIdefics3Vision(c: Json, text: TextConfig): VisionConfig {
  const v = { ...IDEFICS3_VISION_DEFAULTS, ...sub(c, 'vision_config') };
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
