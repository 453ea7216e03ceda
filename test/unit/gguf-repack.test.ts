// Q8_0, Q4_0 and Q4_1 blocks repacked as Tessera's q8/q4 hold exactly the values the float64 GGUF
// reference dequantizes, including scales that are negative, subnormal or zero.

import { describe, expect, it } from 'vitest';
import { dequantizeReference } from '../../src/kernels/weight-format';
import { dequantizeGgml } from '../../src/model/weights/gguf/gguf-blocks';
import { type GgmlTypeName, ggmlType } from '../../src/model/weights/gguf/gguf-format';
import { quantizeGgml } from '../../src/model/weights/gguf/gguf-quantize';
import { exactFormatOf, ggufStorageFormat, repackBlocks } from '../../src/model/weights/gguf/gguf-repack';

function values(n: number, seed: number): Float32Array {
  let s = seed;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    // Rows of very different magnitudes: subnormal f16 scales (1e-4 / 127), ordinary ones, and an all-zero row.
    const row = Math.floor(i / 64);
    const scale = [1e-4, 0.3, 0, 40][row % 4];
    out[i] = ((s / 2 ** 32) * 2 - 1) * scale;
  }
  return out;
}

describe('GGUF blocks as q8/q4', () => {
  it.each(['Q8_0', 'Q4_0', 'Q4_1'] as GgmlTypeName[])('%s repacks without changing a value', (name) => {
    const type = ggmlType(name);
    const rows = 8;
    const K = 64;
    const bytes = quantizeGgml(type, values(rows * K, 11));
    const reference = dequantizeGgml(type, bytes, rows * K);
    const packed = repackBlocks(type, bytes, rows, K);
    const format = exactFormatOf(type)!;
    const got = dequantizeReference(
      format,
      { data: new Uint32Array(packed.data.buffer), scales: new Uint32Array(packed.scales.buffer) },
      rows,
      K,
    );
    let mismatches = 0;
    for (let i = 0; i < got.length; i++) if (got[i] !== reference[i]) mismatches++;
    expect(mismatches).toBe(0);
    expect(reference.some((v) => v !== 0 && Math.abs(v) < 1e-3)).toBe(true);
  });

  it('chooses one exact format for a fused weight, or f32 when its parts differ', () => {
    const t = (n: GgmlTypeName) => ggmlType(n);
    expect(ggufStorageFormat([t('F16'), t('F32')])).toBeUndefined();
    expect(ggufStorageFormat([t('Q8_0'), t('Q8_0')])).toBe('q8');
    expect(ggufStorageFormat([t('Q4_0'), t('Q4_1')])).toBe('q4');
    expect(ggufStorageFormat([t('Q4_0'), t('Q8_0')])).toBe('f32');
    expect(ggufStorageFormat([t('Q4_K')])).toBe('q4k');
    expect(ggufStorageFormat([t('Q4_K'), t('Q6_K')])).toBe('f32');
    expect(ggufStorageFormat([t('Q5_1')])).toBe('f32');
    expect(ggufStorageFormat([t('Q8_0'), t('F16')])).toBe('f32');
  });
});
