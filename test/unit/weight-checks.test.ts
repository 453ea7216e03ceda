// NaN / ±Infinity in checkpoint values, found before upload: on f32 values, and on F16 bits uploaded as
// they are stored (each names the tensor, the first bad element, its value and how many there are).

import { describe, expect, it } from 'vitest';
import { NonFiniteWeightError } from '../../src/errors';
import { checkFiniteHalfWeights, checkFiniteWeights } from '../../src/model/weight-checks';

function thrown(f: () => void): NonFiniteWeightError | undefined {
  try {
    f();
  } catch (e) {
    if (e instanceof NonFiniteWeightError) return e;
    throw e;
  }
  return undefined;
}

describe('non-finite weights', () => {
  it('f32 values: finite passes, NaN and Infinity are counted from the first', () => {
    expect(thrown(() => checkFiniteWeights(Float32Array.of(0, -1.5, 3e38, 1e-45), 't', 'f'))).toBeUndefined();
    const e = thrown(() => checkFiniteWeights(Float32Array.of(1, 2, NaN, 4, -Infinity), 'w.q', 'model.safetensors'));
    expect(e).toMatchObject({ tensor: 'w.q', file: 'model.safetensors', index: 2, numNonFinite: 2 });
    expect(e!.value).toBeNaN();
  });

  it('F16 bits: the largest finite half (65504) and subnormals pass; +Inf, -Inf and NaN fail', () => {
    // 1.0 = 0x3c00, 65504 = 0x7bff, smallest subnormal = 0x0001, -0 = 0x8000
    expect(
      thrown(() => checkFiniteHalfWeights(new Uint8Array(Uint16Array.of(0x3c00, 0x7bff, 0x0001, 0x8000).buffer), 't', 'f')),
    ).toBeUndefined();
    const bytes = new Uint8Array(Uint16Array.of(0x3c00, 0xfc00, 0x3c00, 0x7e00, 0x7c00).buffer);
    const e = thrown(() => checkFiniteHalfWeights(bytes, 'embed', 'shard-2.safetensors'));
    expect(e).toMatchObject({ tensor: 'embed', file: 'shard-2.safetensors', index: 1, value: -Infinity, numNonFinite: 3 });
  });

  it('F16 bytes at an odd offset are read correctly', () => {
    const buf = new Uint8Array(7);
    buf.set(new Uint8Array(Uint16Array.of(0x3c00, 0x7e00, 0x3c00).buffer), 1);
    expect(thrown(() => checkFiniteHalfWeights(buf.subarray(1), 't', 'f'))).toMatchObject({ index: 1, numNonFinite: 1 });
  });
});
