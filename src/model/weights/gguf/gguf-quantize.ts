// Values to ggml blocks (the layouts in gguf-blocks.ts), for the repository's GGUF writer: tiny test
// checkpoints and benchmark models. Scales come from each block's range (max |x| or min/max) rather than
// llama.cpp's error-minimising search; a block written here is a valid block of its type, and loads and
// dequantizes like any other.

import { InternalError } from '../../../errors';
import { floatToHalf, halfToFloat } from '../../../kernels/f16';
import { floatToBf16 } from '../../../kernels/weight-format';
import { roundHalfEven } from '../../../round-half-even';
import type { GgmlType } from './gguf-format';

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
/** round(x / d), 0 when d is 0. */
const steps = (x: number, d: number) => (d === 0 ? 0 : roundHalfEven(x / d));

function putHalf(out: Uint8Array, at: number, v: number): number {
  const h = floatToHalf(v);
  out[at] = h & 255;
  out[at + 1] = h >> 8;
  return halfToFloat(h);
}

/** The value of largest magnitude, with its sign. */
function signedMax(x: Float32Array, at: number, n: number): number {
  let best = 0;
  for (let j = 0; j < n; j++) if (Math.abs(x[at + j]) > Math.abs(best)) best = x[at + j];
  return best;
}

function range(x: Float32Array, at: number, n: number): [number, number] {
  let lo = x[at];
  let hi = x[at];
  for (let j = 1; j < n; j++) {
    lo = Math.min(lo, x[at + j]);
    hi = Math.max(hi, x[at + j]);
  }
  return [lo, hi];
}

/** 32 values as Q8_0 / Q4_0 / Q4_1 / Q5_0 / Q5_1 at out[o]. */
function quantizeSmallBlock(name: string, x: Float32Array, at: number, out: Uint8Array, o: number): void {
  if (name === 'Q8_0') {
    let amax = 0;
    for (let j = 0; j < 32; j++) amax = Math.max(amax, Math.abs(x[at + j]));
    const d = putHalf(out, o, amax / 127);
    for (let j = 0; j < 32; j++) out[o + 2 + j] = clamp(steps(x[at + j], d), -127, 127) & 255;
    return;
  }
  const bits = name.startsWith('Q5') ? 5 : 4;
  const levels = (1 << bits) - 1;
  const withMin = name.endsWith('_1');
  let d: number;
  let m: number;
  if (withMin) {
    const [lo, hi] = range(x, at, 32);
    d = putHalf(out, o, (hi - lo) / levels);
    m = putHalf(out, o + 2, lo);
  } else {
    d = putHalf(out, o, signedMax(x, at, 32) / -(1 << (bits - 1)));
    m = -(1 << (bits - 1)) * d;
  }
  const q = (j: number) => clamp(steps(x[at + j] - m, d), 0, levels);
  const qs = o + (withMin ? 4 : 2) + (bits === 5 ? 4 : 0);
  let qh = 0;
  for (let j = 0; j < 16; j++) {
    const a = q(j);
    const b = q(j + 16);
    out[qs + j] = (a & 15) | ((b & 15) << 4);
    qh |= ((a >> 4) << j) | ((b >> 4) << (j + 16));
  }
  if (bits === 5) new DataView(out.buffer, out.byteOffset).setUint32(qs - 4, qh >>> 0, true);
}

/** 256 values as Q4_K / Q5_K (8 sub-blocks of 32, 6-bit scales and minimums) at out[o]. */
function quantizeKBlock(name: string, x: Float32Array, at: number, out: Uint8Array, o: number): void {
  const five = name === 'Q5_K';
  const levels = five ? 31 : 15;
  const scale: number[] = [];
  const negMin: number[] = [];
  for (let s = 0; s < 8; s++) {
    const [lo, hi] = range(x, at + 32 * s, 32);
    const low = Math.min(lo, 0);
    scale.push((hi - low) / levels);
    negMin.push(-low);
  }
  const d = putHalf(out, o, Math.max(...scale) / 63);
  const dmin = putHalf(out, o + 2, Math.max(...negMin) / 63);
  const sc = scale.map((v) => clamp(steps(v, d), 0, 63));
  const mn = negMin.map((v) => clamp(steps(v, dmin), 0, 63));
  for (let j = 0; j < 4; j++) {
    out[o + 4 + j] = sc[j] | ((sc[j + 4] >> 4) << 6);
    out[o + 8 + j] = mn[j] | ((mn[j + 4] >> 4) << 6);
    out[o + 12 + j] = (sc[j + 4] & 15) | ((mn[j + 4] & 15) << 4);
  }
  const qs = o + (five ? 48 : 16);
  for (let c = 0; c < 4; c++) {
    for (let l = 0; l < 32; l++) {
      const q = [0, 1].map((hi) => {
        const s = 2 * c + hi;
        return clamp(steps(x[at + 64 * c + 32 * hi + l] + dmin * mn[s], d * sc[s]), 0, levels);
      });
      out[qs + 32 * c + l] = (q[0] & 15) | ((q[1] & 15) << 4);
      if (five) out[o + 16 + l] |= ((q[0] >> 4) << (2 * c)) | ((q[1] >> 4) << (2 * c + 1));
    }
  }
}

/** 256 values as Q6_K (16 sub-blocks of 16, int8 scales) at out[o]. */
function quantizeQ6KBlock(x: Float32Array, at: number, out: Uint8Array, o: number): void {
  const scale: number[] = [];
  for (let s = 0; s < 16; s++) scale.push(signedMax(x, at + 16 * s, 16) / -32);
  const d = putHalf(out, o + 208, Math.max(...scale.map(Math.abs)) / 127);
  const sc = scale.map((v) => clamp(steps(v, d), -128, 127));
  for (let s = 0; s < 16; s++) out[o + 192 + s] = sc[s] & 255;
  for (let h = 0; h < 2; h++) {
    for (let i = 0; i < 4; i++) {
      for (let l = 0; l < 32; l++) {
        const v = 128 * h + 32 * i + l;
        const q = clamp(steps(x[at + v], d * sc[8 * h + ((v % 128) >> 4)]) + 32, 0, 63);
        out[o + 64 * h + l + 32 * (i & 1)] |= i < 2 ? q & 15 : (q & 15) << 4;
        out[o + 128 + 32 * h + l] |= (q >> 4) << (2 * i);
      }
    }
  }
}

/** `values` (a whole number of blocks along ne[0]) stored as `type`. */
export function quantizeGgml(type: GgmlType, values: Float32Array): Uint8Array {
  const n = values.length;
  if (n % type.blockValues !== 0) throw new InternalError(`quantizeGgml: ${n} values are not whole ${type.name} blocks`);
  const out = new Uint8Array((n / type.blockValues) * type.blockBytes);
  const dv = new DataView(out.buffer);
  if (type.name === 'F32') for (let i = 0; i < n; i++) dv.setFloat32(4 * i, values[i], true);
  else if (type.name === 'F16') for (let i = 0; i < n; i++) dv.setUint16(2 * i, floatToHalf(values[i]), true);
  else if (type.name === 'BF16') for (let i = 0; i < n; i++) dv.setUint16(2 * i, floatToBf16(values[i]), true);
  else {
    for (let b = 0; b < n / type.blockValues; b++) {
      const at = b * type.blockValues;
      const o = b * type.blockBytes;
      if (type.name === 'Q6_K') quantizeQ6KBlock(values, at, out, o);
      else if (type.name === 'Q4_K' || type.name === 'Q5_K') quantizeKBlock(type.name, values, at, out, o);
      else quantizeSmallBlock(type.name, values, at, out, o);
    }
  }
  return out;
}
