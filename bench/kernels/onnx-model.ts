// Small ONNX graphs built in memory, so the benchmark compares against onnxruntime-web without
// committing or downloading any .onnx file. The bytes are encoded by protobufjs from the subset of
// onnx.proto (ONNX 1.12, IR version 8) written out below; field numbers match onnx/onnx.proto.
// Every graph tensor is float32 and a graph input or output (no initializers), so the model stays tiny
// and the caller binds its own GPU buffers.

import protobuf from 'protobufjs';

/** The messages of onnx.proto that a one-node graph needs, with their upstream field numbers. */
const ONNX_PROTO_SUBSET = `
syntax = "proto2";
package onnx;
message AttributeProto {
  optional string name = 1;
  optional float f = 2;
  optional int64 i = 3;
  optional bytes s = 4;
  repeated float floats = 7;
  repeated int64 ints = 8;
  optional int32 type = 20;
}
message ValueInfoProto {
  optional string name = 1;
  optional TypeProto type = 2;
}
message NodeProto {
  repeated string input = 1;
  repeated string output = 2;
  optional string name = 3;
  optional string op_type = 4;
  repeated AttributeProto attribute = 5;
  optional string domain = 7;
}
message ModelProto {
  optional int64 ir_version = 1;
  optional string producer_name = 2;
  optional GraphProto graph = 7;
  repeated OperatorSetIdProto opset_import = 8;
}
message GraphProto {
  repeated NodeProto node = 1;
  optional string name = 2;
  repeated ValueInfoProto input = 11;
  repeated ValueInfoProto output = 12;
}
message TensorShapeProto {
  message Dimension {
    oneof value {
      int64 dim_value = 1;
      string dim_param = 2;
    }
  }
  repeated Dimension dim = 1;
}
message TypeProto {
  message Tensor {
    optional int32 elem_type = 1;
    optional TensorShapeProto shape = 2;
  }
  oneof value {
    Tensor tensor_type = 1;
  }
}
message OperatorSetIdProto {
  optional string domain = 1;
  optional int64 version = 2;
}
`;

/** onnx.TensorProto.DataType.FLOAT */
const ONNX_FLOAT = 1;
/** onnx.AttributeProto.AttributeType */
const ATTR_FLOAT = 1;
const ATTR_INT = 2;
const IR_VERSION = 8;
const ONNX_OPSET = 17;
const MS_OPSET = 1;

export class OnnxModelError extends Error {
  override readonly name = 'OnnxModelError';
}

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

function valueInfo(v: OnnxValue) {
  return {
    name: v.name,
    type: {
      tensorType: {
        elemType: ONNX_FLOAT,
        shape: { dim: v.shape.map((d) => ({ dimValue: d })) },
      },
    },
  };
}

function attribute(name: string, value: number) {
  return Number.isInteger(value) ? { name, type: ATTR_INT, i: value } : { name, type: ATTR_FLOAT, f: value };
}

/** Serialized ModelProto for `graph`. */
export function buildModel(graph: OnnxGraph): Uint8Array {
  const root = protobuf.parse(ONNX_PROTO_SUBSET, { keepCase: false }).root;
  const ModelProto = root.lookupType('onnx.ModelProto');
  const opsets = [{ domain: '', version: ONNX_OPSET }];
  const extraDomains = new Set(graph.nodes.map((n) => n.domain ?? '').filter((d) => d !== ''));
  for (const domain of extraDomains) opsets.push({ domain, version: MS_OPSET });
  const model = {
    irVersion: IR_VERSION,
    producerName: 'tessera-bench',
    opsetImport: opsets,
    graph: {
      name: graph.name,
      node: graph.nodes.map((n, i) => ({
        name: `${n.opType}_${i}`,
        opType: n.opType,
        domain: n.domain ?? '',
        input: n.inputs,
        output: n.outputs,
        attribute: Object.entries(n.attributes ?? {}).map(([k, v]) => attribute(k, v)),
      })),
      input: graph.inputs.map(valueInfo),
      output: graph.outputs.map(valueInfo),
    },
  };
  const problem = ModelProto.verify(model);
  if (problem) throw new OnnxModelError(`ONNX graph '${graph.name}' does not fit onnx.proto: ${problem}`);
  return ModelProto.encode(ModelProto.fromObject(model)).finish();
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
