// The K-quant formats (q4k, q5k, q6k: llama.cpp's Q4_K / Q5_K / Q6_K blocks as a GGUF file stores them,
// src/kernels/k-quants.ts) through every kernel that reads weights, against the reference on the blocks'
// exact values: each matmul plan (one row and many, ragged N, K of one block), K of several blocks with
// the residual epilogue and an activation, parts of rows, the batched decode rows, and the embedding gather.

import { describe, it } from 'vitest';
import { embeddingGatherCase, matmulCase, matmulRowsCase } from '../../src/selfcheck/cases';
import { expectCasePasses, useGpu } from './gpu';

const gpu = useGpu();

describe.each(['q4k', 'q5k', 'q6k'] as const)('%s weights', (format) => {
  for (const plan of ['register-wide', 'register-narrow', 'workgroup', 'gemv'] as const) {
    const M = plan === 'gemv' || plan === 'register-narrow' ? 3 : 19;
    it(`${plan} ${M}x37x256 +bias`, () => expectCasePasses(gpu(), matmulCase({ M, N: 37, K: 256 }, { plan, bias: true, format })));
  }
  it('register-wide 19x21x768 y += silu(x·Wᵀ + b)', () =>
    expectCasePasses(
      gpu(),
      matmulCase({ M: 19, N: 21, K: 768 }, { plan: 'register-wide', bias: true, accumulate: true, activation: 'silu', format }),
    ));
  it('gemv in 2 parts of rows', () => expectCasePasses(gpu(), matmulCase({ M: 2, N: 70, K: 512 }, { plan: 'gemv', parts: 2, format })));
  it('one decode row 1x300x512 (device plan)', () => expectCasePasses(gpu(), matmulCase({ M: 1, N: 300, K: 512 }, { format })));
  for (const M of [5]) {
    it(`register-narrow ${M} rows: each row = that row alone`, () =>
      expectCasePasses(gpu(), matmulRowsCase({ M, N: 37, K: 512 }, { format, bias: true })));
  }
  it('embedding gather', () => expectCasePasses(gpu(), embeddingGatherCase({ numTokens: 9, vocab: 300, dim: 256 }, { format })));
  it('embedding gather in 3 parts, with a bad id', () =>
    expectCasePasses(gpu(), embeddingGatherCase({ numTokens: 9, vocab: 100, dim: 512 }, { format, parts: 3, badId: true })));
});
