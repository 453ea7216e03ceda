// GGUF tensors into Tessera's GPU weight formats (kernels/weight-format.ts), without changing a value:
//
//   GGUF type            Tessera format   how
//   F32 / F16 / BF16     any              as a safetensors tensor of that dtype (the load's dtype applies)
//   Q8_0                 q8               int8 values as they are; the f16 scale widened to f32 (exact)
//   Q4_1                 q4               nibbles reordered (ggml: value j in byte j % 16, low nibble for
//                                         j < 16; Tessera: 8 consecutive values per u32); scale and min
//                                         as they are (f16)
//   Q4_0                 q4               as Q4_1 with min = −8·d, which f16 holds exactly (8·d is a power-
//                                         of-two multiple of an f16), so q·d + min = (q − 8)·d in f32
//   Q4_K / Q5_K / Q6_K   q4k / q5k / q6k  the blocks as they are (Q6_K's f16 d widened to f32 to make whole
//                                         words: kernels/k-quants.ts), dequantized in the shaders
//   Q5_0, Q5_1           f32              dequantized on the host (exact: every value is a product of an
//                                         f16 and small integers)
//
// A fused GPU weight (q, k, v in one qkv) whose parts are of different types, or of a type without an exact
// Tessera format, is f32 as well: the only format that holds all of them exactly.

import { InternalError } from '../../../errors';
import { halfToFloat } from '../../../kernels/f16';
import { packedLayout, type WeightFormat } from '../../../kernels/weight-format';
import { isKQuant, type KQuantFormat, kBlocksToGpu } from '../../../kernels/k-quants';
import { type GgmlType, K_FORMAT_OF } from './gguf-format';

/** The safetensors dtype a float GGUF type reads as, or undefined for block types. */
export function floatDtypeOf(type: GgmlType): 'F32' | 'F16' | 'BF16' | undefined {
  return type.name === 'F32' || type.name === 'F16' || type.name === 'BF16' ? type.name : undefined;
}

/** The packed format a block type is held in exactly, or undefined (it is widened to f32). */
export function exactFormatOf(type: GgmlType): 'q8' | 'q4' | KQuantFormat | undefined {
  if (type.name === 'Q8_0') return 'q8';
  if (type.name === 'Q4_0' || type.name === 'Q4_1') return 'q4';
  return K_FORMAT_OF[type.name];
}

/**
 * The format of a GPU weight whose checkpoint tensors have these GGUF types, when any is a block type
 * (all float types: undefined, and the load's dtype decides as for safetensors).
 */
export function ggufStorageFormat(types: readonly GgmlType[]): WeightFormat | undefined {
  if (types.every((t) => floatDtypeOf(t) !== undefined)) return undefined;
  const formats = new Set(types.map(exactFormatOf));
  return formats.size === 1 && !formats.has(undefined) ? [...formats][0] : 'f32';
}

const f16Bits = (b: Uint8Array, at: number) => b[at] | (b[at + 1] << 8);

/**
 * Rows of K values stored as Q8_0 / Q4_0 / Q4_1 blocks, in Tessera's q8 / q4 layout (data words and scale
 * words, as the GPU holds them).
 */
export function repackBlocks(type: GgmlType, bytes: Uint8Array, rows: number, K: number): { data: Uint8Array; scales: Uint8Array } {
  const format = exactFormatOf(type);
  if (!format) throw new InternalError(`repackBlocks: ${type.name} has no exact Tessera format`);
  if (isKQuant(format)) return { data: new Uint8Array(kBlocksToGpu(format, bytes).buffer), scales: new Uint8Array(0) };
  const layout = packedLayout(format, rows, K);
  const data = new Uint32Array(layout.dataWords);
  const scales = new Uint32Array(layout.scaleWords);
  const scaleFloats = new Float32Array(scales.buffer);
  const numBlocks = (rows * K) / 32;
  if (bytes.byteLength !== numBlocks * type.blockBytes)
    throw new InternalError(`repackBlocks: ${bytes.byteLength} bytes are not ${rows}×${K} ${type.name}`);
  // K is a multiple of 32 (GGUF stores whole blocks per row), so block g of the tensor is group g.
  for (let g = 0; g < numBlocks; g++) {
    const at = g * type.blockBytes;
    if (format === 'q8') {
      scaleFloats[g] = halfToFloat(f16Bits(bytes, at));
      for (let w = 0; w < 8; w++) {
        const o = at + 2 + 4 * w;
        data[g * 8 + w] = (bytes[o] | (bytes[o + 1] << 8) | (bytes[o + 2] << 16) | (bytes[o + 3] << 24)) >>> 0;
      }
      continue;
    }
    const d = f16Bits(bytes, at);
    const withMin = type.name === 'Q4_1';
    const minBits = withMin ? f16Bits(bytes, at + 2) : negEightTimes(d);
    scales[g] = (d | (minBits << 16)) >>> 0;
    const qs = at + (withMin ? 4 : 2);
    for (let w = 0; w < 4; w++) {
      let word = 0;
      for (let i = 0; i < 8; i++) {
        const j = 8 * w + i;
        const q = j < 16 ? bytes[qs + j] & 15 : bytes[qs + j - 16] >> 4;
        word |= q << (4 * i);
      }
      data[g * 4 + w] = word >>> 0;
    }
  }
  return { data: new Uint8Array(data.buffer), scales: new Uint8Array(scales.buffer) };
}

/** The f16 bits of −8·h for f16 bits h: exact (the exponent grows by 3; a subnormal shifts left). */
function negEightTimes(h: number): number {
  const exp = (h >> 10) & 31;
  const mant = h & 1023;
  if (exp === 31) return h ^ 0x8000;
  let e = exp;
  let m = mant;
  if (e === 0) {
    // Subnormal: value m·2^-24; ·8 is m·2^-21, normal once m·8 reaches 1024.
    m *= 8;
    while (m >= 2048) {
      m >>= 1;
      e++;
    }
    if (m >= 1024) {
      e++;
      m -= 1024;
    }
    return ((h ^ 0x8000) & 0x8000) | (e << 10) | m;
  }
  e += 3;
  if (e >= 31) throw new InternalError(`a Q4_0 scale of ${halfToFloat(h)} times 8 overflows f16`);
  return ((h ^ 0x8000) & 0x8000) | (e << 10) | m;
}
