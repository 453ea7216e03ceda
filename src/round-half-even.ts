// Rounding to the nearest integer with ties to even: Python's round(), WGSL's round(), IEEE's default.

export function roundHalfEven(v: number): number {
  const r = Math.round(v);
  return Math.abs(v % 1) === 0.5 && r % 2 !== 0 ? r - 1 : r;
}
