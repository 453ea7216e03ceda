// A small ONNX graph builder: nodes, initializers (weights, inline as raw little-endian bytes, or in
// external-data files beside the graph: encodeExternal), and typed inputs and outputs with symbolic
// dimensions, serialized by protobufjs from the subset of onnx.proto (ONNX 1.12, IR version 8, opset 17)
// written out below; field numbers match onnx/onnx.proto.
// The tiny checkpoints' ONNX exports (make-tiny-onnx.ts) are built with it, so the CPU backend's tests need
// no Python and no download; so are bench:kernels' one-node peer graphs (bench/kernels/onnx-model.ts).

import protobuf from 'protobufjs';

const ONNX_PROTO_SUBSET = `
syntax = "proto2";
package onnx;
message AttributeProto {
  optional string name = 1;
  optional float f = 2;
  optional int64 i = 3;
  optional bytes s = 4;
  optional TensorProto t = 5;
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
  repeated TensorProto initializer = 5;
  repeated ValueInfoProto input = 11;
  repeated ValueInfoProto output = 12;
}
message StringStringEntryProto {
  optional string key = 1;
  optional string value = 2;
}
message TensorProto {
  repeated int64 dims = 1;
  optional int32 data_type = 2;
  optional string name = 8;
  optional bytes raw_data = 9;
  repeated StringStringEntryProto external_data = 13;
  optional int32 data_location = 14;
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

/** onnx.TensorProto.DataType */
const DataType = { float: 1, bool: 9, int64: 7 } as const;
export type ElemType = keyof typeof DataType;

/** onnx.AttributeProto.AttributeType */
const ATTR = { float: 1, int: 2, tensor: 4, ints: 7 } as const;

/** A dimension: a size, or a name for a size given at run time. */
export type Dim = number | string;

export type AttrValue = number | { float: number } | readonly number[] | { tensor: ConstTensor };

export interface ConstTensor {
  type: ElemType;
  dims: readonly number[];
  data: Float32Array | BigInt64Array | Uint8Array;
}

interface Node {
  opType: string;
  /** '' (default) for the ONNX domain, 'com.microsoft' for onnxruntime's contrib ops. */
  domain: string;
  inputs: string[];
  outputs: string[];
  attributes: Record<string, AttrValue>;
}

/** Builds one graph. Value names are made unique; op() returns the names of a node's outputs. */
export class GraphBuilder {
  private readonly nodes: Node[] = [];
  private readonly initializers: Array<{ name: string; tensor: ConstTensor }> = [];
  private readonly inputs: Array<{ name: string; type: ElemType; dims: readonly Dim[] }> = [];
  private readonly outputs: Array<{ name: string; type: ElemType; dims: readonly Dim[] }> = [];
  private counter = 0;

  constructor(readonly name: string) {}

  input(name: string, type: ElemType, dims: readonly Dim[]): string {
    this.inputs.push({ name, type, dims });
    return name;
  }

  /** Declares `value` as the graph output `name` (through an Identity when it has another name). */
  output(value: string, name: string, type: ElemType, dims: readonly Dim[]): void {
    if (value !== name) this.nodes.push({ opType: 'Identity', domain: '', inputs: [value], outputs: [name], attributes: {} });
    this.outputs.push({ name, type, dims });
  }

  /** Puts the output `name` first (HF exports list logits before present.*). */
  moveOutputFirst(name: string): void {
    const i = this.outputs.findIndex((o) => o.name === name);
    if (i > 0) this.outputs.unshift(...this.outputs.splice(i, 1));
  }

  /** A named weight (an initializer). */
  weight(name: string, data: Float32Array, dims: readonly number[]): string {
    this.initializers.push({ name, tensor: { type: 'float', dims, data } });
    return name;
  }

  /** An int64 constant (shapes, axes, indices). */
  ints(values: readonly number[], dims: readonly number[] = [values.length]): string {
    const name = this.fresh('const_i64');
    this.initializers.push({ name, tensor: { type: 'int64', dims, data: BigInt64Array.from(values.map(BigInt)) } });
    return name;
  }

  /** A float32 constant (a scalar by default). */
  floats(values: readonly number[], dims: readonly number[] = []): string {
    const name = this.fresh('const_f32');
    this.initializers.push({ name, tensor: { type: 'float', dims, data: Float32Array.from(values) } });
    return name;
  }

  op(opType: string, inputs: readonly string[], attributes: Record<string, AttrValue> = {}): string {
    return this.opN(opType, inputs, 1, attributes)[0]!;
  }

  opN(opType: string, inputs: readonly string[], numOutputs: number, attributes: Record<string, AttrValue> = {}): string[] {
    const outputs = Array.from({ length: numOutputs }, () => this.fresh(opType));
    this.node(opType, inputs, outputs, attributes);
    return outputs;
  }

  /** A node whose outputs have given names (domain: '' for ONNX's, 'com.microsoft' for onnxruntime's contrib ops). */
  node(
    opType: string,
    inputs: readonly string[],
    outputs: readonly string[],
    attributes: Record<string, AttrValue> = {},
    domain = '',
  ): void {
    this.nodes.push({ opType, domain, inputs: [...inputs], outputs: [...outputs], attributes });
  }

  private fresh(prefix: string): string {
    return `${prefix}_${this.counter++}`;
  }

  /** The serialized ModelProto, every initializer inline (protobuf bounds the whole to 2 GB). */
  encode(producer = 'tessera-make-tiny-onnx'): Uint8Array {
    return this.serialize(
      producer,
      this.initializers.map((t) => tensorProto(t.name, t.tensor)),
    );
  }

  /**
   * The ModelProto with every initializer of at least `minBytes` (default 1024, onnx's own threshold) in
   * external-data files named `<fileName>_data`, `<fileName>_data_1`, ... (the names transformers.js asks
   * for: utils/model-loader.js getExternalDataChunkNames), each at most `maxFileBytes` (default 2 GB; a
   * tensor larger than that is an error) and each tensor at an offset aligned to `align` bytes (default
   * 4096, so a loader may map it). `files` are the data files' contents as views of the weights (no copy),
   * in order: write them one after the other.
   */
  encodeExternal(
    fileName: string,
    options: { maxFileBytes?: number; minBytes?: number; align?: number; producer?: string } = {},
  ): { model: Uint8Array; files: Array<{ name: string; parts: Uint8Array[]; bytes: number }> } {
    const maxFileBytes = options.maxFileBytes ?? 2 ** 31 - 1;
    const minBytes = options.minBytes ?? 1024;
    const align = options.align ?? 4096;
    const files: Array<{ name: string; parts: Uint8Array[]; bytes: number }> = [];
    const tensors = this.initializers.map(({ name, tensor }) => {
      const bytes = new Uint8Array(tensor.data.buffer, tensor.data.byteOffset, tensor.data.byteLength);
      if (bytes.byteLength < minBytes) return tensorProto(name, tensor);
      if (bytes.byteLength > maxFileBytes)
        throw new Error(
          `ONNX graph '${this.name}': initializer ${name} is ${bytes.byteLength} bytes, over the ${maxFileBytes}-byte data file limit`,
        );
      let file = files.at(-1);
      const offsetIn = (f: { bytes: number }) => Math.ceil(f.bytes / align) * align;
      if (!file || offsetIn(file) + bytes.byteLength > maxFileBytes) {
        file = { name: `${fileName}_data${files.length === 0 ? '' : `_${files.length}`}`, parts: [], bytes: 0 };
        files.push(file);
      }
      const offset = offsetIn(file);
      if (offset > file.bytes) file.parts.push(new Uint8Array(offset - file.bytes));
      file.parts.push(bytes);
      file.bytes = offset + bytes.byteLength;
      return {
        name,
        dims: tensor.dims,
        dataType: DataType[tensor.type],
        dataLocation: 1, // EXTERNAL
        externalData: [
          { key: 'location', value: file.name },
          { key: 'offset', value: String(offset) },
          { key: 'length', value: String(bytes.byteLength) },
        ],
      };
    });
    return { model: this.serialize(options.producer ?? 'tessera-make-tiny-onnx', tensors), files };
  }

  private serialize(producer: string, initializer: TensorMessage[]): Uint8Array {
    const root = protobuf.parse(ONNX_PROTO_SUBSET, { keepCase: false }).root;
    const ModelProto = root.lookupType('onnx.ModelProto');
    const model = {
      irVersion: 8,
      producerName: producer,
      // ONNX opset 17, and version 1 of any other domain a node uses.
      opsetImport: [
        { domain: '', version: 17 },
        ...[...new Set(this.nodes.map((n) => n.domain).filter((d) => d !== ''))].map((domain) => ({ domain, version: 1 })),
      ],
      graph: {
        name: this.name,
        node: this.nodes.map((n, i) => ({
          name: `${n.opType}_${i}`,
          opType: n.opType,
          domain: n.domain,
          input: n.inputs,
          output: n.outputs,
          attribute: Object.entries(n.attributes).map(([k, v]) => attribute(k, v)),
        })),
        initializer,
        input: this.inputs.map(valueInfo),
        output: this.outputs.map(valueInfo),
      },
    };
    const problem = ModelProto.verify(model);
    if (problem) throw new Error(`ONNX graph '${this.name}' does not fit onnx.proto: ${problem}`);
    return ModelProto.encode(ModelProto.fromObject(model)).finish();
  }
}

interface TensorMessage {
  name: string;
  dims: readonly number[];
  dataType: number;
  rawData?: Uint8Array;
  dataLocation?: number;
  externalData?: Array<{ key: string; value: string }>;
}

function tensorProto(name: string, t: ConstTensor): TensorMessage {
  const bytes = new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  return { name, dims: t.dims, dataType: DataType[t.type], rawData: bytes };
}

function attribute(name: string, value: AttrValue) {
  if (typeof value === 'number') return { name, type: ATTR.int, i: value };
  if (Array.isArray(value)) return { name, type: ATTR.ints, ints: value };
  if ('float' in (value as object)) return { name, type: ATTR.float, f: (value as { float: number }).float };
  return { name, type: ATTR.tensor, t: tensorProto(name, (value as { tensor: ConstTensor }).tensor) };
}

function valueInfo(v: { name: string; type: ElemType; dims: readonly Dim[] }) {
  return {
    name: v.name,
    type: {
      tensorType: {
        elemType: DataType[v.type],
        shape: { dim: v.dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) },
      },
    },
  };
}
