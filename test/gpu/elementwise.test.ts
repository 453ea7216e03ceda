import { describe, it } from 'vitest';
import { bilinearRowsCase, copyCase, geluTanhCase, residualAddCase, swigluCase } from '../../src/selfcheck/cases';
import { expectCasePasses, useGpu } from './gpu';

const gpu = useGpu();
const WORKGROUP_SIZES = [32, 64, 128, 256];

describe('gelu-tanh', () => {
  for (const wg of WORKGROUP_SIZES) {
    it(`WG=${wg} n=1000 with extremes`, () => expectCasePasses(gpu(), geluTanhCase(1000, { workgroupSize: wg })));
  }
  it('one element', () => expectCasePasses(gpu(), geluTanhCase(1)));
  it('ViT MLP shape 1024x3072', () => expectCasePasses(gpu(), geluTanhCase(1024 * 3072)));
});

describe('swiglu', () => {
  for (const wg of WORKGROUP_SIZES) {
    it(`WG=${wg} ragged`, () => expectCasePasses(gpu(), swigluCase({ rows: 3, dim: 101 }, { workgroupSize: wg })));
  }
  it('decode shape 1x1536', () => expectCasePasses(gpu(), swigluCase({ rows: 1, dim: 1536 })));
});

describe('residual-add', () => {
  for (const wg of WORKGROUP_SIZES) {
    it(`WG=${wg} n=999`, () => expectCasePasses(gpu(), residualAddCase(999, { workgroupSize: wg })));
  }
  it('ViT shape 1024x768', () => expectCasePasses(gpu(), residualAddCase(1024 * 768)));
});

describe('copy', () => {
  for (const wg of WORKGROUP_SIZES) {
    it(`WG=${wg} n=4100`, () => expectCasePasses(gpu(), copyCase(4100, { workgroupSize: wg })));
  }
  it('more vec4s than one grid dimension holds', () => expectCasePasses(gpu(), copyCase(4 * 64 * 70000)));
});

describe('bilinear-rows (Qwen3-VL learned positions)', () => {
  for (const wg of WORKGROUP_SIZES) {
    it(`WG=${wg} ragged dim`, () => expectCasePasses(gpu(), bilinearRowsCase({ rows: 37, dim: 33, tableRows: 64 }, { workgroupSize: wg })));
  }
  it('Qwen3-VL-2B widths: 1024 patches of 1024 from the 48 x 48 grid', () =>
    expectCasePasses(gpu(), bilinearRowsCase({ rows: 1024, dim: 1024, tableRows: 2304 })));
});
