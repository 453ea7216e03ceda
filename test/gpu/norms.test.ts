import { describe, expect, it } from 'vitest';
import type { Tensor } from '../../src/gpu/tensor';
import { chooseLayerNormPlan } from '../../src/kernels/layer-norm';
import { layerNormCase, qkNormCase, rmsNormCase } from '../../src/selfcheck/cases';
import { expectCasePasses, useGpu } from './gpu';

const gpu = useGpu();
const WORKGROUP_SIZES = [32, 64, 128, 256];

describe('layer-norm', () => {
  for (const wg of WORKGROUP_SIZES) {
    it(`WG=${wg} ragged dim`, () => expectCasePasses(gpu(), layerNormCase({ rows: 5, dim: 77 }, { workgroupSize: wg })));
  }
  it('one row, dim smaller than the workgroup', () => expectCasePasses(gpu(), layerNormCase({ rows: 1, dim: 3 })));
  it('ViT shape 1024x768', () => expectCasePasses(gpu(), layerNormCase({ rows: 1024, dim: 768 })));
  it('rows offset by 50 (cancellation)', () => expectCasePasses(gpu(), layerNormCase({ rows: 16, dim: 768 }, { offset: 50 })));
  // One invocation per row (the register variant's plan for many rows), at both plans' shapes.
  for (const wg of WORKGROUP_SIZES) {
    it(`rows plan WG=${wg}, rows not a multiple of it`, () =>
      expectCasePasses(gpu(), layerNormCase({ rows: 77, dim: 36 }, { plan: 'rows', workgroupSize: wg })));
  }
  it('rows plan: one row of dim 4', () => expectCasePasses(gpu(), layerNormCase({ rows: 1, dim: 4 }, { plan: 'rows' })));
  it('rows plan: so400m width 729x1152', () => expectCasePasses(gpu(), layerNormCase({ rows: 729, dim: 1152 }, { plan: 'rows' })));
  it('rows plan: rows offset by 50 (cancellation)', () =>
    expectCasePasses(gpu(), layerNormCase({ rows: 16, dim: 768 }, { offset: 50, plan: 'rows' })));
  it('workgroup plan at the ViT shape 1024x768', () =>
    expectCasePasses(gpu(), layerNormCase({ rows: 1024, dim: 768 }, { plan: 'workgroup' })));
  it('register variant: many rows with dim % 4 == 0 take the rows plan, others the workgroup plan', () => {
    const t = (shape: number[], offsetBytes = 0) => ({ shape, offsetBytes }) as unknown as Tensor;
    const io = (rows: number, dim: number, offset = 0) => ({
      x: t([rows, dim], offset),
      weight: t([dim]),
      bias: t([dim]),
      y: t([rows, dim]),
    });
    expect(chooseLayerNormPlan(gpu(), io(1024, 768), { rows: 1024, dim: 768 }, { variant: 'register' })).toBe('rows');
    expect(chooseLayerNormPlan(gpu(), io(1024, 768), { rows: 1024, dim: 768 }, { variant: 'workgroup' })).toBe('workgroup');
    expect(chooseLayerNormPlan(gpu(), io(8, 768), { rows: 8, dim: 768 }, { variant: 'register' })).toBe('workgroup');
    expect(chooseLayerNormPlan(gpu(), io(1024, 77), { rows: 1024, dim: 77 }, { variant: 'register' })).toBe('workgroup');
    expect(chooseLayerNormPlan(gpu(), io(1024, 768, 4), { rows: 1024, dim: 768 }, { variant: 'register' })).toBe('workgroup');
    expect(() => chooseLayerNormPlan(gpu(), io(4, 77), { rows: 4, dim: 77 }, { plan: 'rows' })).toThrow(/dim % 4 == 0/);
  });
});

describe('rms-norm', () => {
  for (const wg of WORKGROUP_SIZES) {
    it(`WG=${wg} ragged dim`, () => expectCasePasses(gpu(), rmsNormCase({ rows: 5, dim: 77 }, { workgroupSize: wg })));
  }
  it('decode shape 1x576', () => expectCasePasses(gpu(), rmsNormCase({ rows: 1, dim: 576 })));
  it('prefill shape 300x576', () => expectCasePasses(gpu(), rmsNormCase({ rows: 300, dim: 576 })));
});

describe('qk-norm (Qwen3 q_norm / k_norm in the fused q|k|v rows)', () => {
  for (const wg of WORKGROUP_SIZES) {
    it(`WG=${wg}: head_dim 128, 16 q + 8 k heads, v heads untouched`, () =>
      expectCasePasses(
        gpu(),
        qkNormCase({ numTokens: 3, numHeads: 32, numQHeads: 16, numKHeads: 8, headDim: 128 }, { workgroupSize: wg }),
      ));
  }
  it('ragged head_dim 12, one k head', () =>
    expectCasePasses(gpu(), qkNormCase({ numTokens: 5, numHeads: 6, numQHeads: 4, numKHeads: 1, headDim: 12 })));
  it('a prefill of 300 tokens at Qwen3-VL-2B widths', () =>
    expectCasePasses(gpu(), qkNormCase({ numTokens: 300, numHeads: 32, numQHeads: 16, numKHeads: 8, headDim: 128 })));
});
