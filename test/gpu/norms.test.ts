import { describe, it } from 'vitest';
import { layerNormCase, rmsNormCase } from '../../src/selfcheck/cases';
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
});

describe('rms-norm', () => {
  for (const wg of WORKGROUP_SIZES) {
    it(`WG=${wg} ragged dim`, () => expectCasePasses(gpu(), rmsNormCase({ rows: 5, dim: 77 }, { workgroupSize: wg })));
  }
  it('decode shape 1x576', () => expectCasePasses(gpu(), rmsNormCase({ rows: 1, dim: 576 })));
  it('prefill shape 300x576', () => expectCasePasses(gpu(), rmsNormCase({ rows: 300, dim: 576 })));
});
