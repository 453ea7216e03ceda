// IEEE half precision on the host: exact widening, and narrowing with round-to-nearest-even (what
// `pack2x16float` does on every adapter Tessera has met, and what torch's .half() does).

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

export function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac ? NaN : sign * Infinity;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

/** f32 -> f16 bits, round to nearest even; overflow gives inf, NaN stays NaN. */
export function floatToHalf(value: number): number {
  f32[0] = value;
  const x = u32[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  const mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  // Unbiased exponent; f16 normal range is -14..15.
  const e = exp - 127;
  if (e > 15) return sign | 0x7c00;
  if (e >= -14) {
    // 23 -> 10 mantissa bits, round half to even on the 13 dropped bits.
    let h = ((e + 15) << 10) | (mant >>> 13);
    const rest = mant & 0x1fff;
    if (rest > 0x1000 || (rest === 0x1000 && h & 1)) h++; // may carry into the exponent (correct, up to inf)
    return sign | h;
  }
  if (e < -25) return sign; // below half the smallest subnormal: rounds to zero
  // Subnormal: value = S * 2^(e - 23) with S = 1.mant as a 24-bit integer, and f16 subnormals count
  // units of 2^-24, so m = S * 2^(e + 1): shift right by -e - 1 (14 .. 24 bits), rounding half to even.
  const significand = mant | 0x800000;
  const shift = -e - 1;
  let h = significand >>> shift;
  const dropped = significand & ((1 << shift) - 1);
  const half = 1 << (shift - 1);
  if (dropped > half || (dropped === half && h & 1)) h++; // a carry into 0x400 is the smallest normal
  return sign | h;
}
