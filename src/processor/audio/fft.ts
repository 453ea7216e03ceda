// A complex FFT of any length, in float64: mixed radix (the length's factors of 4, 2, 3 and 5 as
// butterflies, any other prime factor as a direct DFT of that size), decimation in time, twiddles
// computed once per length. The audio features need n_fft = 400 (Whisper's 25 ms window at 16 kHz:
// 4 * 4 * 5 * 5), which a power-of-two FFT cannot take without changing the result.

export class Fft {
  readonly n: number;
  private readonly factors: number[];
  private readonly cos: Float64Array;
  private readonly sin: Float64Array;
  private readonly scratchRe: Float64Array;
  private readonly scratchIm: Float64Array;

  constructor(n: number) {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`FFT length must be a positive integer, got ${n}`);
    this.n = n;
    this.factors = factorize(n);
    // exp(-2πik/n) for k < n: every twiddle of every stage is one of these.
    this.cos = new Float64Array(n);
    this.sin = new Float64Array(n);
    for (let k = 0; k < n; k++) {
      this.cos[k] = Math.cos((2 * Math.PI * k) / n);
      this.sin[k] = -Math.sin((2 * Math.PI * k) / n);
    }
    this.scratchRe = new Float64Array(n);
    this.scratchIm = new Float64Array(n);
  }

  /** X[k] = Σ x[j] e^(-2πijk/n), from (re, im) into (outRe, outIm); the inputs are left as they were. */
  transform(re: ArrayLike<number>, im: ArrayLike<number> | undefined, outRe: Float64Array, outIm: Float64Array): void {
    this.step(re, im, 0, 1, outRe, outIm, 0, this.n, 0);
  }

  // The DFT of the m = n / stride inputs x[offset + j * stride], into out[at .. at + m).
  private step(
    re: ArrayLike<number>,
    im: ArrayLike<number> | undefined,
    offset: number,
    stride: number,
    outRe: Float64Array,
    outIm: Float64Array,
    at: number,
    m: number,
    level: number,
  ): void {
    if (m === 1) {
      outRe[at] = re[offset];
      outIm[at] = im ? im[offset] : 0;
      return;
    }
    const p = this.factors[level];
    const q = m / p;
    // p sub-transforms of length q over the inputs offset + r * stride (r < p), step p * stride.
    for (let r = 0; r < p; r++) this.step(re, im, offset + r * stride, stride * p, outRe, outIm, at + r * q, q, level + 1);
    // Butterflies: X[k + s * q] = Σ_r W_m^(r (k + s q)) Y_r[k], with W_m = e^(-2πi/m) = the n-th roots at
    // step n / m (stride).
    const tr = this.scratchRe;
    const ti = this.scratchIm;
    for (let k = 0; k < q; k++) {
      for (let r = 0; r < p; r++) {
        const i = at + r * q + k;
        const w = (r * k * stride) % this.n;
        const c = this.cos[w];
        const s = this.sin[w];
        tr[r] = outRe[i] * c - outIm[i] * s;
        ti[r] = outRe[i] * s + outIm[i] * c;
      }
      for (let s = 0; s < p; s++) {
        let sr = 0;
        let si = 0;
        for (let r = 0; r < p; r++) {
          const w = (((r * s) % p) * q * stride) % this.n; // W_m^(r s q) = e^(-2πi r s / p)
          sr += tr[r] * this.cos[w] - ti[r] * this.sin[w];
          si += tr[r] * this.sin[w] + ti[r] * this.cos[w];
        }
        outRe[at + s * q + k] = sr;
        outIm[at + s * q + k] = si;
      }
    }
  }
}

/** The length's prime factors, fours first (fewer stages), then the rest in increasing order. */
function factorize(n: number): number[] {
  const out: number[] = [];
  let m = n;
  while (m % 4 === 0) {
    out.push(4);
    m /= 4;
  }
  for (let f = 2; m > 1; f++) {
    while (m % f === 0) {
      out.push(f);
      m /= f;
    }
    if (f * f > m && m > 1) {
      out.push(m);
      break;
    }
  }
  return out;
}

/**
 * The spectrum of a real signal of even length n, bins 0 .. n / 2, through one complex FFT of half the
 * length: z[j] = x[2j] + i·x[2j+1] is transformed, and each bin is rebuilt from Z[k] and conj(Z[n/2 − k]):
 *
 *   E[k] = (Z[k] + conj(Z[n/2 − k])) / 2        (the even samples' spectrum)
 *   O[k] = (Z[k] − conj(Z[n/2 − k])) / (2i)     (the odd samples')
 *   X[k] = E[k] + e^(−2πik/n) · O[k]
 */
export class RealFft {
  readonly n: number;
  private readonly half: Fft;
  private readonly zRe: Float64Array;
  private readonly zIm: Float64Array;
  private readonly outZRe: Float64Array;
  private readonly outZIm: Float64Array;
  private readonly cos: Float64Array;
  private readonly sin: Float64Array;

  constructor(n: number) {
    if (!Number.isInteger(n) || n < 2 || n % 2 !== 0) throw new RangeError(`a real FFT's length must be an even integer >= 2, got ${n}`);
    this.n = n;
    const m = n / 2;
    this.half = new Fft(m);
    this.zRe = new Float64Array(m);
    this.zIm = new Float64Array(m);
    this.outZRe = new Float64Array(m);
    this.outZIm = new Float64Array(m);
    this.cos = Float64Array.from({ length: m + 1 }, (_, k) => Math.cos((2 * Math.PI * k) / n));
    this.sin = Float64Array.from({ length: m + 1 }, (_, k) => -Math.sin((2 * Math.PI * k) / n));
  }

  /** Bins 0 .. n / 2 of X[k] = Σ x[j] e^(−2πijk/n) into outRe, outIm (length n / 2 + 1 at least). */
  transform(x: ArrayLike<number>, outRe: Float64Array, outIm: Float64Array): void {
    const m = this.n / 2;
    for (let j = 0; j < m; j++) {
      this.zRe[j] = x[2 * j];
      this.zIm[j] = x[2 * j + 1];
    }
    this.half.transform(this.zRe, this.zIm, this.outZRe, this.outZIm);
    const zr = this.outZRe;
    const zi = this.outZIm;
    for (let k = 0; k <= m; k++) {
      const a = k % m; // Z[k], with Z[m] = Z[0]
      const b = (m - k) % m; // Z[m − k]
      const eRe = (zr[a] + zr[b]) / 2;
      const eIm = (zi[a] - zi[b]) / 2;
      const oRe = (zi[a] + zi[b]) / 2;
      const oIm = -(zr[a] - zr[b]) / 2;
      outRe[k] = eRe + this.cos[k] * oRe - this.sin[k] * oIm;
      outIm[k] = eIm + this.cos[k] * oIm + this.sin[k] * oRe;
    }
  }
}
