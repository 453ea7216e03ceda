// The K-quant formats (q4k, q5k, q6k: llama.cpp's Q4_K / Q5_K / Q6_K blocks as a GGUF file stores them,
// src/kernels/k-quants.ts) through every kernel that reads weights, against the reference on the blocks'
// exact values: each matmul plan (one row and many, ragged N, K of one block), K of several blocks with
// the residual epilogue, an activation and parts of rows (one plan per format), the batched decode rows,
// and the embedding gather in parts. Also a weight in parts of different formats with one bias bound by
// views (a GGUF qkv of Q4_K q and k and a Q6_K v, as the decoder holds and reads it).

import { describe, it } from 'vitest';
import { embeddingGatherCase, matmulCase, matmulRowsCase } from '../../src/selfcheck/cases';
import { expectCasePasses, useGpu } from './gpu';

const gpu = useGpu();

describe.each(['q4k', 'q5k', 'q6k'] as const)('%s weights', (format) => {
  for (const plan of ['register-wide', 'register-narrow', 'workgroup', 'gemv'] as const) {
    const M = plan === 'gemv' || plan === 'register-narrow' ? 3 : 19;
    it(`${plan} ${M}x37x256 +bias`, () => expectCasePasses(gpu(), matmulCase({ M, N: 37, K: 256 }, { plan, bias: true, format })));
  }
  // Several blocks per row, the residual epilogue, an activation and parts of rows: each format once in
  // the run (the epilogue and the parts are the kernels', the same for every format).
  const extra = { q4k: 'register-wide', q5k: 'gemv', q6k: 'workgroup' } as const;
  it(`${extra[format]} 3x70x768 in 2 parts of rows, y += silu(x·Wᵀ + b)`, () =>
    expectCasePasses(
      gpu(),
      matmulCase({ M: 3, N: 70, K: 768 }, { plan: extra[format], bias: true, accumulate: true, activation: 'silu', parts: 2, format }),
    ));
  for (const M of [5]) {
    it(`register-narrow ${M} rows: each row = that row alone`, () =>
      expectCasePasses(gpu(), matmulRowsCase({ M, N: 37, K: 512 }, { format, bias: true })));
  }
  it('embedding gather in 3 parts, with a bad id', () =>
    expectCasePasses(gpu(), embeddingGatherCase({ numTokens: 9, vocab: 100, dim: 512 }, { format, parts: 3, badId: true })));
});

// The decoder's qkv from a Q4_K_M file: a q4k part (q and k) and a q6k part (v), each product writing its
// columns of y with its view of the one bias; a decode row and a prefill's rows.
describe('a weight in parts of different formats', () => {
  for (const M of [1, 16]) {
    it(`${M}x192x256, q4k|q4k|q6k parts, +bias views`, () =>
      expectCasePasses(gpu(), matmulCase({ M, N: 192, K: 256 }, { bias: true, partFormats: ['q4k', 'q4k', 'q6k'] })));
  }
});
