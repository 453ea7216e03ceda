// llama.cpp's K-quant blocks (256 values each) as Tessera weight formats q4k, q5k and q6k: the blocks of a
// GGUF file's Q4_K / Q5_K / Q6_K tensors, held on the GPU as they are and dequantized in the shaders
// (shaders/lib/weights-q4k.wgsl, -q5k, -q6k). Host side: the block layouts, their float64 values (the
// reference), and a range-based encoder for tests and the repository's GGUF writer.
//
//   format  GGUF   bytes per 256   GPU words per 256            value j of the block
//   q4k     Q4_K   144             36 (the block as it is)      d·sc[s]·q − dmin·m[s]        (s = j / 32)
//   q5k     Q5_K   176             44 (the block as it is)      the same, q with a fifth bit from qh
//   q6k     Q6_K   210             53 (ql, qh, scales as they   d·scales[j / 16]·(q − 32)
//                                      are, then d as f32)
//
// Q4_K / Q5_K block: f16 d, f16 dmin, u8 scales[12] (eight 6-bit scales sc and minimums m: kScaleMin),
// [Q5_K: u8 qh[32]], u8 qs[128]: qs[32c + l] holds value 64c + l in its low nibble and 64c + 32 + l in
// its high one; Q5_K's bit 2c (low) or 2c + 1 (high) of qh[l] adds 16.
// Q6_K block: u8 ql[128], u8 qh[64], i8 scales[16], f16 d; in half h (128 values) value 32i + l (i < 4)
// has its low 4 bits in ql[64h + l + 32 (i & 1)] (low nibble for i < 2, high for i ≥ 2) and its high 2
// bits at (qh[32h + l] >> 2i) & 3.
// Q6_K's 210 bytes are not whole words: on the GPU the block is its first 208 bytes and d widened to f32
// (exact), 53 words.

import { InternalError } from '../errors';
import { floatToHalf, halfToFloat } from './f16';
import { roundHalfEven } from '../round-half-even';

export type KQuantFormat = 'q4k' | 'q5k' | 'q6k';
export const K_QUANT_FORMATS: readonly KQuantFormat[] = ['q4k', 'q5k', 'q6k'];

/** Values per block. */
export const K_BLOCK = 256;
/** Bytes of one block in a GGUF file. */
const K_BLOCK_BYTES: Record<KQuantFormat, number> = { q4k: 144, q5k: 176, q6k: 210 };
/** u32 words of one block on the GPU. */
export const K_BLOCK_WORDS: Record<KQuantFormat, number> = { q4k: 36, q5k: 44, q6k: 53 };

export function isKQuant(format: string): format is KQuantFormat {
  return (K_QUANT_FORMATS as readonly string[]).includes(format);
}

/** A K-quant sub-block's 6-bit scale and minimum from the 12 packed bytes at `at` (j = 0..7). */
function kScaleMin(b: Uint8Array, at: number, j: number): [number, number] {
  if (j < 4) return [b[at + j] & 63, b[at + j + 4] & 63];
  return [(b[at + j + 4] & 0xf) | ((b[at + j - 4] >> 6) << 4), (b[at + j + 4] >> 4) | ((b[at + j] >> 6) << 4)];
}

const f16At = (b: Uint8Array, at: number) => halfToFloat(b[at] | (b[at + 1] << 8));

/** The 256 values of the GGUF block at b[at] (float64: exact), into out[o..]. */
export function dequantizeKBlock(format: KQuantFormat, b: Uint8Array, at: number, out: Float64Array, o: number): void {
  if (format === 'q6k') {
    const d = f16At(b, at + 208);
    for (let h = 0; h < 2; h++) {
      for (let i = 0; i < 4; i++) {
        for (let l = 0; l < 32; l++) {
          const lowByte = b[at + 64 * h + l + 32 * (i & 1)];
          const low = i < 2 ? lowByte & 15 : lowByte >> 4;
          const high = (b[at + 128 + 32 * h + l] >> (2 * i)) & 3;
          const v = 128 * h + 32 * i + l;
          out[o + v] = d * ((b[at + 192 + (v >> 4)] << 24) >> 24) * ((low | (high << 4)) - 32);
        }
      }
    }
    return;
  }
  const d = f16At(b, at);
  const dmin = f16At(b, at + 2);
  const five = format === 'q5k';
  const qs = at + (five ? 48 : 16);
  for (let c = 0; c < 4; c++) {
    for (const hi of [0, 1]) {
      const [sc, m] = kScaleMin(b, at + 4, 2 * c + hi);
      for (let l = 0; l < 32; l++) {
        const q = hi ? b[qs + 32 * c + l] >> 4 : b[qs + 32 * c + l] & 15;
        const extra = five ? ((b[at + 16 + l] >> (2 * c + hi)) & 1) << 4 : 0;
        out[o + 64 * c + 32 * hi + l] = d * sc * (q + extra) - dmin * m;
      }
    }
  }
}

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
const steps = (x: number, d: number) => (d === 0 ? 0 : roundHalfEven(x / d));

function putHalf(out: Uint8Array, at: number, v: number): number {
  const h = floatToHalf(v);
  out[at] = h & 255;
  out[at + 1] = h >> 8;
  return halfToFloat(h);
}

/**
 * 256 values as a GGUF block at out[o]: scales from each sub-block's range (not llama.cpp's
 * error-minimising search; any valid block dequantizes the same way).
 */
export function quantizeKBlock(format: KQuantFormat, x: ArrayLike<number>, at: number, out: Uint8Array, o: number): void {
  if (format === 'q6k') {
    const scale: number[] = [];
    for (let s = 0; s < 16; s++) {
      let best = 0;
      for (let j = 0; j < 16; j++) if (Math.abs(x[at + 16 * s + j]) > Math.abs(best)) best = x[at + 16 * s + j];
      scale.push(best / -32);
    }
    const d = putHalf(out, o + 208, Math.max(...scale.map(Math.abs)) / 127);
    const sc = scale.map((v) => clamp(steps(v, d), -128, 127));
    for (let s = 0; s < 16; s++) out[o + 192 + s] = sc[s] & 255;
    for (let h = 0; h < 2; h++) {
      for (let i = 0; i < 4; i++) {
        for (let l = 0; l < 32; l++) {
          const v = 128 * h + 32 * i + l;
          const q = clamp(steps(x[at + v], d * sc[v >> 4]) + 32, 0, 63);
          out[o + 64 * h + l + 32 * (i & 1)] |= i < 2 ? q & 15 : (q & 15) << 4;
          out[o + 128 + 32 * h + l] |= (q >> 4) << (2 * i);
        }
      }
    }
    return;
  }
  const five = format === 'q5k';
  const levels = five ? 31 : 15;
  const scale: number[] = [];
  const negMin: number[] = [];
  for (let s = 0; s < 8; s++) {
    let lo = 0;
    let hi = x[at + 32 * s];
    for (let j = 0; j < 32; j++) {
      lo = Math.min(lo, x[at + 32 * s + j]);
      hi = Math.max(hi, x[at + 32 * s + j]);
    }
    scale.push((hi - lo) / levels);
    negMin.push(-lo);
  }
  const d = putHalf(out, o, Math.max(...scale) / 63);
  const dmin = putHalf(out, o + 2, Math.max(...negMin) / 63);
  const sc = scale.map((v) => clamp(steps(v, d), 0, 63));
  const mn = negMin.map((v) => clamp(steps(v, dmin), 0, 63));
  for (let j = 0; j < 4; j++) {
    out[o + 4 + j] = sc[j] | ((sc[j + 4] >> 4) << 6);
    out[o + 8 + j] = mn[j] | ((mn[j + 4] >> 4) << 6);
    out[o + 12 + j] = (sc[j + 4] & 15) | ((mn[j + 4] & 15) << 4);
  }
  const qs = o + (five ? 48 : 16);
  for (let c = 0; c < 4; c++) {
    for (let l = 0; l < 32; l++) {
      const q = [0, 1].map((hi) => {
        const s = 2 * c + hi;
        return clamp(steps(x[at + 64 * c + 32 * hi + l] + dmin * mn[s], d * sc[s]), 0, levels);
      });
      out[qs + 32 * c + l] = (q[0] & 15) | ((q[1] & 15) << 4);
      if (five) out[o + 16 + l] |= ((q[0] >> 4) << (2 * c)) | ((q[1] >> 4) << (2 * c + 1));
    }
  }
}

/** GGUF blocks (rows of whole blocks, as a GGUF tensor stores them) in the GPU layout, as u32 words. */
export function kBlocksToGpu(format: KQuantFormat, bytes: Uint8Array): Uint32Array {
  const numBlocks = bytes.byteLength / K_BLOCK_BYTES[format];
  if (!Number.isInteger(numBlocks)) throw new InternalError(`kBlocksToGpu: ${bytes.byteLength} bytes are not whole ${format} blocks`);
  const words = new Uint32Array(numBlocks * K_BLOCK_WORDS[format]);
  if (format !== 'q6k') {
    new Uint8Array(words.buffer).set(bytes);
    return words;
  }
  const asBytes = new Uint8Array(words.buffer);
  const asFloats = new Float32Array(words.buffer);
  for (let b = 0; b < numBlocks; b++) {
    const from = b * 210;
    asBytes.set(bytes.subarray(from, from + 208), b * 212);
    asFloats[b * 53 + 52] = f16At(bytes, from + 208);
  }
  return words;
}

/** The GPU words of K-quant rows back as GGUF block bytes (kBlocksToGpu's inverse). */
function kBlocksFromGpu(format: KQuantFormat, words: Uint32Array): Uint8Array {
  const asBytes = new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
  if (format !== 'q6k') return asBytes.slice();
  const numBlocks = words.length / 53;
  const out = new Uint8Array(numBlocks * 210);
  const floats = new Float32Array(words.buffer, words.byteOffset, words.length);
  for (let b = 0; b < numBlocks; b++) {
    out.set(asBytes.subarray(b * 212, b * 212 + 208), b * 210);
    const h = floatToHalf(floats[b * 53 + 52]);
    out[b * 210 + 208] = h & 255;
    out[b * 210 + 209] = h >> 8;
  }
  return out;
}

/** W [N, K] (K a multiple of 256) encoded as K-quant rows, in the GPU layout. */
export function quantizeKRows(format: KQuantFormat, w: Float32Array, N: number, K: number): Uint32Array {
  if (K % K_BLOCK !== 0) throw new InternalError(`quantizeKRows: K ${K} is not a multiple of ${K_BLOCK}`);
  const numBlocks = (N * K) / K_BLOCK;
  const bytes = new Uint8Array(numBlocks * K_BLOCK_BYTES[format]);
  for (let b = 0; b < numBlocks; b++) quantizeKBlock(format, w, b * K_BLOCK, bytes, b * K_BLOCK_BYTES[format]);
  return kBlocksToGpu(format, bytes);
}

/** K-quant rows in the GPU layout as the values they hold, rounded to f32 (the shaders' arithmetic). */
export function dequantizeKRows(format: KQuantFormat, words: Uint32Array, N: number, K: number): Float32Array {
  const bytes = kBlocksFromGpu(format, words);
  const out = new Float64Array(N * K);
  for (let b = 0; b < (N * K) / K_BLOCK; b++) dequantizeKBlock(format, bytes, b * K_BLOCK_BYTES[format], out, b * K_BLOCK);
  return Float32Array.from(out);
}
