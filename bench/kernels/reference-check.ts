// Checks each timed output against the project's float64 CPU references, so a fast wrong kernel (ours
// or the peer's) shows up in the table. Matmul checks a few rows (a full 1024×3072×768 reference would
// take minutes in JS); attention checks every output.

import { matmulReference } from '../../src/kernels/matmul';
import { vitAttentionReference, type VitAttentionShape } from '../../src/kernels/vit-attention';
import { maxAbsDiff } from './host-arrays';

/** Up to four rows spread over [0, M): first, last and two between. */
export function sampleRows(M: number): number[] {
  const rows = [0, Math.floor(M / 3), Math.floor((2 * M) / 3), M - 1];
  return rows.filter((r, i) => rows.indexOf(r) === i);
}

export interface MatmulCheck {
  rows: number[];
  /** Largest |y - reference| over the checked rows of y: [M, N]. */
  maxAbsErr(y: Float32Array): number;
}

/** Reference rows of x[M, K] · w[N, K]ᵀ. */
export function matmulCheck(x: Float32Array, w: Float32Array, M: number, K: number, N: number): MatmulCheck {
  const rows = sampleRows(M);
  const refs = rows.map((r) => matmulReference(x.subarray(r * K, (r + 1) * K), w, undefined, { M: 1, N, K }));
  return {
    rows,
    maxAbsErr(y) {
      let worst = 0;
      rows.forEach((r, i) => {
        const err = maxAbsDiff(y.subarray(r * N, (r + 1) * N), refs[i]);
        worst = Number.isNaN(err) || err > worst ? err : worst;
      });
      return worst;
    },
  };
}

/** Reference of fused-qkv attention with no masked keys: [batch * tokens, heads * headDim]. */
export function attentionReference(qkv: Float32Array, shape: VitAttentionShape): Float32Array {
  return vitAttentionReference(qkv, new Uint32Array(shape.batch * shape.tokens).fill(1), shape);
}
