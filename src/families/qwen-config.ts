// What the Qwen-VL families' configs share: M-RoPE read from a text config's rope_scaling (or transformers
// 5's rope_parameters), checked against the head size; the fields both vision towers read the same way.

import { ModelConfigError, UnsupportedModelError } from '../errors';
import { checkHeadDim } from '../kernels/attention-head';
import { type MropeConfig, placeholderId, type Qwen25VisionConfig, type TextConfig } from '../model/config';
import { int, type Json } from '../model/config-fields';

/**
 * `mrope_section` (the frequencies of t, h and w, summing to head_dim / 2) from a rope_scaling or
 * rope_parameters object; `fallback` is the family config class's default when the object names none.
 */
export function parseMropeSection(rope: Json, where: string, headDim: number, fallback?: readonly number[]): MropeConfig['section'] {
  const raw = rope.mrope_section ?? fallback;
  if (!Array.isArray(raw) || raw.length !== 3 || !raw.every((s) => Number.isInteger(s) && s >= 0)) {
    throw new ModelConfigError(`config.json: ${where}.mrope_section must be three whole numbers (t, h, w), found ${JSON.stringify(raw)}`);
  }
  const [t, h, w] = raw as number[];
  if (t + h + w !== headDim / 2) {
    throw new ModelConfigError(
      `config.json: ${where}.mrope_section [${t}, ${h}, ${w}] sums to ${t + h + w}; it must be head_dim / 2 = ${headDim / 2} ` +
        '(one axis per rotary frequency)',
    );
  }
  return [t, h, w];
}

/** A rope type other than plain (default) M-RoPE is refused by name. */
export function checkRopeType(rope: Json, where: string): void {
  const type = rope.rope_type ?? rope.type;
  if (type !== undefined && type !== 'default' && type !== 'mrope') {
    throw new ModelConfigError(
      `config.json: ${where}.rope_type '${String(type)}' is not supported (Tessera runs M-RoPE without scaling: 'default' or 'mrope')`,
    );
  }
}

/** The fields of a Qwen-VL vision_config both towers read (the family's defaults already merged into `v`). */
type QwenVisionBase = Omit<
  Qwen25VisionConfig,
  'kind' | 'windowSize' | 'fullAttentionLayers' | 'tokensPerSecond' | 'prefix' | 'imageTokenId'
>;

/**
 * Sizes, head size (a multiple of 4: the 2-D rotary gives a quarter of it to each axis, twice), the MLP's
 * activation (`act`, the one the family's tower implements) and the merger's width, which must be the
 * decoder's hidden size.
 */
export function parseQwenVisionBase(v: Json, outHidden: number, act: { want: string; why: string }): QwenVisionBase {
  const p = 'vision_config.';
  const hidden = int(v, p, 'hidden_size');
  const heads = int(v, p, 'num_heads');
  if (hidden % heads !== 0) throw new ModelConfigError(`config.json: ${p}hidden_size ${hidden} is not divisible by num_heads ${heads}`);
  const headDim = hidden / heads;
  checkHeadDim(`config.json ${p}(hidden_size / num_heads)`, headDim);
  if (headDim % 4 !== 0) {
    throw new ModelConfigError(
      `config.json: the vision head_dim ${headDim} must be a multiple of 4 (2-D rotary: a quarter per axis and half)`,
    );
  }
  if (v.hidden_act !== act.want) {
    throw new UnsupportedModelError(`${p}hidden_act '${String(v.hidden_act)}' is not supported (${act.why}: '${act.want}')`);
  }
  const out = int(v, p, 'out_hidden_size');
  if (out !== outHidden) {
    throw new ModelConfigError(`config.json: ${p}out_hidden_size ${out} must equal the decoder's hidden_size ${outHidden}`);
  }
  return {
    hiddenSize: hidden,
    intermediateSize: int(v, p, 'intermediate_size'),
    numLayers: int(v, p, 'depth'),
    numHeads: heads,
    headDim,
    patchSize: int(v, p, 'patch_size'),
    temporalPatchSize: int(v, p, 'temporal_patch_size'),
    inChannels: int(v, p, 'in_channels'),
    mergeSize: int(v, p, 'spatial_merge_size'),
    outHiddenSize: out,
  };
}

/** <|image_pad|>'s id in the Qwen2 vocabulary: HF Qwen2_5_VLConfig's and Qwen3VLConfig's image_token_id default. */
const QWEN_IMAGE_PAD_ID = 151655;

/** config.json image_token_id (the class default when left out), checked against the vocabulary. */
export function qwenImageTokenId(c: Json, text: TextConfig): number {
  return placeholderId({ image_token_id: c.image_token_id ?? QWEN_IMAGE_PAD_ID }, 'image_token_id', text);
}
