// Qwen2.5-VL as llama.cpp converts it: a `qwen2vl` model .gguf (the Qwen2 decoder, q/k/v biases, M-RoPE
// sections in qwen2vl.rope.dimension_sections) and an mmproj .gguf whose clip.projector_type is
// `qwen2.5vl_merger`. The tower's tensors (HF visual.*):
//
//   mmproj .gguf                        HF visual.*
//   v.patch_embd.weight (+ .weight.1)   patch_embed.proj.weight, its two temporal taps
//   v.blk.N.attn_q / attn_k / attn_v    blocks.N.attn.qkv, rows [0, D) / [D, 2D) / [2D, 3D) (+ biases)
//   v.blk.N.attn_out                    blocks.N.attn.proj
//   v.blk.N.ln1 / ln2                   blocks.N.norm1 / norm2 (RMSNorm)
//   v.blk.N.ffn_gate / ffn_up / ffn_down   blocks.N.mlp.gate_proj / up_proj / down_proj
//   v.post_ln                           merger.ln_q
//   mm.0 / mm.2                         merger.mlp.0 / merger.mlp.2
//
// clip.vision.n_wa_pattern is fullatt_block_indexes[0] + 1 (the converter checks the indexes are evenly
// spaced by it): full attention in layers n − 1, 2n − 1, ...; the window (112 px) is not in the file.

import type { Json } from '../../model/config-fields';
import type { GgufHeader } from '../../model/weights/gguf/gguf-format';
import type { GgufTensorRef } from '../../model/weights/gguf/gguf-plan';
import type { GgufFamily } from '../family';
import { splitSuffix } from '../gguf-decoder';
import { GgufMetadata } from '../gguf-metadata';
import { qwenImageNormalization, qwenPatchTensor, qwenTextFields, qwenTextTensor, qwenTokenIds, qwenVisionFields } from '../qwen-gguf';

const BLOCK: Record<string, string> = {
  attn_out: 'attn.proj',
  ln1: 'norm1',
  ln2: 'norm2',
  ffn_gate: 'mlp.gate_proj',
  ffn_up: 'mlp.up_proj',
  ffn_down: 'mlp.down_proj',
};

const QKV = ['attn_q', 'attn_k', 'attn_v'];

function visionTensor(ggufName: string): GgufTensorRef | undefined {
  const patch = qwenPatchTensor(ggufName, 'visual');
  if (patch) return patch;
  const parts = splitSuffix(ggufName);
  if (!parts) return undefined;
  const [base, suffix] = parts;
  const global: Record<string, string> = {
    'v.post_ln': 'visual.merger.ln_q',
    'mm.0': 'visual.merger.mlp.0',
    'mm.2': 'visual.merger.mlp.2',
  };
  if (Object.hasOwn(global, base)) return { hfName: `${global[base]}.${suffix}` };
  const m = /^v\.blk\.(\d+)\.(\w+)$/.exec(base);
  if (!m) return undefined;
  const block = `visual.blocks.${m[1]}`;
  const part = QKV.indexOf(m[2]);
  if (part >= 0) {
    // The converter split the fused qkv on its rows: q, k, v, a third each.
    return { hfName: `${block}.attn.qkv.${suffix}`, rows: { index: part, count: 3 } };
  }
  return Object.hasOwn(BLOCK, m[2]) ? { hfName: `${block}.${BLOCK[m[2]]}.${suffix}` } : undefined;
}

function configFiles(model: GgufHeader, mmproj: GgufHeader | undefined, where: string): Record<string, Json> {
  if (!mmproj) return {};
  const v = new GgufMetadata(mmproj, `${where} (mmproj .gguf)`);
  const { fields, section } = qwenTextFields(model, where);
  const vision = qwenVisionFields(mmproj, where);
  const pattern = v.number('clip.vision.n_wa_pattern');
  const depth = vision.depth as number;
  const fullAttention = Array.from({ length: Math.floor(depth / pattern) }, (_, i) => (i + 1) * pattern - 1);
  const config: Json = {
    architectures: ['Qwen2_5_VLForConditionalGeneration'],
    model_type: 'qwen2_5_vl',
    ...fields,
    ...qwenTokenIds(model, where),
    rope_scaling: { type: 'mrope', mrope_section: section },
    vision_config: {
      ...vision,
      hidden_act: 'silu',
      in_chans: 3,
      window_size: 112,
      fullatt_block_indexes: fullAttention,
      tokens_per_second: 2,
    },
  };
  const preprocessor: Json = {
    image_processor_type: 'Qwen2VLImageProcessor',
    processor_class: 'Qwen2_5_VLProcessor',
    min_pixels: 3136,
    max_pixels: 12845056,
    patch_size: vision.patch_size,
    temporal_patch_size: 2,
    merge_size: vision.spatial_merge_size,
    ...qwenImageNormalization(mmproj, where),
  };
  return { 'config.json': config, 'preprocessor_config.json': preprocessor };
}

export const qwen2_5_vlGguf: GgufFamily = {
  reads: (model, mmproj) =>
    model.metadata.get('general.architecture') === 'qwen2vl' && mmproj?.metadata.get('clip.projector_type') === 'qwen2.5vl_merger',
  files: configFiles,
  tensor: (file, ggufName) => (file === 'model' ? qwenTextTensor(ggufName, 'model') : visionTensor(ggufName)),
};
