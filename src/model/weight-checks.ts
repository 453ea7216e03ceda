// Checks on weight values as they are loaded. NaN or ±Infinity in a weight propagates through every
// matmul it touches, and the sampled token is then whatever argmax makes of NaN logits (id 0): a silent
// wrong answer. One pass per tensor, on the f32 values about to be uploaded (~0.5 ns per value), or on
// the f16 or bf16 bits of a tensor that is uploaded as it is stored (no f32 copy made only to be checked).

import { NonFiniteWeightError } from '../errors';
import { halfToFloat } from '../kernels/f16';

/** Throws NonFiniteWeightError naming the tensor, the first bad element and how many there are. */
export function checkFiniteWeights(values: Float32Array, tensor: string, file: string): void {
  let first = -1;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    // v - v is 0 for every finite v, NaN for NaN and ±Infinity: one comparison per value.
    if (v - v !== 0) {
      first = i;
      break;
    }
  }
  if (first < 0) return;
  let count = 0;
  for (let i = first; i < values.length; i++) if (!Number.isFinite(values[i])) count++;
  throw new NonFiniteWeightError(tensor, file, first, values[first], count);
}

/** The same check on F16 bytes as stored (little-endian): exponent all ones is ±Infinity or NaN. */
export function checkFiniteHalfWeights(bytes: Uint8Array, tensor: string, file: string): void {
  checkFinite16(bytes, tensor, file, 0x7c00, halfToFloat);
}

/** The same check on BF16 bytes as stored (little-endian): exponent all ones is ±Infinity or NaN. */
export function checkFiniteBf16Weights(bytes: Uint8Array, tensor: string, file: string): void {
  checkFinite16(bytes, tensor, file, 0x7f80, (b) => new Float32Array(new Uint32Array([(b << 16) >>> 0]).buffer)[0]);
}

function checkFinite16(bytes: Uint8Array, tensor: string, file: string, exponent: number, toFloat: (bits: number) => number): void {
  const aligned = bytes.byteOffset % 2 === 0 ? bytes : bytes.slice();
  const bits = new Uint16Array(aligned.buffer, aligned.byteOffset, aligned.byteLength >> 1);
  let first = -1;
  let count = 0;
  for (let i = 0; i < bits.length; i++) {
    if ((bits[i] & exponent) !== exponent) continue;
    if (first < 0) first = i;
    count++;
  }
  if (first >= 0) throw new NonFiniteWeightError(tensor, file, first, toFloat(bits[first]), count);
}

/** The check on a checkpoint tensor's stored bytes, whatever its float dtype, without widening it whole. */
export function checkFiniteStored(dtype: string, bytes: Uint8Array, tensor: string, file: string): void {
  if (dtype === 'F16') checkFiniteHalfWeights(bytes, tensor, file);
  else if (dtype === 'BF16') checkFiniteBf16Weights(bytes, tensor, file);
  else if (dtype === 'F32') {
    const aligned = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
    checkFiniteWeights(new Float32Array(aligned.buffer, aligned.byteOffset, aligned.byteLength >> 2), tensor, file);
  }
}
