// Values to ggml blocks (the layouts in gguf-blocks.ts), for the repository's GGUF writer: tiny test
// checkpoints and benchmark models. Scales come from each block's range (max |x| or min/max) rather than
// llama.cpp's error-minimising search; a block written here is a valid block of its type, and loads and
// dequantizes like any other.

import { InternalError } from '../../../errors';
import { floatToHalf, halfToFloat } from '../../../kernels/f16';
import { floatToBf16 } from '../../../kernels/weight-format';
import { roundHalfEven } from '../../../round-half-even';
import { quantizeKBlock } from '../../../kernels/k-quants';
import { type GgmlType, K_FORMAT_OF } from './gguf-format';

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
      const k = K_FORMAT_OF[type.name];
      if (k) quantizeKBlock(k, values, at, out, o);
      else quantizeSmallBlock(type.name, values, at, out, o);
    }
  }
  return out;
}
