// Layer helpers shared by the ONNX exports built with onnx-graph.ts: HF Linear, LayerNorm, RMSNorm and the
// activations, each as a few ONNX (opset 17) nodes that onnxruntime runs on CPU and WebGPU.

import type { GraphBuilder } from './onnx-graph';

/** Reads one tensor of the checkpoint as float32 (any stored dtype). */
export type WeightReader = (name: string) => { data: Float32Array; shape: number[] };

/** The most negative float32: an additive attention bias that masks a key. */
export const F32_MIN = -3.4028234663852886e38;

/** [out, in] (an HF Linear weight) -> [in, out] (ONNX MatMul's B). */
export function transposed(w: { data: Float32Array; shape: number[] }): { data: Float32Array; dims: number[] } {
  const [rows, cols] = w.shape as [number, number];
  const out = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[c * rows + r] = w.data[r * cols + c]!;
  return { data: out, dims: [cols, rows] };
}

/** x·Wᵀ (+ b) of the HF Linear `name`. */
export function linear(g: GraphBuilder, read: WeightReader, x: string, name: string, bias: boolean): string {
  const w = transposed(read(`${name}.weight`));
  let y = g.op('MatMul', [x, g.weight(`${name}.weight`, w.data, w.dims)]);
  if (bias) {
    const b = read(`${name}.bias`);
    y = g.op('Add', [y, g.weight(`${name}.bias`, b.data, b.shape)]);
  }
  return y;
}

/** LayerNorm over the last axis with the weight and bias of `name`. */
export function layerNorm(g: GraphBuilder, read: WeightReader, x: string, name: string, eps: number): string {
  const w = read(`${name}.weight`);
  const b = read(`${name}.bias`);
  return g.op('LayerNormalization', [x, g.weight(`${name}.weight`, w.data, w.shape), g.weight(`${name}.bias`, b.data, b.shape)], {
    axis: -1,
    epsilon: { float: eps },
  });
}

/** RMSNorm over the last axis (HF Qwen2RMSNorm / LlamaRMSNorm): w · x / √(mean(x²) + eps). */
export function rmsNorm(g: GraphBuilder, read: WeightReader, x: string, name: string, eps: number): string {
  const w = read(`${name}.weight`);
  const variance = g.op('ReduceMean', [g.op('Mul', [x, x])], { axes: [-1], keepdims: 1 });
  const normed = g.op('Div', [x, g.op('Sqrt', [g.op('Add', [variance, g.floats([eps])])])]);
  return g.op('Mul', [g.weight(`${name}.weight`, w.data, w.shape), normed]);
}

/** gelu_pytorch_tanh: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). */
export function geluTanh(g: GraphBuilder, x: string): string {
  const x3 = g.op('Mul', [g.op('Mul', [x, x]), x]);
  const inner = g.op('Mul', [g.op('Add', [x, g.op('Mul', [x3, g.floats([0.044715])])]), g.floats([Math.sqrt(2 / Math.PI)])]);
  const t = g.op('Add', [g.op('Tanh', [inner]), g.floats([1])]);
  return g.op('Mul', [g.op('Mul', [x, t]), g.floats([0.5])]);
}

/** Exact GELU (torch nn.GELU()): 0.5·x·(1 + erf(x / √2)) (ONNX's Gelu op needs opset 20). */
export function geluErf(g: GraphBuilder, x: string): string {
  const e = g.op('Erf', [g.op('Mul', [x, g.floats([Math.SQRT1_2])])]);
  return g.op('Mul', [g.op('Mul', [x, g.op('Add', [e, g.floats([1])])]), g.floats([0.5])]);
}

/** SiLU: x·σ(x). */
function silu(g: GraphBuilder, x: string): string {
  return g.op('Mul', [x, g.op('Sigmoid', [x])]);
}

/** HF ACT2FN by name, for the activations exported; throws for others. */
export function activation(g: GraphBuilder, x: string, name: string, where: string): string {
  if (name === 'silu' || name === 'swish') return silu(g, x);
  if (name === 'gelu_pytorch_tanh' || name === 'gelu_new') return geluTanh(g, x);
  if (name === 'gelu') return geluErf(g, x);
  throw new Error(`${where}: hidden_act '${name}' is not exported (silu, gelu, gelu_pytorch_tanh are)`);
}

/**
 * The decoder's additive attention bias [batch, 1, G·seq, total]: query i (cache position total - seq + i)
 * sees key j <= it where attention_mask[j] is 1; tiled G times along the rows for the grouped-query layout
 * (the G query heads of a KV head as G·seq rows).
 */
export function causalMaskBias(g: GraphBuilder, embeds: string, attentionMask: string, groups: number): string {
  const s = g.op('Gather', [g.op('Shape', [embeds]), g.ints([1], [])]);
  const total = g.op('Gather', [g.op('Shape', [attentionMask]), g.ints([1], [])]);
  const zero = g.ints([0], []);
  const one = g.ints([1], []);
  const qPos = g.op('Unsqueeze', [g.op('Add', [g.op('Range', [zero, s, one]), g.op('Sub', [total, s])]), g.ints([1])]);
  const kPos = g.op('Unsqueeze', [g.op('Range', [zero, total, one]), g.ints([0])]);
  const causal = g.op('LessOrEqual', [kPos, qPos]);
  const keep = g.op('Unsqueeze', [g.op('Greater', [attentionMask, g.ints([0], [])]), g.ints([1, 2])]);
  const bias = g.op('Where', [g.op('And', [causal, keep]), g.floats([0]), g.floats([F32_MIN])]);
  return groups > 1 ? g.op('Tile', [bias, g.ints([1, 1, groups, 1])]) : bias;
}

/** HF's rotate-half RoPE over the last axis (headDim), cos and sin broadcast to x: x·cos + rotate_half(x)·sin. */
export function rotateHalf(g: GraphBuilder, headDim: number, cos: string, sin: string): (x: string) => string {
  const halves = g.ints([headDim / 2, headDim / 2]);
  return (x) => {
    const [x1, x2] = g.opN('Split', [x, halves], 2, { axis: -1 });
    const rotated = g.op('Concat', [g.op('Neg', [x2!]), x1!], { axis: -1 });
    return g.op('Add', [g.op('Mul', [x, cos]), g.op('Mul', [rotated, sin])]);
  };
}

/**
 * Grouped-query attention of a decoder layer over its whole cache, the heads merged back:
 * q [batch, H, seq, hd], k and v [batch, KV, total, hd], bias [batch, 1, G·seq, total] (causalMaskBias)
 * -> [batch, seq, H·hd]. The G = H / KV query heads of a KV head are G·seq rows, so K/V are not repeated.
 */
export function groupedQueryAttention(
  g: GraphBuilder,
  q: string,
  k: string,
  v: string,
  bias: string,
  heads: { numHeads: number; kvHeads: number; headDim: number },
): string {
  const { numHeads: H, kvHeads: KV, headDim: hd } = heads;
  const qg = g.op('Reshape', [q, g.ints([0, KV, -1, hd])]);
  const scores = g.op('Add', [
    g.op('Mul', [g.op('MatMul', [qg, g.op('Transpose', [k], { perm: [0, 1, 3, 2] })]), g.floats([hd ** -0.5])]),
    bias,
  ]);
  const o = g.op('MatMul', [g.op('Softmax', [scores], { axis: -1 }), v]);
  return g.op('Reshape', [
    g.op('Transpose', [g.op('Reshape', [o, g.ints([0, H, -1, hd])])], { perm: [0, 2, 1, 3] }),
    g.ints([0, 0, H * hd]),
  ]);
}

/** HF Llama / Qwen2's MLP under `prefix` (mlp.gate_proj, up_proj, down_proj): down(silu(gate(x)) · up(x)). */
export function swigluMlp(g: GraphBuilder, read: WeightReader, x: string, prefix: string): string {
  const gate = linear(g, read, x, `${prefix}gate_proj`, false);
  const up = linear(g, read, x, `${prefix}up_proj`, false);
  return linear(g, read, g.op('Mul', [g.op('Mul', [gate, g.op('Sigmoid', [gate])]), up]), `${prefix}down_proj`, false);
}
