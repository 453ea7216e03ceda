// Row counts a model step is padded to, so that a handful of plans (bind groups and uniforms built once)
// serve every step: 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, ... up to the maximum (always a
// bucket itself). Padding wastes at most a third of a step's rows, and the scheduler's chunks usually
// fill a bucket exactly (a step is mostly decode rows plus a chunk as long as the budget allows).

import { InternalError } from '../errors';

export function rowBuckets(max: number): number[] {
  if (!Number.isInteger(max) || max < 1) throw new InternalError(`rowBuckets: max must be a positive integer, got ${max}`);
  const out: number[] = [];
  for (let p = 1; p <= max; p *= 2) {
    out.push(p);
    const between = p + p / 2; // 3, 6, 12, 24, ...
    if (p >= 2 && between <= max && Number.isInteger(between)) out.push(between);
  }
  if (out[out.length - 1] !== max) out.push(max);
  return [...new Set(out)].sort((a, b) => a - b);
}

/** The smallest bucket holding `n` rows. */
export function bucketFor(n: number, buckets: readonly number[]): number {
  for (const b of buckets) if (b >= n) return b;
  throw new InternalError(`bucketFor: ${n} rows exceed the largest bucket ${buckets[buckets.length - 1]}`);
}
