// What each ggml block holds, as values: the float64 dequantization of every type the reader accepts.
// This is the reference a GGUF load is checked against (the tests dequantize the same file here and run
// the float64 model on it); the GPU reads Q8_0, Q4_0 and Q4_1 blocks as Tessera's q8/q4 (gguf-repack.ts).
//
//   type   block (bytes)                                             value j of the block
//   Q8_0   f16 d, i8 q[32]                              (34)          d·q[j]
//   Q4_0   f16 d, u8 qs[16]                             (18)          d·(nib(j) − 8)
//   Q4_1   f16 d, f16 m, u8 qs[16]                      (20)          d·nib(j) + m
//   Q5_0   f16 d, u32 qh, u8 qs[16]                     (22)          d·(nib(j) + 16·bit(qh, j) − 16)
//   Q5_1   f16 d, f16 m, u32 qh, u8 qs[16]              (24)          d·(nib(j) + 16·bit(qh, j)) + m
//          nib(j) = qs[j] & 15 for j < 16, qs[j − 16] >> 4 for j ≥ 16
//   Q4_K   f16 d, f16 dmin, u8 scales[12], u8 qs[128]   (144, 256 values in 8 sub-blocks of 32)
//          d·sc[s]·q − dmin·m[s]; sc, m 6-bit (kScaleMin); qs[32c + l]: low nibble value 64c + l,
//          high nibble value 64c + 32 + l
//   Q5_K   f16 d, f16 dmin, u8 scales[12], u8 qh[32], u8 qs[128]  (176): as Q4_K, plus bit 2c (low) or
//          2c + 1 (high) of qh[l] as 16
//   Q6_K   u8 ql[128], u8 qh[64], i8 scales[16], f16 d  (210): d·scales[s]·(q − 32), 16 values per scale;
//          in each half h of 128 values, value 32i + l (i = 0..3) has low 4 bits from ql[64h + l + 32(i&1)]
//          (low nibble for i < 2, high for i ≥ 2) and high 2 bits (qh[32h + l] >> 2i) & 3

import { InternalError } from '../../../errors';
import { halfToFloat } from '../../../kernels/f16';
import type { GgmlType } from './gguf-format';

/** A K-quant sub-block's 6-bit scale and minimum from the 12 packed bytes at `at` (j = 0..7). */
function kScaleMin(b: Uint8Array, at: number, j: number): [number, number] {
  if (j < 4) return [b[at + j] & 63, b[at + j + 4] & 63];
  return [(b[at + j + 4] & 0xf) | ((b[at + j - 4] >> 6) << 4), (b[at + j + 4] >> 4) | ((b[at + j] >> 6) << 4)];
}

const f16At = (b: Uint8Array, at: number) => halfToFloat(b[at] | (b[at + 1] << 8));

function dequantizeBlock(name: string, b: Uint8Array, at: number, out: Float64Array, o: number): void {
  switch (name) {
    case 'Q8_0': {
      const d = f16At(b, at);
      for (let j = 0; j < 32; j++) out[o + j] = d * ((b[at + 2 + j] << 24) >> 24);
      return;
    }
    case 'Q4_0':
    case 'Q4_1': {
      const d = f16At(b, at);
      const m = name === 'Q4_1' ? f16At(b, at + 2) : -8 * d;
      const qs = at + (name === 'Q4_1' ? 4 : 2);
      for (let j = 0; j < 16; j++) {
        out[o + j] = d * (b[qs + j] & 15) + m;
        out[o + j + 16] = d * (b[qs + j] >> 4) + m;
      }
      return;
    }
    case 'Q5_0':
    case 'Q5_1': {
      const d = f16At(b, at);
      const m = name === 'Q5_1' ? f16At(b, at + 2) : -16 * d;
      const h = at + (name === 'Q5_1' ? 4 : 2);
      const qh = (b[h] | (b[h + 1] << 8) | (b[h + 2] << 16) | (b[h + 3] << 24)) >>> 0;
      for (let j = 0; j < 16; j++) {
        out[o + j] = d * ((b[h + 4 + j] & 15) | (((qh >>> j) & 1) << 4)) + m;
        out[o + j + 16] = d * ((b[h + 4 + j] >> 4) | (((qh >>> (j + 16)) & 1) << 4)) + m;
      }
      return;
    }
    case 'Q4_K':
    case 'Q5_K': {
      const d = f16At(b, at);
      const dmin = f16At(b, at + 2);
      const five = name === 'Q5_K';
      const qh = at + 16;
      const qs = at + (five ? 48 : 16);
      for (let c = 0; c < 4; c++) {
        for (const hi of [0, 1]) {
          const [sc, m] = kScaleMin(b, at + 4, 2 * c + hi);
          for (let l = 0; l < 32; l++) {
            const q = hi ? b[qs + 32 * c + l] >> 4 : b[qs + 32 * c + l] & 15;
            const extra = five ? ((b[qh + l] >> (2 * c + hi)) & 1) << 4 : 0;
            out[o + 64 * c + 32 * hi + l] = d * sc * (q + extra) - dmin * m;
          }
        }
      }
      return;
    }
    case 'Q6_K': {
      const d = f16At(b, at + 208);
      for (let h = 0; h < 2; h++) {
        for (let i = 0; i < 4; i++) {
          for (let l = 0; l < 32; l++) {
            const lowByte = b[at + 64 * h + l + 32 * (i & 1)];
            const low = i < 2 ? lowByte & 15 : lowByte >> 4;
            const high = (b[at + 128 + 32 * h + l] >> (2 * i)) & 3;
            const v = 128 * h + 32 * i + l;
            const scale = (b[at + 192 + 8 * h + ((v % 128) >> 4)] << 24) >> 24;
            out[o + v] = d * scale * ((low | (high << 4)) - 32);
          }
        }
      }
      return;
    }
    default:
      throw new InternalError(`dequantizeBlock: ${name} is not a block type`);
  }
}

/** The values of `numValues` elements stored as `type` in `bytes`, in float64 (exact for every type). */
export function dequantizeGgml(type: GgmlType, bytes: Uint8Array, numValues: number): Float64Array {
  if (numValues % type.blockValues !== 0 || (numValues / type.blockValues) * type.blockBytes !== bytes.byteLength) {
    throw new InternalError(`dequantizeGgml: ${bytes.byteLength} bytes of ${type.name} are not ${numValues} values`);
  }
  const out = new Float64Array(numValues);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (type.name === 'F32') for (let i = 0; i < numValues; i++) out[i] = dv.getFloat32(4 * i, true);
  else if (type.name === 'F16') for (let i = 0; i < numValues; i++) out[i] = halfToFloat(dv.getUint16(2 * i, true));
  else if (type.name === 'BF16') {
    const bits = new Uint32Array(1);
    const asFloat = new Float32Array(bits.buffer);
    for (let i = 0; i < numValues; i++) {
      bits[0] = dv.getUint16(2 * i, true) << 16;
      out[i] = asFloat[0];
    }
  } else
    for (let blk = 0; blk < numValues / type.blockValues; blk++)
      dequantizeBlock(type.name, bytes, blk * type.blockBytes, out, blk * type.blockValues);
  return out;
}
