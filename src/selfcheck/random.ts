// Seeded pseudo-random numbers (mulberry32) so every check and test sees the same inputs on every run.

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** n values uniform in [lo, hi), rounded to f32. */
export function randomUniform(n: number, seed: number, lo = -1, hi = 1): Float32Array {
  const next = mulberry32(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = lo + (hi - lo) * next();
  return out;
}

/** n integers uniform in [0, max). */
export function randomInts(n: number, seed: number, max: number): Uint32Array {
  const next = mulberry32(seed);
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) out[i] = Math.floor(next() * max);
  return out;
}
