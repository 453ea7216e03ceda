// The quantization group lives in two languages: QUANT_GROUP in src/kernels/weight-format.ts (the host
// packing and its reference), and the packed formats' WGSL (lib/weights-q4.wgsl, lib/weights-q8.wgsl:
// W_GROUP_VEC4 vec4s of K per group, and the `32u` of their indexing). weight-format.ts imports no shader
// text (scripts run it without Vite's `?raw`), so this test holds the two together.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { wgslConstant } from '../../src/kernels/checks';
import { QUANT_GROUP } from '../../src/kernels/weight-format';

const shader = (name: string) => readFileSync(resolve(import.meta.dirname, '../../shaders', name), 'utf8');

describe('the quantization group', () => {
  for (const lib of ['lib/weights-q4.wgsl', 'lib/weights-q8.wgsl']) {
    it(`${lib} reads groups of QUANT_GROUP = ${QUANT_GROUP} weights`, () => {
      const source = shader(lib);
      expect(wgslConstant(source, 'W_GROUP_VEC4') * 4).toBe(QUANT_GROUP);
      // Its rows hold ceil(K / QUANT_GROUP) groups.
      expect(source).toContain(`(K + ${QUANT_GROUP - 1}u) / ${QUANT_GROUP}u`);
    });
  }
  it(`quantize.wgsl packs groups of ${QUANT_GROUP}`, () => {
    const source = shader('quantize.wgsl');
    expect(source).toContain(`(p.K + ${QUANT_GROUP - 1}u) / ${QUANT_GROUP}u`);
    expect(source).toContain(`min(${QUANT_GROUP}u, p.K - g * ${QUANT_GROUP}u)`);
  });
});
