import { describe, it } from 'vitest';
import { argmaxCase, softmaxCase } from '../../src/selfcheck/cases';
import { expectCasePasses, useGpu } from './gpu';

const gpu = useGpu();
const WORKGROUP_SIZES = [32, 64, 128, 256];

describe('softmax', () => {
  for (const wg of WORKGROUP_SIZES) {
    it(`WG=${wg} ragged`, () => expectCasePasses(gpu(), softmaxCase({ rows: 3, cols: 257 }, { workgroupSize: wg })));
  }
  it('one column', () => expectCasePasses(gpu(), softmaxCase({ rows: 4, cols: 1 })));
  it('large logits (range 80)', () => expectCasePasses(gpu(), softmaxCase({ rows: 2, cols: 500 }, { range: 80 })));
  it('vocab row 1x49280', () => expectCasePasses(gpu(), softmaxCase({ rows: 1, cols: 49280 })));
});

describe('argmax', () => {
  for (const wg of WORKGROUP_SIZES) {
    it(`WG=${wg} ties go to the first index`, () => expectCasePasses(gpu(), argmaxCase({ rows: 4, cols: 1001 }, { workgroupSize: wg })));
  }
  it('decode shape 1x49280', () => expectCasePasses(gpu(), argmaxCase({ rows: 1, cols: 49280 })));
  it('cols smaller than the workgroup', () => expectCasePasses(gpu(), argmaxCase({ rows: 3, cols: 5 })));
});
