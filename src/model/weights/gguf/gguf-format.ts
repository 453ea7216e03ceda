// The GGUF container (llama.cpp's checkpoint format, version 3), as the reader and writer share it:
//
//   "GGUF" u32 version  u64 numTensors  u64 numMetadata
//   numMetadata × { string key, u32 valueType, value }        strings: u64 byte length + UTF-8 bytes
//   numTensors  × { string name, u32 numDims, u64 ne[numDims], u32 ggmlType, u64 offset }
//   padding to `general.alignment` (default 32), then the data: each tensor at dataOffset + offset
//
// ne[0] is the innermost (fastest) dimension, so a Hugging Face Linear weight [out, in] has ne = [in, out].
// Quantized types store ne[0] in blocks of `blockValues` values, `blockBytes` bytes each (gguf-blocks.ts).

import type { KQuantFormat } from '../../../kernels/k-quants';

/** The ggml K-quant types, by the Tessera format that holds their blocks as they are (kernels/k-quants.ts). */
export const K_FORMAT_OF: Partial<Record<string, KQuantFormat>> = { Q4_K: 'q4k', Q5_K: 'q5k', Q6_K: 'q6k' };

/** GGUF metadata value types (the u32 before each value). */
export const GGUF_VALUE = {
  u8: 0,
  i8: 1,
  u16: 2,
  i16: 3,
  u32: 4,
  i32: 5,
  f32: 6,
  bool: 7,
  string: 8,
  array: 9,
  u64: 10,
  i64: 11,
  f64: 12,
} as const;
export type GgufScalarType = Exclude<keyof typeof GGUF_VALUE, 'array'>;

/** A metadata value as read: integers that fit a double exactly are numbers, larger 64-bit ones bigints. */
export type GgufValue = string | number | bigint | boolean | GgufValue[];

/** A metadata entry to write: its GGUF type is explicit (a number could be any of eight). */
export type GgufEntry =
  | { key: string; type: GgufScalarType; value: string | number | bigint | boolean }
  | { key: string; type: 'array'; itemType: GgufScalarType; value: readonly (string | number | bigint | boolean)[] };

export interface GgmlType {
  readonly name: string;
  readonly code: number;
  /** Values per block along ne[0] (1 for plain floats). */
  readonly blockValues: number;
  readonly blockBytes: number;
}

// ggml's type codes (ggml.h `enum ggml_type`); the ones Tessera reads.
const TYPES: readonly GgmlType[] = [
  { name: 'F32', code: 0, blockValues: 1, blockBytes: 4 },
  { name: 'F16', code: 1, blockValues: 1, blockBytes: 2 },
  { name: 'Q4_0', code: 2, blockValues: 32, blockBytes: 18 },
  { name: 'Q4_1', code: 3, blockValues: 32, blockBytes: 20 },
  { name: 'Q5_0', code: 6, blockValues: 32, blockBytes: 22 },
  { name: 'Q5_1', code: 7, blockValues: 32, blockBytes: 24 },
  { name: 'Q8_0', code: 8, blockValues: 32, blockBytes: 34 },
  { name: 'Q4_K', code: 12, blockValues: 256, blockBytes: 144 },
  { name: 'Q5_K', code: 13, blockValues: 256, blockBytes: 176 },
  { name: 'Q6_K', code: 14, blockValues: 256, blockBytes: 210 },
  { name: 'BF16', code: 30, blockValues: 1, blockBytes: 2 },
];

export type GgmlTypeName = 'F32' | 'F16' | 'BF16' | 'Q4_0' | 'Q4_1' | 'Q5_0' | 'Q5_1' | 'Q8_0' | 'Q4_K' | 'Q5_K' | 'Q6_K';

const BY_CODE = new Map(TYPES.map((t) => [t.code, t]));
const BY_NAME = new Map(TYPES.map((t) => [t.name, t]));

/** The type with this code, or undefined for one Tessera does not read (IQ*, Q2_K, Q3_K, ...). */
export function ggmlTypeOf(code: number): GgmlType | undefined {
  return BY_CODE.get(code);
}

export function ggmlType(name: GgmlTypeName): GgmlType {
  return BY_NAME.get(name)!;
}

export const GGML_TYPE_NAMES: readonly string[] = TYPES.map((t) => t.name);

export interface GgufTensorInfo {
  name: string;
  /** ggml order: ne[0] innermost. */
  ne: number[];
  /** Row-major shape as Hugging Face writes it (ne reversed). */
  shape: number[];
  type: GgmlType;
  /** Byte offset from the start of the data section. */
  offset: number;
  sizeBytes: number;
}

export interface GgufHeader {
  version: number;
  metadata: Map<string, GgufValue>;
  tensors: Map<string, GgufTensorInfo>;
  alignment: number;
  /** File offset of the data section. */
  dataOffset: number;
  /** dataOffset + the end of the last tensor. */
  fileBytes: number;
}

export const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
export const GGUF_DEFAULT_ALIGNMENT = 32;

/** Bytes of a tensor with these dims in this type; undefined when ne[0] is not whole blocks. */
export function ggufTensorBytes(type: GgmlType, ne: readonly number[]): number | undefined {
  if (ne.length === 0 || ne[0] % type.blockValues !== 0) return undefined;
  return (ne[0] / type.blockValues) * type.blockBytes * ne.slice(1).reduce((a, b) => a * b, 1);
}
