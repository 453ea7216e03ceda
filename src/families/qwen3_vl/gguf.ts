// Qwen3-VL (dense) as llama.cpp converts it: a `qwen3vl` model .gguf (the Qwen3 decoder with q/k norms,
// interleaved M-RoPE sections in qwen3vl.rope.dimension_sections) and an mmproj .gguf whose
// clip.projector_type is `qwen3vl_merger`. The tower's tensors (HF model.visual.*):
//
//   mmproj .gguf                        HF model.visual.*
//   v.patch_embd.weight (+ .weight.1)   patch_embed.proj.weight, its two temporal taps; v.patch_embd.bias
//   v.position_embd                     pos_embed (the learned grid, num_position_embeddings rows)
//   v.blk.N.attn_qkv / attn_out         blocks.N.attn.qkv / attn.proj (not split)
//   v.blk.N.ln1 / ln2                   blocks.N.norm1 / norm2 (LayerNorm)
//   v.blk.N.ffn_up / ffn_down           blocks.N.mlp.linear_fc1 / linear_fc2
//   v.post_ln, mm.0, mm.2               merger.norm, merger.linear_fc1, merger.linear_fc2
//   v.deepstack.L.norm / fc1 / fc2      deepstack_merger_list.i.norm / linear_fc1 / linear_fc2, where L is
//                                       the i-th tower layer clip.vision.is_deepstack_layers marks

import type { Json } from '../../model/config-fields';
import type { GgufHeader } from '../../model/weights/gguf/gguf-format';
import type { GgufTensorRef } from '../../model/weights/gguf/gguf-plan';
import type { GgufFamily } from '../family';
import { splitSuffix } from '../gguf-decoder';
import { GgufMetadata } from '../gguf-metadata';
import { qwenImageNormalization, qwenPatchTensor, qwenTextFields, qwenTextTensor, qwenTokenIds, qwenVisionFields } from '../qwen-gguf';

const P = 'model.visual';

const BLOCK: Record<string, string> = {
  attn_qkv: 'attn.qkv',
  attn_out: 'attn.proj',
  ln1: 'norm1',
  ln2: 'norm2',
  ffn_up: 'mlp.linear_fc1',
  ffn_down: 'mlp.linear_fc2',
};

const MERGER: Record<string, string> = { norm: 'norm', fc1: 'linear_fc1', fc2: 'linear_fc2' };

/** The tower layers DeepStack taps, in order. */
function deepstackTaps(mmproj: GgufHeader | undefined): number[] {
  const flags = mmproj?.metadata.get('clip.vision.is_deepstack_layers');
  return Array.isArray(flags) ? flags.flatMap((f, i) => (f === true ? [i] : [])) : [];
}

function visionTensor(ggufName: string, mmproj: GgufHeader | undefined): GgufTensorRef | undefined {
  const patch = qwenPatchTensor(ggufName, P);
  if (patch) return patch;
  const parts = splitSuffix(ggufName);
  if (!parts) return undefined;
  const [base, suffix] = parts;
  const global: Record<string, string> = {
    'v.position_embd': `${P}.pos_embed`,
    'v.post_ln': `${P}.merger.norm`,
    'mm.0': `${P}.merger.linear_fc1`,
    'mm.2': `${P}.merger.linear_fc2`,
  };
  if (Object.hasOwn(global, base)) return { hfName: `${global[base]}.${suffix}` };
  const block = /^v\.blk\.(\d+)\.(\w+)$/.exec(base);
  if (block) return Object.hasOwn(BLOCK, block[2]) ? { hfName: `${P}.blocks.${block[1]}.${BLOCK[block[2]]}.${suffix}` } : undefined;
  const deep = /^v\.deepstack\.(\d+)\.(\w+)$/.exec(base);
  if (!deep || !Object.hasOwn(MERGER, deep[2])) return undefined;
  const i = deepstackTaps(mmproj).indexOf(Number(deep[1]));
  return i < 0 ? undefined : { hfName: `${P}.deepstack_merger_list.${i}.${MERGER[deep[2]]}.${suffix}` };
}

function configFiles(model: GgufHeader, mmproj: GgufHeader | undefined, where: string): Record<string, Json> {
  if (!mmproj) return {};
  const { fields, section } = qwenTextFields(model, where);
  const vision = qwenVisionFields(mmproj, where);
  const positions = mmproj.tensors.get('v.position_embd.weight');
  const tied = fields.tie_word_embeddings;
  const config: Json = {
    architectures: ['Qwen3VLForConditionalGeneration'],
    model_type: 'qwen3_vl',
    ...qwenTokenIds(model, where),
    tie_word_embeddings: tied,
    text_config: {
      model_type: 'qwen3_vl_text',
      ...fields,
      rope_scaling: { rope_type: 'default', mrope_section: section, mrope_interleaved: true },
    },
    vision_config: {
      ...vision,
      model_type: 'qwen3_vl',
      hidden_act: 'gelu_pytorch_tanh',
      in_channels: 3,
      ...(positions ? { num_position_embeddings: positions.shape[0] } : {}),
      deepstack_visual_indexes: deepstackTaps(mmproj),
    },
  };
  const v = new GgufMetadata(mmproj, `${where} (mmproj .gguf)`);
  const processor = (size: Json, type: Json): Json => ({
    size,
    patch_size: v.number('clip.vision.patch_size'),
    temporal_patch_size: 2,
    merge_size: vision.spatial_merge_size,
    ...qwenImageNormalization(mmproj, where),
    processor_class: 'Qwen3VLProcessor',
    ...type,
  });
  return {
    'config.json': config,
    'preprocessor_config.json': processor(
      { longest_edge: 16777216, shortest_edge: 65536 },
      { image_processor_type: 'Qwen2VLImageProcessorFast' },
    ),
    'video_preprocessor_config.json': processor(
      { longest_edge: 25165824, shortest_edge: 4096 },
      { video_processor_type: 'Qwen3VLVideoProcessor' },
    ),
  };
}

export const qwen3_vlGguf: GgufFamily = {
  reads: (model, mmproj) =>
    model.metadata.get('general.architecture') === 'qwen3vl' && mmproj?.metadata.get('clip.projector_type') === 'qwen3vl_merger',
  files: configFiles,
  tensor: (file, ggufName, headers) =>
    file === 'model' ? qwenTextTensor(ggufName, 'model.language_model') : visionTensor(ggufName, headers.mmproj),
};
