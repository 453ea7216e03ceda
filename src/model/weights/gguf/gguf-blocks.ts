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
//   Q4_K, Q5_K, Q6_K   256 values a block: src/kernels/k-quants.ts (Tessera's q4k, q5k, q6k formats)

import { InternalError } from '../../../errors';
import { halfToFloat } from '../../../kernels/f16';
import { dequantizeKBlock } from '../../../kernels/k-quants';
import { type GgmlType, K_FORMAT_OF } from './gguf-format';

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
    case 'Q5_K':
    case 'Q6_K':
      dequantizeKBlock(K_FORMAT_OF[name]!, b, at, out, o);
      return;
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
