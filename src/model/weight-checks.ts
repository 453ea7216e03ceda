// Checks on weight values as they are loaded. NaN or ±Infinity in a weight propagates through every
// matmul it touches, and the sampled token is then whatever argmax makes of NaN logits (id 0): a silent
// wrong answer. One pass per tensor, on the f32 values about to be uploaded (~0.5 ns per value).

import { NonFiniteWeightError } from '../errors';

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
