// Writes safetensors files (used by `npm run make:tiny` and tests). Tensors are laid out in the order
// given, each aligned to 8 bytes as the reference implementation does.

export interface TensorToWrite {
  name: string;
  dtype: 'F32' | 'F16' | 'BF16';
  shape: number[];
  /** Values as f32; narrowed to dtype on write (round to nearest even). */
  data: Float32Array;
}

const scratchF32 = new Float32Array(1);
const scratchU32 = new Uint32Array(scratchF32.buffer);

/** f32 bits -> bf16 bits, round to nearest even (NaN stays NaN). */
function bitsToBf16(u: number): number {
  if ((u & 0x7f800000) === 0x7f800000 && u & 0x7fffff) return 0x7fc0;
  return ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
}

function floatToHalf(v: number): number {
  scratchF32[0] = v;
  const u = scratchU32[0];
  const sign = (u >> 16) & 0x8000;
  const exp = ((u >> 23) & 0xff) - 127 + 15;
  let mant = u & 0x7fffff;
  if (((u >> 23) & 0xff) === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  if (exp >= 31) return sign | 0x7c00;
  if (exp <= 0) {
    if (exp < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - exp;
    const half = 1 << (shift - 1);
    let r = mant >> shift;
    const rem = mant & ((1 << shift) - 1);
    if (rem > half || (rem === half && r & 1)) r++;
    return sign | r;
  }
  let r = (exp << 10) | (mant >> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && r & 1)) r++;
  return sign | r;
}

/** A tensor's bytes as a safetensors file stores them. */
export function encodeTensor(t: TensorToWrite): Uint8Array {
  if (t.dtype === 'F32') return new Uint8Array(t.data.buffer.slice(t.data.byteOffset, t.data.byteOffset + t.data.byteLength));
  const out = new Uint16Array(t.data.length);
  if (t.dtype === 'BF16') {
    const bits = new Uint32Array(t.data.buffer, t.data.byteOffset, t.data.length);
    for (let i = 0; i < bits.length; i++) out[i] = bitsToBf16(bits[i]);
  } else {
    for (let i = 0; i < t.data.length; i++) out[i] = floatToHalf(t.data[i]);
  }
  return new Uint8Array(out.buffer);
}

export function writeSafetensors(tensors: readonly TensorToWrite[], metadata: Record<string, string> = {}): Uint8Array {
  const blobs = tensors.map(encodeTensor);
  const header: Record<string, unknown> = { __metadata__: metadata };
  let offset = 0;
  tensors.forEach((t, i) => {
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + blobs[i].byteLength] };
    offset += blobs[i].byteLength;
  });
  let json = new TextEncoder().encode(JSON.stringify(header));
  const padded = Math.ceil(json.byteLength / 8) * 8;
  if (padded !== json.byteLength) json = new TextEncoder().encode(JSON.stringify(header) + ' '.repeat(padded - json.byteLength));
  const out = new Uint8Array(8 + json.byteLength + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.byteLength), true);
  out.set(json, 8);
  let o = 8 + json.byteLength;
  for (const b of blobs) {
    out.set(b, o);
    o += b.byteLength;
  }
  return out;
}
