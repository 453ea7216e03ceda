// Weight storage formats: how a matrix W [N, K] (HF Linear [out, in], or an embedding table [vocab, dim])
// sits in GPU memory, the WGSL that reads each one (shaders/lib/weights-*.wgsl), and the float64-exact
// host references that define them.
//
//   format  bytes/weight        data (u32 words per row)      scales (per row)          W[n, k]
//   f32     4                   K f32                         -                         as stored
//   f16     2                   K / 2 (pairs)                 -                         as stored (f16)
//   bf16    2                   K / 2 (pairs)                 -                         as stored (bfloat16)
//   q8      1 + 4/32 = 1.125    Kp / 4  (4 int8 per word)     Kp / 32 f32                q * scale
//   q4      0.5 + 4/32 = 0.625  Kp / 8  (8 nibbles per word)  Kp / 32 (f16 scale, f16 min) q * scale + min
//   q4k     4.5 / 8             K / 256 blocks of 36 words    - (inside the blocks)      llama.cpp Q4_K
//   q5k     5.5 / 8             K / 256 blocks of 44 words    -                          llama.cpp Q5_K
//   q6k     6.625 / 8           K / 256 blocks of 53 words    -                          llama.cpp Q6_K
//
// q4k, q5k and q6k are a GGUF file's K-quant blocks as they are (kernels/k-quants.ts): only GGUF
// checkpoints have them (nothing quantizes to them at load), and they need K % 256 == 0.
//
// Groups of QUANT_GROUP = 32 along K (Kp = K rounded up to 32; the padding is stored as q = 0 and never
// read). q8 is symmetric (llama.cpp Q8_0 with an f32 scale); q4 is asymmetric with a minimum per group
// (llama.cpp Q4_1), which keeps one-signed groups (embedding rows, after RMSNorm folding) accurate at the
// cost of 2 more bytes per group than a zero-point-free Q4_0. f16, bf16, q8 and q4 need K % 4 == 0
// (kernels read 4 values along K at a time); weights with other K stay f32. bf16 holds a BF16
// checkpoint's values as they are (weights/dtype.ts: exact storage), so it is never packed on the GPU;
// quantizeReference rounds to it (to nearest, ties to even) for tests.
//
// Quantization runs on the GPU at load time (quantize.wgsl); quantizeReference() below is the same
// arithmetic on the host (f32 operations, round half to even) and the tests' source of packed weights.
// The WGSL that reads each format is chosen by weight-lib.ts (this file has no shader imports, so host
// tools running without Vite can use it).

import { InternalError } from '../errors';
import type { Tensor } from '../gpu/tensor';
import { floatToHalf, halfToFloat } from './f16';
import { roundHalfEven } from '../round-half-even';
import { dequantizeKRows, isKQuant, K_BLOCK, K_BLOCK_WORDS, K_QUANT_FORMATS, type KQuantFormat, quantizeKRows } from './k-quants';

export type WeightFormat = 'f32' | 'f16' | 'bf16' | 'q8' | 'q4' | KQuantFormat;
export const WEIGHT_FORMATS: readonly WeightFormat[] = ['f32', 'f16', 'bf16', 'q8', 'q4', ...K_QUANT_FORMATS];
export type PackedFormat = Exclude<WeightFormat, 'f32'>;

/** Values per quantization group along K. */
export const QUANT_GROUP = 32;

/** A weight matrix [N, K] in a packed format: `data` (u32 words) and, for q8/q4, per-group `scales`. */
export interface PackedWeight {
  readonly format: PackedFormat;
  /** Logical [N, K]. */
  readonly shape: readonly [number, number];
  readonly data: Tensor;
  readonly scales?: Tensor;
  readonly label: string;
  /** f16 only: multiply in f16 (lib/weights-f16-math.wgsl); set at load time when the device has shader-f16. */
  readonly f16Math?: boolean;
}

/** What a kernel's weight operand can be: a plain f32 tensor or a packed matrix. */
export type Weight = Tensor | PackedWeight;

export function isPacked(w: Weight): w is PackedWeight {
  return (w as PackedWeight).format !== undefined;
}

export function weightFormatOf(w: Weight): WeightFormat {
  return isPacked(w) ? w.format : 'f32';
}

export interface PackedLayout {
  /** u32 words of data per row, and in all. */
  rowWords: number;
  dataWords: number;
  /** Groups (= scale words) per row, and in all (0 for f32/f16). */
  groupsPerRow: number;
  scaleWords: number;
}

export function packedLayout(format: WeightFormat, N: number, K: number): PackedLayout {
  if (isKQuant(format)) {
    // Scales live inside the blocks: no second binding.
    const rowWords = Math.ceil(K / K_BLOCK) * K_BLOCK_WORDS[format];
    return { rowWords, dataWords: rowWords * N, groupsPerRow: 0, scaleWords: 0 };
  }
  const groups = Math.ceil(K / QUANT_GROUP);
  const rowWords =
    format === 'f32' ? K : format === 'f16' || format === 'bf16' ? Math.ceil(K / 2) : format === 'q8' ? groups * 8 : groups * 4;
  const groupsPerRow = format === 'q8' || format === 'q4' ? groups : 0;
  return { rowWords, dataWords: rowWords * N, groupsPerRow, scaleWords: groupsPerRow * N };
}

/** GPU bytes of W [N, K] in `format` (data + scales). */
export function packedSizeBytes(format: WeightFormat, N: number, K: number): number {
  const l = packedLayout(format, N, K);
  return (l.dataWords + l.scaleWords) * 4;
}

/** Whether `format` can hold a matrix with rows of K values (the packed formats read 4 at a time). */
export function formatSupportsK(format: WeightFormat, K: number): boolean {
  if (isKQuant(format)) return K % K_BLOCK === 0;
  return format === 'f32' || K % 4 === 0;
}

export interface PackedHost {
  data: Uint32Array;
  /** q8: f32 bits; q4: pack2x16float(scale, min); absent for f16 and bf16. */
  scales?: Uint32Array;
}

const fr = Math.fround;

const bitsOf = (v: number) => new Uint32Array(new Float32Array([v]).buffer)[0];
const floatOf = (bits: number) => new Float32Array(new Uint32Array([bits >>> 0]).buffer)[0];

/** The bfloat16 bits nearest to a finite f32 value (ties to even): the top half of its f32 bits, rounded. */
export function floatToBf16(v: number): number {
  const bits = bitsOf(v);
  return ((bits + 0x7fff + ((bits >>> 16) & 1)) >>> 16) & 0xffff;
}

/** Pack W [N, K] (row-major f32) into `format` exactly as quantize.wgsl does (f32 arithmetic). */
export function quantizeReference(format: PackedFormat, w: Float32Array, N: number, K: number): PackedHost {
  if (w.length !== N * K) throw new InternalError(`quantizeReference: ${w.length} values for [${N}, ${K}]`);
  if (isKQuant(format)) return { data: quantizeKRows(format, w, N, K) };
  const l = packedLayout(format, N, K);
  const data = new Uint32Array(l.dataWords);
  if (format === 'f16' || format === 'bf16') {
    const half = format === 'f16' ? floatToHalf : floatToBf16;
    for (let n = 0; n < N; n++) {
      for (let i = 0; i < l.rowWords; i++) {
        const k = 2 * i;
        const lo = half(w[n * K + k]);
        const hi = k + 1 < K ? half(w[n * K + k + 1]) : 0;
        data[n * l.rowWords + i] = (lo | (hi << 16)) >>> 0;
      }
    }
    return { data };
  }
  const scales = new Uint32Array(l.scaleWords);
  const G = QUANT_GROUP;
  for (let n = 0; n < N; n++) {
    for (let g = 0; g < l.groupsPerRow; g++) {
      const count = Math.min(G, K - g * G);
      const at = (j: number) => (j < count ? w[n * K + g * G + j] : 0);
      const gi = n * l.groupsPerRow + g;
      if (format === 'q8') {
        let amax = 0;
        for (let j = 0; j < G; j++) amax = Math.max(amax, Math.abs(at(j)));
        const scale = fr(amax / 127);
        const inv = scale > 0 ? fr(1 / scale) : 0;
        for (let j = 0; j < G; j++) {
          const q = Math.min(127, Math.max(-127, roundHalfEven(fr(at(j) * inv))));
          data[gi * 8 + (j >> 2)] |= (q & 255) << (8 * (j & 3));
        }
        scales[gi] = bitsOf(scale);
      } else {
        let lo = at(0);
        let hi = lo;
        for (let j = 1; j < count; j++) {
          lo = Math.min(lo, at(j));
          hi = Math.max(hi, at(j));
        }
        const s16 = floatToHalf(fr(fr(hi - lo) / 15));
        const m16 = floatToHalf(lo);
        const scale = halfToFloat(s16);
        const min = halfToFloat(m16);
        const inv = scale > 0 ? fr(1 / scale) : 0;
        for (let j = 0; j < count; j++) {
          const q = Math.min(15, Math.max(0, roundHalfEven(fr(fr(at(j) - min) * inv))));
          data[gi * 4 + (j >> 3)] |= q << (4 * (j & 7));
        }
        scales[gi] = (s16 | (m16 << 16)) >>> 0;
      }
    }
  }
  return { data, scales };
}

/** W [N, K] as the kernels see it: each value dequantized in f32 exactly as lib/weights-*.wgsl does. */
export function dequantizeReference(format: PackedFormat, packed: PackedHost, N: number, K: number): Float32Array {
  if (isKQuant(format)) return dequantizeKRows(format, packed.data, N, K);
  const l = packedLayout(format, N, K);
  const out = new Float32Array(N * K);
  for (let n = 0; n < N; n++) {
    for (let k = 0; k < K; k++) {
      let v: number;
      if (format === 'f16' || format === 'bf16') {
        const word = packed.data[n * l.rowWords + (k >> 1)];
        const bits = k & 1 ? word >>> 16 : word & 0xffff;
        v = format === 'f16' ? halfToFloat(bits) : floatOf(bits << 16);
      } else {
        const gi = n * l.groupsPerRow + Math.floor(k / QUANT_GROUP);
        const s = packed.scales![gi];
        if (format === 'q8') {
          const byte = (packed.data[n * l.rowWords + (k >> 2)] >>> (8 * (k & 3))) & 255;
          v = fr(((byte << 24) >> 24) * floatOf(s));
        } else {
          const q = (packed.data[n * l.rowWords + (k >> 3)] >>> (4 * (k & 7))) & 15;
          v = fr(fr(q * halfToFloat(s & 0xffff)) + halfToFloat(s >>> 16));
        }
      }
      out[n * K + k] = v;
    }
  }
  return out;
}

/** Largest |W - dequantized W| the format allows for a group with this range (the quantization bound). */
export function quantizationBound(format: PackedFormat, groupValues: ArrayLike<number>): number {
  let lo = Infinity;
  let hi = -Infinity;
  for (let i = 0; i < groupValues.length; i++) {
    lo = Math.min(lo, groupValues[i]);
    hi = Math.max(hi, groupValues[i]);
  }
  const amax = Math.max(Math.abs(lo), Math.abs(hi));
  if (format === 'f16') return amax * 2 ** -11 + 2 ** -25;
  if (format === 'bf16') return amax * 2 ** -8;
  if (format === 'q8') return (amax / 127) * 0.5 * (1 + 1e-5);
  // q4: half a step of the f16-rounded scale, plus the f16 rounding of the minimum (up to clamping).
  const scale = (hi - lo) / 15;
  return scale * 0.5 * (1 + 2 ** -10) + Math.abs(lo) * 2 ** -11 + scale * 2 ** -10 * 15 + 1e-7;
}
