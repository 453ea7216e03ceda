import { describe, it } from 'vitest';
import { matmulCase, matmulRowsCase } from '../../src/selfcheck/cases';
import { expectCasePasses, useGpu } from './gpu';

const gpu = useGpu();

describe('matmul', () => {
  // Every plan at ragged shapes: dims not multiples of the tile, one row, one column.
  const ragged = [
    { M: 1, N: 1, K: 4 },
    { M: 1, N: 37, K: 20 },
    { M: 5, N: 9, K: 12 },
    { M: 17, N: 33, K: 64 },
    { M: 70, N: 65, K: 132 },
  ];
  for (const plan of ['register-wide', 'register-narrow', 'workgroup'] as const) {
    for (const shape of ragged) {
      it(`${plan} ${shape.M}x${shape.N}x${shape.K} +bias`, () => expectCasePasses(gpu(), matmulCase(shape, { plan, bias: true })));
    }
  }

  it('workgroup plan with K not a multiple of 4', () =>
    expectCasePasses(gpu(), matmulCase({ M: 19, N: 23, K: 45 }, { plan: 'workgroup', bias: true })));

  for (const wg of [16, 32, 64, 128, 256]) {
    it(`register-wide WG=${wg}`, () =>
      expectCasePasses(gpu(), matmulCase({ M: 48, N: 100, K: 96 }, { plan: 'register-wide', workgroupSize: wg })));
    it(`register-narrow WG=${wg}`, () =>
      expectCasePasses(gpu(), matmulCase({ M: 3, N: 100, K: 96 }, { plan: 'register-narrow', workgroupSize: wg })));
  }

  for (const activation of ['gelu_tanh', 'silu'] as const) {
    for (const plan of ['register-wide', 'register-narrow', 'workgroup'] as const) {
      it(`fused ${activation} ${plan}`, () =>
        expectCasePasses(gpu(), matmulCase({ M: 20, N: 40, K: 32 }, { plan, bias: true, activation })));
    }
  }

  // The residual epilogue (y += act(x·Wᵀ + b)) on every plan, ragged columns included, and packed weights.
  for (const plan of ['register-wide', 'register-narrow', 'workgroup', 'gemv'] as const) {
    it(`${plan} y += x·Wᵀ + b (residual epilogue), ragged`, () =>
      expectCasePasses(
        gpu(),
        matmulCase({ M: plan === 'gemv' || plan === 'register-narrow' ? 3 : 21, N: 37, K: 36 }, { plan, bias: true, accumulate: true }),
      ));
  }
  // A weight split in parts of rows (larger than one binding): each part writes its columns of y.
  for (const plan of ['register-wide', 'register-narrow', 'workgroup', 'gemv'] as const) {
    const M = plan === 'gemv' || plan === 'register-narrow' ? 3 : 21;
    it(`${plan} in 3 parts of rows, ragged`, () => expectCasePasses(gpu(), matmulCase({ M, N: 101, K: 36 }, { plan, parts: 3 })));
    it(`${plan} in 2 parts of rows, q4`, () => expectCasePasses(gpu(), matmulCase({ M, N: 70, K: 64 }, { plan, parts: 2, format: 'q4' })));
  }
  it('residual epilogue with q4 weights and GELU', () =>
    expectCasePasses(gpu(), matmulCase({ M: 18, N: 40, K: 64 }, { bias: true, accumulate: true, activation: 'gelu_tanh', format: 'q4' })));

  // Batched decode rows (main_narrow_rows: 2 or 4 rows share each load of W): against the reference, and
  // every row bit-identical to that row alone, for each row count up to the narrow limit, K with and
  // without a partial last group, in every weight format.
  for (const M of [2, 3, 4, 5, 6, 7, 8]) {
    it(`register-narrow ${M} rows x 41 x 100 +bias against the reference`, () =>
      expectCasePasses(gpu(), matmulCase({ M, N: 41, K: 100 }, { plan: 'register-narrow', bias: true })));
  }
  for (const format of ['f32', 'f16', 'bf16', 'q8', 'q4'] as const) {
    for (const [M, K] of [
      [2, 100],
      [3, 64],
      [4, 36],
      [8, 132],
    ] as const) {
      it(`register-narrow ${format} ${M} rows: each row = that row alone (K=${K})`, () =>
        expectCasePasses(gpu(), matmulRowsCase({ M, N: 37, K }, { format, bias: true, activation: M === 4 ? 'silu' : 'none' })));
    }
  }

  // SmolVLM shapes: a ViT projection (1024 patches) and a decode step of the text model.
  it('ViT shape 1024x768x768 (device plan)', () => expectCasePasses(gpu(), matmulCase({ M: 1024, N: 768, K: 768 }, { bias: true })));
  it('decode shape 1x1536x576 (device plan)', () => expectCasePasses(gpu(), matmulCase({ M: 1, N: 1536, K: 576 })));
  it('decode shape 1x576x1536 workgroup plan', () => expectCasePasses(gpu(), matmulCase({ M: 1, N: 576, K: 1536 }, { plan: 'workgroup' })));
});
