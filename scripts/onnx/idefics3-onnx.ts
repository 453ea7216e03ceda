// The ONNX layout transformers.js (and Hugging Face's onnx-community exports) give an Idefics3 / SmolVLM
// checkpoint, built from its safetensors weights with onnx-graph.ts:
//
//   onnx/vision_encoder.onnx        pixel_values f32 [batch, num_images, 3, H, W],
//                                   pixel_attention_mask bool [batch, num_images, H, W]
//                                   -> image_features f32 [batch·num_images, tokens per tile, text hidden]
//                                   (SigLIP tower + post_layernorm + connector: pixel shuffle, Linear)
//   onnx/embed_tokens.onnx          input_ids i64 [batch, seq] -> inputs_embeds f32 [batch, seq, hidden]
//   onnx/decoder_model_merged.onnx  inputs_embeds, attention_mask i64 [batch, past + seq],
//                                   position_ids i64 [batch, seq],
//                                   past_key_values.{i}.key / .value f32 [batch, kv heads, past, head_dim]
//                                   -> logits f32 [batch, seq, vocab], present.{i}.key / .value
//
// The math is HF's modeling code (Idefics3VisionTransformer, Idefics3Connector, LlamaModel), the same that
// bench/onnx-export/modules.py exports from torch: pre-norm SigLIP layers with tanh GELU, HF's pixel_shuffle
// reshape sequence, RMSNorm, rotate-half RoPE, grouped-query attention, an additive mask that is causal over
// cache positions and zero where attention_mask is 0 (padding may sit anywhere in a row). Vision position ids
// are the identity (tiles are always full: the processor pads images, not tiles).

import { GraphBuilder } from './onnx-graph';
import {
  causalMaskBias,
  F32_MIN,
  geluTanh,
  groupedQueryAttention,
  layerNorm,
  linear,
  rmsNorm,
  rotateHalf,
  swigluMlp,
  transposed,
  type WeightReader,
} from './onnx-layers';

type Config = Record<string, any>;

export function visionEncoderGraph(config: Config, read: WeightReader): GraphBuilder {
  const v = config.vision_config;
  const D: number = v.hidden_size;
  const P: number = v.patch_size;
  const size: number = v.image_size;
  const heads: number = v.num_attention_heads;
  const hd = D / heads;
  const n = size / P;
  const S = n * n;
  const r: number = config.scale_factor;
  const eps: number = v.layer_norm_eps;
  const textHidden: number = config.text_config.hidden_size;
  if ((v.hidden_act ?? 'gelu_pytorch_tanh') !== 'gelu_pytorch_tanh') throw new Error(`vision hidden_act ${v.hidden_act} is not exported`);
  if (n % r !== 0) throw new Error(`a ${n}×${n} patch grid does not divide by scale_factor ${r}`);
  const g = new GraphBuilder('vision_encoder');
  const pixels = g.input('pixel_values', 'float', ['batch_size', 'num_images', 3, size, size]);
  const mask = g.input('pixel_attention_mask', 'bool', ['batch_size', 'num_images', size, size]);
  const px = g.op('Reshape', [pixels, g.ints([-1, 3, size, size])]);
  const pw = read('model.vision_model.embeddings.patch_embedding.weight');
  const pb = read('model.vision_model.embeddings.patch_embedding.bias');
  const conv = g.op(
    'Conv',
    [px, g.weight('patch_embedding.weight', pw.data, pw.shape), g.weight('patch_embedding.bias', pb.data, pb.shape)],
    {
      kernel_shape: [P, P],
      strides: [P, P],
    },
  );
  let x = g.op('Transpose', [g.op('Reshape', [conv, g.ints([0, D, S])])], { perm: [0, 2, 1] });
  const pos = read('model.vision_model.embeddings.position_embedding.weight');
  x = g.op('Add', [x, g.weight('position_embedding', pos.data.subarray(0, S * D), [S, D])]);
  // A patch is an attention key when any of its pixels is real (HF's patch_attention_mask).
  const m5 = g.op('Reshape', [g.op('Cast', [mask], { to: 1 }), g.ints([-1, n, P, n, P])]);
  const real = g.op('Greater', [g.op('ReduceSum', [m5, g.ints([2, 4])], { keepdims: 0 }), g.floats([0])]);
  const keyBias = g.op('Where', [g.op('Reshape', [real, g.ints([-1, 1, 1, S])]), g.floats([0]), g.floats([F32_MIN])]);
  const heads4 = g.ints([0, 0, heads, hd]);
  for (let i = 0; i < v.num_hidden_layers; i++) {
    const p = `model.vision_model.encoder.layers.${i}.`;
    const h = layerNorm(g, read, x, `${p}layer_norm1`, eps);
    const split = (name: string) =>
      g.op('Transpose', [g.op('Reshape', [linear(g, read, h, `${p}self_attn.${name}`, true), heads4])], { perm: [0, 2, 1, 3] });
    const q = split('q_proj');
    const k = split('k_proj');
    const vv = split('v_proj');
    const scores = g.op('Add', [
      g.op('Mul', [g.op('MatMul', [q, g.op('Transpose', [k], { perm: [0, 1, 3, 2] })]), g.floats([hd ** -0.5])]),
      keyBias,
    ]);
    const o = g.op('MatMul', [g.op('Softmax', [scores], { axis: -1 }), vv]);
    const merged = g.op('Reshape', [g.op('Transpose', [o], { perm: [0, 2, 1, 3] }), g.ints([0, 0, D])]);
    x = g.op('Add', [x, linear(g, read, merged, `${p}self_attn.out_proj`, true)]);
    const h2 = layerNorm(g, read, x, `${p}layer_norm2`, eps);
    x = g.op('Add', [x, linear(g, read, geluTanh(g, linear(g, read, h2, `${p}mlp.fc1`, true)), `${p}mlp.fc2`, true)]);
  }
  x = layerNorm(g, read, x, 'model.vision_model.post_layernorm', eps);
  // HF Idefics3Connector.pixel_shuffle, step for step.
  x = g.op('Reshape', [x, g.ints([-1, n, n / r, D * r])]);
  x = g.op('Transpose', [x], { perm: [0, 2, 1, 3] });
  x = g.op('Reshape', [x, g.ints([-1, n / r, n / r, D * r * r])]);
  x = g.op('Transpose', [x], { perm: [0, 2, 1, 3] });
  x = g.op('Reshape', [x, g.ints([-1, S / (r * r), D * r * r])]);
  const features = linear(g, read, x, 'model.connector.modality_projection.proj', false);
  g.output(features, 'image_features', 'float', ['num_tiles', S / (r * r), textHidden]);
  return g;
}

export function embedTokensGraph(config: Config, read: WeightReader): GraphBuilder {
  const t = config.text_config;
  const g = new GraphBuilder('embed_tokens');
  const ids = g.input('input_ids', 'int64', ['batch_size', 'sequence_length']);
  const w = read('model.text_model.embed_tokens.weight');
  g.output(g.op('Gather', [g.weight('embed_tokens.weight', w.data, w.shape), ids]), 'inputs_embeds', 'float', [
    'batch_size',
    'sequence_length',
    t.hidden_size,
  ]);
  return g;
}

export function decoderGraph(config: Config, read: WeightReader): GraphBuilder {
  const t = config.text_config;
  const d: number = t.hidden_size;
  const H: number = t.num_attention_heads;
  const KV: number = t.num_key_value_heads;
  const hd: number = t.head_dim ?? d / H;
  const G = H / KV;
  const eps: number = t.rms_norm_eps;
  if (t.rope_scaling) throw new Error('rope_scaling is not exported');
  if ((t.hidden_act ?? 'silu') !== 'silu') throw new Error(`text hidden_act ${t.hidden_act} is not exported`);
  const tied = Boolean(config.tie_word_embeddings ?? t.tie_word_embeddings);
  const g = new GraphBuilder('decoder_model_merged');
  const embeds = g.input('inputs_embeds', 'float', ['batch_size', 'sequence_length', d]);
  const attentionMask = g.input('attention_mask', 'int64', ['batch_size', 'total_sequence_length']);
  const positionIds = g.input('position_ids', 'int64', ['batch_size', 'sequence_length']);
  const past: string[] = [];
  for (let i = 0; i < t.num_hidden_layers; i++) {
    for (const kind of ['key', 'value'])
      past.push(g.input(`past_key_values.${i}.${kind}`, 'float', ['batch_size', KV, 'past_sequence_length', hd]));
  }
  // RoPE (HF LlamaRotaryEmbedding): float32 inv_freq, cat(freqs, freqs), cos/sin as [batch, 1, seq, hd].
  const invFreq = Float32Array.from({ length: hd / 2 }, (_, j) => 1 / (t.rope_theta ?? 10000) ** ((2 * j) / hd));
  const freqs = g.op('Mul', [
    g.op('Unsqueeze', [g.op('Cast', [positionIds], { to: 1 }), g.ints([2])]),
    g.weight('inv_freq', invFreq, [hd / 2]),
  ]);
  const emb = g.op('Unsqueeze', [g.op('Concat', [freqs, freqs], { axis: -1 }), g.ints([1])]);
  const cos = g.op('Cos', [emb]);
  const sin = g.op('Sin', [emb]);
  const bias = causalMaskBias(g, embeds, attentionMask, G);
  const rope = rotateHalf(g, hd, cos, sin);
  const norm = (x: string, name: string) => rmsNorm(g, read, x, name, eps);
  let x = embeds;
  for (let i = 0; i < t.num_hidden_layers; i++) {
    const p = `model.text_model.layers.${i}.`;
    const h = norm(x, `${p}input_layernorm`);
    const heads = (name: string, n: number) =>
      g.op('Transpose', [g.op('Reshape', [linear(g, read, h, `${p}self_attn.${name}`, false), g.ints([0, 0, n, hd])])], {
        perm: [0, 2, 1, 3],
      });
    const q = rope(heads('q_proj', H));
    const k = g.op('Concat', [past[2 * i]!, rope(heads('k_proj', KV))], { axis: 2 });
    const v = g.op('Concat', [past[2 * i + 1]!, heads('v_proj', KV)], { axis: 2 });
    g.output(k, `present.${i}.key`, 'float', ['batch_size', KV, 'total_sequence_length', hd]);
    g.output(v, `present.${i}.value`, 'float', ['batch_size', KV, 'total_sequence_length', hd]);
    const merged = groupedQueryAttention(g, q, k, v, bias, { numHeads: H, kvHeads: KV, headDim: hd });
    x = g.op('Add', [x, linear(g, read, merged, `${p}self_attn.o_proj`, false)]);
    x = g.op('Add', [x, swigluMlp(g, read, norm(x, `${p}post_attention_layernorm`), `${p}mlp.`)]);
  }
  x = norm(x, 'model.text_model.norm');
  const head = tied ? read('model.text_model.embed_tokens.weight') : read('lm_head.weight');
  const w = transposed(head);
  g.output(g.op('MatMul', [x, g.weight('lm_head.weight', w.data, w.dims)]), 'logits', 'float', [
    'batch_size',
    'sequence_length',
    t.vocab_size,
  ]);
  // Outputs in HF's order: logits first, then present.*.
  g.moveOutputFirst('logits');
  return g;
}
