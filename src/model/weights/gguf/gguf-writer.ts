// Writes GGUF files (format: gguf-format.ts): the repository's own writer, for tiny test checkpoints and
// benchmark models. Tensors are encoded one at a time as the output is consumed, so writing a large
// model holds one tensor at a time.

import { InternalError } from '../../../errors';
import {
  GGUF_DEFAULT_ALIGNMENT,
  GGUF_MAGIC,
  GGUF_VALUE,
  type GgmlType,
  type GgufEntry,
  type GgufScalarType,
  ggufTensorBytes,
} from './gguf-format';
import { quantizeGgml } from './gguf-quantize';

export interface GgufTensorToWrite {
  name: string;
  /** Row-major shape as Hugging Face writes it; the file stores it reversed (ne[0] innermost). */
  shape: readonly number[];
  type: GgmlType;
  /** The values, made when the writer reaches this tensor. */
  values: () => Float32Array;
}

const utf8 = new TextEncoder();

/** Growable little-endian byte buffer for the header. */
class HeaderBytes {
  private bytes = new Uint8Array(1024);
  length = 0;

  /** Room for n more bytes; the view to write them through (the buffer may have been replaced) and where. */
  private put(n: number): [DataView, number] {
    if (this.length + n > this.bytes.length) {
      const grown = new Uint8Array(Math.max(this.bytes.length * 2, this.length + n));
      grown.set(this.bytes);
      this.bytes = grown;
    }
    const at = this.length;
    this.length += n;
    return [new DataView(this.bytes.buffer), at];
  }
  u32(v: number) {
    const [dv, at] = this.put(4);
    dv.setUint32(at, v, true);
  }
  u64(v: number | bigint) {
    const [dv, at] = this.put(8);
    dv.setBigUint64(at, BigInt(v), true);
  }
  string(s: string) {
    const b = utf8.encode(s);
    this.u64(b.length);
    const [, at] = this.put(b.length);
    this.bytes.set(b, at);
  }
  scalar(type: GgufScalarType, v: string | number | bigint | boolean) {
    if (type === 'string') return this.string(String(v));
    const size = { u8: 1, i8: 1, bool: 1, u16: 2, i16: 2, u32: 4, i32: 4, f32: 4, u64: 8, i64: 8, f64: 8 }[type];
    const [dv, at] = this.put(size);
    switch (type) {
      case 'u8':
        return dv.setUint8(at, Number(v));
      case 'i8':
        return dv.setInt8(at, Number(v));
      case 'bool':
        return dv.setUint8(at, v ? 1 : 0);
      case 'u16':
        return dv.setUint16(at, Number(v), true);
      case 'i16':
        return dv.setInt16(at, Number(v), true);
      case 'u32':
        return dv.setUint32(at, Number(v), true);
      case 'i32':
        return dv.setInt32(at, Number(v), true);
      case 'f32':
        return dv.setFloat32(at, Number(v), true);
      case 'u64':
        return dv.setBigUint64(at, BigInt(v), true);
      case 'i64':
        return dv.setBigInt64(at, BigInt(v), true);
      case 'f64':
        return dv.setFloat64(at, Number(v), true);
    }
  }
  pad(alignment: number) {
    this.put((alignment - (this.length % alignment)) % alignment);
  }
  done(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }
}

/** The file's bytes, header first, then each tensor (encoded when reached) and its padding. */
export function* ggufChunks(
  entries: readonly GgufEntry[],
  tensors: readonly GgufTensorToWrite[],
  alignment = GGUF_DEFAULT_ALIGNMENT,
): Generator<Uint8Array> {
  const h = new HeaderBytes();
  h.u32(GGUF_MAGIC);
  h.u32(3);
  h.u64(tensors.length);
  const all: GgufEntry[] =
    alignment === GGUF_DEFAULT_ALIGNMENT || entries.some((e) => e.key === 'general.alignment')
      ? [...entries]
      : [...entries, { key: 'general.alignment', type: 'u32', value: alignment }];
  h.u64(all.length);
  for (const e of all) {
    h.string(e.key);
    h.u32(GGUF_VALUE[e.type]);
    if (e.type === 'array') {
      h.u32(GGUF_VALUE[e.itemType]);
      h.u64(e.value.length);
      for (const v of e.value) h.scalar(e.itemType, v);
    } else {
      h.scalar(e.type, e.value);
    }
  }
  let offset = 0;
  const sizes: number[] = [];
  for (const t of tensors) {
    const ne = [...t.shape].reverse();
    const size = ggufTensorBytes(t.type, ne);
    if (size === undefined) throw new InternalError(`ggufChunks: '${t.name}' [${t.shape.join(', ')}] is not whole ${t.type.name} blocks`);
    h.string(t.name);
    h.u32(ne.length);
    for (const d of ne) h.u64(d);
    h.u32(t.type.code);
    h.u64(offset);
    sizes.push(size);
    offset += Math.ceil(size / alignment) * alignment;
  }
  h.pad(alignment);
  yield h.done();
  for (const [i, t] of tensors.entries()) {
    const values = t.values();
    const expected = t.shape.reduce((a, b) => a * b, 1);
    if (values.length !== expected) throw new InternalError(`ggufChunks: '${t.name}' has ${values.length} values, its shape ${expected}`);
    yield quantizeGgml(t.type, values);
    const padding = Math.ceil(sizes[i] / alignment) * alignment - sizes[i];
    if (padding > 0 && i < tensors.length - 1) yield new Uint8Array(padding);
  }
}

/** A whole GGUF file in memory (tests and tiny checkpoints). */
export function writeGguf(entries: readonly GgufEntry[], tensors: readonly GgufTensorToWrite[], alignment?: number): Uint8Array {
  const chunks = [...ggufChunks(entries, tensors, alignment)];
  const out = new Uint8Array(chunks.reduce((a, c) => a + c.length, 0));
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}
