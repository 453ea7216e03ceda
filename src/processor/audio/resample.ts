// Band-limited resampling of mono PCM between integer rates, streamed: a windowed-sinc low-pass (Kaiser
// window) evaluated as a polyphase table, so a long recording passes through in blocks and never sits in
// memory whole. Output sample k is the input's band-limited value at time k / toRate:
//
//   y[k] = Σ_n x[n] · s · sinc(s · (k·from/to − n)) · kaiser((k·from/to − n) / halfWidth)
//
// with s = rolloff · min(1, to / from) (the cut-off as a fraction of the input rate's Nyquist, below the
// output's when downsampling, so nothing aliases), halfWidth = ZERO_CROSSINGS / s input samples, and the
// input taken as zero before its first sample and after its last. Rates are reduced by their gcd: the
// table holds one row of taps per output phase (to / gcd rows). Equal rates pass the samples through
// untouched (as librosa and soxr do): no filter, so a chunk's samples do not depend on its neighbours'.

const ZERO_CROSSINGS = 32;
const ROLLOFF = 0.945;
const KAISER_BETA = 9;

/** Modified Bessel function of the first kind, order 0 (its power series; converges fast for β ≤ 20). */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  for (let k = 1; k < 64; k++) {
    term *= (x / (2 * k)) ** 2;
    sum += term;
    if (term < sum * 1e-17) break;
  }
  return sum;
}

function gcd(a: number, b: number): number {
  return b === 0 ? a : gcd(b, a % b);
}

export class StreamingResampler {
  /** Input samples per output step, as the reduced fraction up / down. */
  private readonly up: number;
  private readonly down: number;
  private readonly halfTaps: number;
  /** [up phases][2 * halfTaps] taps: row p weighs the inputs around position (k·down + p) / up. */
  private readonly table: Float64Array;
  /** Inputs kept from earlier blocks (the newest 2 * halfTaps + block), their first one's global index. */
  private buffer = new Float32Array(0);
  private bufferStart = 0;
  private received = 0;
  /** The next output sample's index. */
  private next = 0;

  constructor(
    readonly fromRate: number,
    readonly toRate: number,
  ) {
    for (const [name, r] of [
      ['fromRate', fromRate],
      ['toRate', toRate],
    ] as const) {
      if (!Number.isInteger(r) || r <= 0) throw new RangeError(`${name} must be a positive integer in Hz, got ${r}`);
    }
    const g = gcd(fromRate, toRate);
    this.up = toRate / g;
    this.down = fromRate / g;
    const s = ROLLOFF * Math.min(1, toRate / fromRate);
    const halfWidth = ZERO_CROSSINGS / s;
    this.halfTaps = Math.ceil(halfWidth);
    const taps = 2 * this.halfTaps;
    this.table = new Float64Array(this.up * taps);
    const norm = besselI0(KAISER_BETA);
    for (let p = 0; p < this.up; p++) {
      // Output phase p sits p / up of an input sample past input n0; tap j weighs input n0 − halfTaps + 1 + j.
      const frac = p / this.up;
      for (let j = 0; j < taps; j++) {
        const d = frac - (j - this.halfTaps + 1); // distance from that input to the output position
        const r = d / halfWidth;
        if (Math.abs(r) >= 1) continue;
        const sinc = d === 0 ? 1 : Math.sin(Math.PI * s * d) / (Math.PI * s * d);
        this.table[p * taps + j] = s * sinc * (besselI0(KAISER_BETA * Math.sqrt(1 - r * r)) / norm);
      }
    }
  }

  /** Outputs for `block` (the next input samples), as far as the inputs seen so far determine them. */
  push(block: Float32Array): Float32Array {
    if (this.fromRate === this.toRate) return block.slice();
    const kept = this.buffer;
    const merged = new Float32Array(kept.length + block.length);
    merged.set(kept);
    merged.set(block, kept.length);
    this.buffer = merged;
    this.received += block.length;
    return this.emit(false);
  }

  /** The remaining outputs, the input taken as zero past its end: ceil(inputs · to / from) in all. */
  flush(): Float32Array {
    if (this.fromRate === this.toRate) return new Float32Array(0);
    return this.emit(true);
  }

  private emit(final: boolean): Float32Array {
    const taps = 2 * this.halfTaps;
    // Output k is at input position k·down/up = n0 + p/up; it needs inputs up to n0 + halfTaps.
    const total = final ? Math.ceil((this.received * this.up) / this.down) : Number.POSITIVE_INFINITY;
    const out: number[] = [];
    for (;;) {
      const k = this.next;
      if (k >= total) break;
      const pos = k * this.down;
      const n0 = Math.floor(pos / this.up);
      const p = pos - n0 * this.up;
      if (!final && n0 + this.halfTaps >= this.received) break;
      const first = n0 - this.halfTaps + 1;
      let sum = 0;
      const row = p * taps;
      for (let j = 0; j < taps; j++) {
        const i = first + j - this.bufferStart;
        if (i >= 0 && i < this.buffer.length) sum += this.table[row + j] * this.buffer[i];
      }
      out.push(sum);
      this.next++;
    }
    // Keep only what later outputs can still reach.
    const nextN0 = Math.floor((this.next * this.down) / this.up);
    const keepFrom = Math.max(this.bufferStart, nextN0 - this.halfTaps + 1);
    if (keepFrom > this.bufferStart) {
      this.buffer = this.buffer.slice(Math.min(keepFrom - this.bufferStart, this.buffer.length));
      this.bufferStart = keepFrom;
    }
    return Float32Array.from(out);
  }
}

/** The whole of `pcm` at `toRate` (a convenience over the streaming resampler). */
export function resample(pcm: Float32Array, fromRate: number, toRate: number): Float32Array {
  if (fromRate === toRate) return pcm.slice();
  const r = new StreamingResampler(fromRate, toRate);
  const a = r.push(pcm);
  const b = r.flush();
  const out = new Float32Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}
