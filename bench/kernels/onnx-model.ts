// Small ONNX graphs built in memory, so the benchmark compares against onnxruntime-web without
// committing or downloading any .onnx file, written by scripts/onnx/onnx-graph.ts (the builder the tiny
// checkpoints' exports use). Every graph tensor is float32 and a graph input or output (no initializers), so the model stays tiny
// and the caller binds its own GPU buffers.

import { GraphBuilder } from '../../scripts/onnx/onnx-graph';

export interface OnnxValue {
  name: string;
  shape: readonly number[];
}

export interface OnnxNode {
  opType: string;
  /** '' (default) for the ONNX domain, 'com.microsoft' for ORT's contrib ops. */
  domain?: string;
  inputs: readonly string[];
  outputs: readonly string[];
  /** Integer or float attributes (e.g. num_heads, axis). Integers are written as INT. */
  attributes?: Readonly<Record<string, number>>;
}

export interface OnnxGraph {
  name: string;
  nodes: readonly OnnxNode[];
  /** Graph inputs and outputs, all float32; values between nodes need no declaration. */
  inputs: readonly OnnxValue[];
  outputs: readonly OnnxValue[];
}

/** Serialized ModelProto for `graph` (scripts/onnx/onnx-graph.ts writes it). */
export function buildModel(graph: OnnxGraph): Uint8Array {
  const g = new GraphBuilder(graph.name);
  for (const v of graph.inputs) g.input(v.name, 'float', v.shape);
  for (const n of graph.nodes) {
    const attributes = Object.fromEntries(Object.entries(n.attributes ?? {}).map(([k, v]) => [k, Number.isInteger(v) ? v : { float: v }]));
    g.node(n.opType, n.inputs, n.outputs, attributes, n.domain);
  }
  for (const v of graph.outputs) g.output(v.name, v.name, 'float', v.shape);
  return g.encode('tessera-bench');
}

/** Y[M, N] = X[M, K] · B[K, N] (ONNX MatMul, so B is Wᵀ of an HF Linear weight). */
export function matmulModel(M: number, K: number, N: number): Uint8Array {
  return buildModel({
    name: 'bench_matmul',
    nodes: [{ opType: 'MatMul', inputs: ['X', 'B'], outputs: ['Y'] }],
    inputs: [
      { name: 'X', shape: [M, K] },
      { name: 'B', shape: [K, N] },
    ],
    outputs: [{ name: 'Y', shape: [M, N] }],
  });
}

/** com.microsoft MultiHeadAttention with separate Q, K, V: [batch, tokens, heads * headDim] each. */
export function multiHeadAttentionModel(batch: number, tokens: number, heads: number, headDim: number): Uint8Array {
  const shape = [batch, tokens, heads * headDim];
  return buildModel({
    name: 'bench_mha',
    nodes: [
      {
        opType: 'MultiHeadAttention',
        domain: 'com.microsoft',
        inputs: ['Q', 'K', 'V'],
        outputs: ['O'],
        attributes: { num_heads: heads },
      },
    ],
    inputs: [
      { name: 'Q', shape },
      { name: 'K', shape },
      { name: 'V', shape },
    ],
    outputs: [{ name: 'O', shape }],
  });
}

/**
 * Unfused attention per head, O = softmax(Qs · Kᵀ) · V, as MatMul -> Softmax -> MatMul:
 *   Qs: [heads, tokens, headDim] (already multiplied by the softmax scale)
 *   Kt: [heads, headDim, tokens]   V: [heads, tokens, headDim]   O: [heads, tokens, headDim]
 */
export function unfusedAttentionModel(tokens: number, heads: number, headDim: number): Uint8Array {
  return buildModel({
    name: 'bench_unfused_attention',
    nodes: [
      { opType: 'MatMul', inputs: ['Qs', 'Kt'], outputs: ['S'] },
      { opType: 'Softmax', inputs: ['S'], outputs: ['P'], attributes: { axis: -1 } },
      { opType: 'MatMul', inputs: ['P', 'V'], outputs: ['O'] },
    ],
    inputs: [
      { name: 'Qs', shape: [heads, tokens, headDim] },
      { name: 'Kt', shape: [heads, headDim, tokens] },
      { name: 'V', shape: [heads, tokens, headDim] },
    ],
    outputs: [{ name: 'O', shape: [heads, tokens, headDim] }],
  });
}
