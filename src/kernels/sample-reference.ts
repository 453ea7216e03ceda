// What sampling means, in plain TypeScript: temperature, top-k, top-p, then one draw per row from a hash of
// (seed, step). The GPU kernel (sample.ts, sample.wgsl) implements exactly this and is tested against it;
// the CPU backend (src/model/ort/) samples with it directly. No WGSL here, so it loads anywhere.

export interface SampleShape {
  rows: number;
  vocab: number;
}

export interface SamplingParams {
  /** > 0 samples; 0 keeps the row's greedy (argmax) id. */
  temperature: number;
  /** 0 (or >= vocab) disables top-k. */
  topK: number;
  /** 1 disables top-p. */
  topP: number;
  /** Any u32: the same seed and step give the same draw. */
  seed: number;
  /** Index of the token being drawn in its request's output (0 for the first), mixed into the draw. */
  step: number;
}

/** PCG hash, u32 -> u32 (the same integer arithmetic as sample.wgsl). */
function pcgHash(v: number): number {
  const s = (Math.imul(v >>> 0, 747796405) + 2891336453) >>> 0;
  const w = Math.imul(((s >>> ((s >>> 28) + 4)) ^ s) >>> 0, 277803737) >>> 0;
  return ((w >>> 22) ^ w) >>> 0;
}

/** The uniform in [0, 1) drawn for (seed, step); the row plays no part. */
function sampleUniform(seed: number, step: number): number {
  return (pcgHash(pcgHash((seed ^ pcgHash(step)) >>> 0)) >>> 8) / 16777216;
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

/** Order-preserving u32 key of an f32 value (sample.wgsl key_of). */
function sortKey(v: number): number {
  f32[0] = v;
  const b = u32[0];
  return (b & 0x80000000 ? ~b : b | 0x80000000) >>> 0;
}

/**
 * The kernel's semantics in plain TS. `greedy` is what argmax wrote for each row (rows with
 * temperature 0, or marked non-finite, keep it). Sums are float64 here, in the order written below; the
 * kernel sums exactly in 2^-40 fixed point (order-free), so the two differ only where a draw or a top-p
 * cut sits within rounding of an edge.
 */
export function sampleReference(
  logits: Float32Array,
  shape: SampleShape,
  params: readonly SamplingParams[],
  greedy: Uint32Array,
): Uint32Array {
  const { rows, vocab } = shape;
  const out = Uint32Array.from(greedy);
  for (let r = 0; r < rows; r++) {
    const p = params[r];
    if (!(p.temperature > 0) || greedy[r] === 0xffffffff) continue;
    // z rounded to f32 as on the GPU, so keys compare identically.
    const z = Float32Array.from(logits.subarray(r * vocab, (r + 1) * vocab), (v) => v * Math.fround(1 / p.temperature));
    const keys = Uint32Array.from(z, sortKey);
    let zMax = -Infinity;
    for (const v of z) zMax = Math.max(zMax, v);
    let threshold = 0;
    if (p.topK > 0 && p.topK < vocab) threshold = [...keys].sort((a, b) => b - a)[p.topK - 1];
    if (p.topP < 1) {
      const kept = [...keys.keys()].filter((i) => keys[i] >= threshold).sort((a, b) => keys[b] - keys[a]);
      const total = kept.reduce((a, i) => a + Math.exp(z[i] - zMax), 0);
      let mass = 0;
      for (const i of kept) {
        mass += Math.exp(z[i] - zMax);
        if (mass >= p.topP * total) {
          threshold = Math.max(threshold, keys[i]);
          break;
        }
      }
    }
    let total = 0;
    for (let i = 0; i < vocab; i++) if (keys[i] >= threshold) total += Math.exp(z[i] - zMax);
    const target = sampleUniform(p.seed, p.step) * total;
    let acc = 0;
    let pick = 0;
    for (let i = 0; i < vocab; i++) {
      // A kept entry of weight 0 (e.g. a masked token tied at a top-k threshold) is never drawn.
      const w = Math.exp(z[i] - zMax);
      if (keys[i] < threshold || w === 0) continue;
      pick = i;
      acc += w;
      if (acc > target) break;
    }
    out[r] = pick;
  }
  return out;
}
