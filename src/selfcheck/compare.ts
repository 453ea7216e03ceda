// Elementwise closeness: pass when |got - want| <= atol + rtol * |want| everywhere (NaN only matches NaN,
// an infinity only itself). On failure, the report names the worst index, the max abs diff and the
// first mismatching pairs.

export interface Tolerance {
  atol: number;
  rtol: number;
}

/** House defaults for f32 (STYLE.md). Looser tolerances say why where they are used. */
export const F32_TOLERANCE: Tolerance = { atol: 1e-5, rtol: 1e-4 };
export const EXACT: Tolerance = { atol: 0, rtol: 0 };

export interface Comparison {
  pass: boolean;
  numElements: number;
  numMismatched: number;
  /** Largest |got - want| over finite pairs. */
  maxAbsErr: number;
  /** Index of the worst pair: the largest excess over the tolerance (or the max abs diff if all pass). */
  worstIndex: number;
  firstMismatches: Array<{ index: number; got: number; want: number }>;
}

function matches(g: number, w: number, tol: Tolerance): boolean {
  if (Number.isNaN(w)) return Number.isNaN(g);
  if (!Number.isFinite(w)) return g === w;
  if (!Number.isFinite(g)) return false;
  return Math.abs(g - w) <= tol.atol + tol.rtol * Math.abs(w);
}

export function compareClose(got: ArrayLike<number>, want: ArrayLike<number>, tol: Tolerance): Comparison {
  const n = want.length;
  const result: Comparison = {
    pass: got.length === n,
    numElements: n,
    numMismatched: got.length === n ? 0 : Math.abs(got.length - n),
    maxAbsErr: 0,
    worstIndex: -1,
    firstMismatches: [],
  };
  let worstScore = -Infinity;
  for (let i = 0; i < Math.min(n, got.length); i++) {
    const g = got[i];
    const w = want[i];
    const diff = Math.abs(g - w);
    if (Number.isFinite(diff)) result.maxAbsErr = Math.max(result.maxAbsErr, diff);
    const ok = matches(g, w, tol);
    const score = ok ? diff - (tol.atol + tol.rtol * Math.abs(w)) : Number.isFinite(diff) ? diff + 1e30 : Infinity;
    if (score > worstScore) {
      worstScore = score;
      result.worstIndex = i;
    }
    if (!ok) {
      result.pass = false;
      result.numMismatched++;
      if (result.firstMismatches.length < 5) result.firstMismatches.push({ index: i, got: g, want: w });
    }
  }
  return result;
}

export function describeComparison(label: string, c: Comparison, tol: Tolerance): string {
  const rule = `|got - ref| <= ${tol.atol} + ${tol.rtol}*|ref|`;
  if (c.pass) return `${label}: ok, ${c.numElements} values within ${rule}, max abs err ${c.maxAbsErr.toExponential(2)}`;
  const pairs = c.firstMismatches.map((m) => `[${m.index}] got ${m.got} want ${m.want}`).join('; ');
  return (
    `${label}: ${c.numMismatched} of ${c.numElements} values outside ${rule}; ` +
    `worst index ${c.worstIndex}, max abs err ${c.maxAbsErr.toExponential(3)}; first pairs: ${pairs}`
  );
}
