// The language-model graphs of a Qwen-VL checkpoint (qwen2_5_vl, qwen3_vl) in the layout transformers.js
// loads for them (Qwen2_5_VLForConditionalGeneration, which its Qwen3VLForConditionalGeneration extends),
// built from the checkpoint's safetensors with onnx-graph.ts:
//
//   onnx/embed_tokens.onnx          input_ids i64 [batch, seq] -> inputs_embeds f32 [batch, seq, hidden]
//   onnx/decoder_model_merged.onnx  inputs_embeds, attention_mask i64 [batch, past + seq],
//                                   position_ids i64 [3, batch, seq] (M-RoPE rows t, h, w),
//                                   past_key_values.{i}.key / .value f32 [batch, kv heads, past, head_dim],
//                                   num_logits_to_keep i64 [] (0: every position)
//                                   -> logits f32 [batch, kept, vocab], present.{i}.key / .value
//
// Qwen3-VL's decoder also takes deepstack_visual_embeds f32 [levels, batch, seq, hidden]: after decoder
// layer i < levels, level i is added to the hidden state (zero rows where a token is not visual), which is
// HF's Qwen3VLTextModel._deepstack_process written densely. transformers.js 4.3.1 feeds no DeepStack input,
// so a Qwen3-VL graph without one answers differently from the checkpoint; the CPU backend refuses such a
// graph by name (src/model/ort/ort-decoder.ts).
//
// The math is test/reference/qwen_decoder.py's: Qwen2's q/k/v biases, Qwen3's RMSNorm per head on q and k
// before RoPE, M-RoPE (each of the head_dim / 2 frequencies turned by the position row of its axis,
// contiguous sections for Qwen2.5-VL, interleaved for Qwen3-VL; src/kernels/rope.ts mropeAxes), float32
// angles from float32 inverse frequencies, grouped-query causal attention with an additive mask that is zero
// where attention_mask is 0, SwiGLU, a tied or separate head.

import { parseModelConfig } from '../../src/families/registry';
import type { ModelConfig } from '../../src/model/config';
import { mropeAxes, ropeInverseFrequencies } from '../../src/kernels/rope-tables';
import { GraphBuilder } from './onnx-graph';
import {
  causalMaskBias,
  groupedQueryAttention,
  linear,
  rmsNorm,
  rotateHalf,
  swigluMlp,
  transposed,
  type WeightReader,
} from './onnx-layers';

/** Reads a tensor under the config's name, or under the checkpoint's other spelling of its prefix. */
function spelled(read: WeightReader, config: ModelConfig): WeightReader {
  return (name) => {
    try {
      return read(name);
    } catch (e) {
      for (const [canonical, other] of config.checkpointSpellings ?? []) {
        if (!name.startsWith(canonical)) continue;
        try {
          return read(other + name.slice(canonical.length));
        } catch {}
      }
      throw e;
    }
  };
}

function parsed(raw: Record<string, unknown>): ModelConfig {
  const config = parseModelConfig(raw);
  if (!config.text.mrope) throw new Error(`${config.modelType}: the Qwen-VL graphs are for decoders with M-RoPE`);
  return config;
}

/** How a graph is cut for where it runs; the defaults write the whole checkpoint as the CPU backend reads it. */
export interface QwenGraphOptions {
  /**
   * The embedding table and the head in parts of whole rows of at most this many bytes each (default: one
   * part). A WebGPU adapter holds at most maxBufferSize in one buffer (SwiftShader's is 1 GiB), and at real
   * widths each is 151936 × hidden float32: 1.2 GB at 2048. The math is the same: the head's parts are
   * MatMuls concatenated along the vocabulary, the embedding's Gathers of the ids inside each part.
   */
  maxWeightBytes?: number;
  /**
   * false leaves Qwen3-VL's deepstack_visual_embeds out: transformers.js 4.3.1's own layout, which answers
   * differently from the checkpoint (bench:model's speed peer runs it). Default true.
   */
  deepstack?: boolean;
}

/**
 * [lo, hi) row ranges of a rows × cols float32 table, as few as hold at most maxBytes each and as even as
 * rows allow (one range when maxBytes is undefined).
 */
export function rowParts(rows: number, cols: number, maxBytes: number | undefined): Array<[number, number]> {
  const most = maxBytes === undefined ? rows : Math.floor(maxBytes / (cols * 4));
  if (most < 1) throw new Error(`qwen ONNX: maxWeightBytes ${maxBytes} holds no row of ${cols} float32 values`);
  const per = Math.ceil(rows / Math.ceil(rows / most));
  const parts: Array<[number, number]> = [];
  for (let lo = 0; lo < rows; lo += per) parts.push([lo, Math.min(rows, lo + per)]);
  return parts;
}

export function qwenEmbedTokensGraph(raw: Record<string, unknown>, readRaw: WeightReader, options: QwenGraphOptions = {}): GraphBuilder {
  const config = parsed(raw);
  const read = spelled(readRaw, config);
  const g = new GraphBuilder('embed_tokens');
  const ids = g.input('input_ids', 'int64', ['batch_size', 'sequence_length']);
  const w = read(`${config.decoderNames.model}.embed_tokens.weight`);
  const [rows, d] = w.shape as [number, number];
  const parts = rowParts(rows, d, options.maxWeightBytes);
  let embeds = '';
  if (parts.length === 1) embeds = g.op('Gather', [g.weight('embed_tokens.weight', w.data, w.shape), ids]);
  for (const [k, [lo, hi]] of parts.length > 1 ? parts.entries() : []) {
    // This part's rows for the ids inside it, zero rows for the others (adding exact zeros changes nothing).
    const local = g.op('Sub', [ids, g.ints([lo], [])]);
    const inside = g.op('And', [g.op('GreaterOrEqual', [local, g.ints([0], [])]), g.op('Less', [local, g.ints([hi - lo], [])])]);
    const table = g.weight(`embed_tokens.weight.part${k}`, w.data.subarray(lo * d, hi * d), [hi - lo, d]);
    const picked = g.op('Gather', [table, g.op('Where', [inside, local, g.ints([0], [])])]);
    const masked = g.op('Mul', [picked, g.op('Unsqueeze', [g.op('Cast', [inside], { to: 1 }), g.ints([-1])])]);
    embeds = k === 0 ? masked : g.op('Add', [embeds, masked]);
  }
  g.output(embeds, 'inputs_embeds', 'float', ['batch_size', 'sequence_length', config.text.hiddenSize]);
  return g;
}

export function qwenDecoderGraph(raw: Record<string, unknown>, readRaw: WeightReader, options: QwenGraphOptions = {}): GraphBuilder {
  const config = parsed(raw);
  const read = spelled(readRaw, config);
  const t = config.text;
  const d = t.hiddenSize;
  const H = t.numHeads;
  const KV = t.numKvHeads;
  const hd = t.headDim;
  const half = hd / 2;
  const G = H / KV;
  const prefix = config.decoderNames.model;
  const levels = options.deepstack === false ? 0 : (t.deepstackLayers ?? 0);
  const g = new GraphBuilder('decoder_model_merged');
  const embeds = g.input('inputs_embeds', 'float', ['batch_size', 'sequence_length', d]);
  const attentionMask = g.input('attention_mask', 'int64', ['batch_size', 'total_sequence_length']);
  const positionIds = g.input('position_ids', 'int64', [3, 'batch_size', 'sequence_length']);
  const past: string[] = [];
  for (let i = 0; i < t.numLayers; i++) {
    for (const kind of ['key', 'value'])
      past.push(g.input(`past_key_values.${i}.${kind}`, 'float', ['batch_size', KV, 'past_sequence_length', hd]));
  }
  const keepLogits = g.input('num_logits_to_keep', 'int64', []);
  const deepstack = levels > 0 ? g.input('deepstack_visual_embeds', 'float', [levels, 'batch_size', 'sequence_length', d]) : undefined;

  // M-RoPE: angles [3, batch, seq, half] (float32 position × float32 inverse frequency, as HF), then each
  // frequency's angle from its axis' row: a one-hot [3, 1, 1, half] selection summed over the rows (exact:
  // one term is the angle, the others 0).
  const inv = ropeInverseFrequencies(t.ropeTheta, hd);
  const angles = g.op('Mul', [g.op('Unsqueeze', [g.op('Cast', [positionIds], { to: 1 }), g.ints([3])]), g.weight('inv_freq', inv, [half])]);
  const axes = mropeAxes({ headDim: hd, mrope: t.mrope });
  const select = new Float32Array(3 * half);
  for (let i = 0; i < half; i++) select[axes[i]! * half + i] = 1;
  const chosen = g.op('ReduceSum', [g.op('Mul', [angles, g.weight('mrope_axes', select, [3, 1, 1, half])]), g.ints([0])], {
    keepdims: 0,
  });
  const emb = g.op('Unsqueeze', [g.op('Concat', [chosen, chosen], { axis: -1 }), g.ints([1])]);
  const cos = g.op('Cos', [emb]);
  const sin = g.op('Sin', [emb]);

  const bias = causalMaskBias(g, embeds, attentionMask, G);
  const rope = rotateHalf(g, hd, cos, sin);
  let x = embeds;
  for (let i = 0; i < t.numLayers; i++) {
    const p = `${prefix}.layers.${i}.`;
    const a = `${p}self_attn.`;
    const h = rmsNorm(g, read, x, `${p}input_layernorm`, t.rmsNormEps);
    // [batch, seq, n, hd], q/k normed per head (Qwen3), then [batch, n, seq, hd].
    const heads = (name: 'q' | 'k' | 'v', n: number) => {
      let y = g.op('Reshape', [linear(g, read, h, `${a}${name}_proj`, Boolean(t.qkvBias)), g.ints([0, 0, n, hd])]);
      if (t.qkNorm && name !== 'v') y = rmsNorm(g, read, y, `${a}${name}_norm`, t.rmsNormEps);
      return g.op('Transpose', [y], { perm: [0, 2, 1, 3] });
    };
    const q = rope(heads('q', H));
    const k = g.op('Concat', [past[2 * i]!, rope(heads('k', KV))], { axis: 2 });
    const v = g.op('Concat', [past[2 * i + 1]!, heads('v', KV)], { axis: 2 });
    g.output(k, `present.${i}.key`, 'float', ['batch_size', KV, 'total_sequence_length', hd]);
    g.output(v, `present.${i}.value`, 'float', ['batch_size', KV, 'total_sequence_length', hd]);
    const merged = groupedQueryAttention(g, q, k, v, bias, { numHeads: H, kvHeads: KV, headDim: hd });
    x = g.op('Add', [x, linear(g, read, merged, `${a}o_proj`, false)]);
    x = g.op('Add', [x, swigluMlp(g, read, rmsNorm(g, read, x, `${p}post_attention_layernorm`, t.rmsNormEps), `${p}mlp.`)]);
    if (deepstack && i < levels) x = g.op('Add', [x, g.op('Gather', [deepstack, g.ints([i], [])], { axis: 0 })]);
  }
  // HF's logits_to_keep: the last num_logits_to_keep positions (0 keeps all: Slice from -0 = 0).
  const start = g.op('Unsqueeze', [g.op('Neg', [keepLogits]), g.ints([0])]);
  x = g.op('Slice', [x, start, g.ints([2 ** 53 - 1]), g.ints([1])]);
  x = rmsNorm(g, read, x, `${prefix}.norm`, t.rmsNormEps);
  const headWeight = read(config.tieWordEmbeddings ? `${prefix}.embed_tokens.weight` : headName(read, config));
  const parts = rowParts(headWeight.shape[0]!, d, options.maxWeightBytes);
  const logits = parts.map(([lo, hi], k) => {
    const w = transposed({ data: headWeight.data.subarray(lo * d, hi * d), shape: [hi - lo, d] });
    return g.op('MatMul', [x, g.weight(parts.length === 1 ? 'lm_head.weight' : `lm_head.weight.part${k}`, w.data, w.dims)]);
  });
  g.output(logits.length === 1 ? logits[0]! : g.op('Concat', logits, { axis: -1 }), 'logits', 'float', [
    'batch_size',
    'kept_sequence_length',
    t.vocabSize,
  ]);
  g.moveOutputFirst('logits');
  return g;
}

/** The untied head, or the embedding when the checkpoint has none and its text_config ties (tieIfHeadMissing). */
function headName(read: WeightReader, config: ModelConfig): string {
  if (!config.tieIfHeadMissing) return config.decoderNames.lmHead;
  try {
    read(config.decoderNames.lmHead);
    return config.decoderNames.lmHead;
  } catch {
    return `${config.decoderNames.model}.embed_tokens.weight`;
  }
}
