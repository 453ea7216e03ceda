// One tensor in PyTorch's own file format, as `torch.save(tensor, f)` writes it and `torch.load(f,
// weights_only=True)` reads it: a ZIP archive (entries stored, not compressed) holding `data.pkl` (a pickle
// that rebuilds the tensor with torch._utils._rebuild_tensor_v2 from a persistent storage id), `data/0`
// (the storage's bytes, little-endian), `byteorder` and `version`. This is how vLLM's OpenAI server takes
// precomputed embeddings (an `image_embeds` content part: base64 of these bytes), so Tessera writes it for
// the remote engine and reads it in tessera serve. Reading accepts only that pickle: the handful of
// opcodes and the three globals torch's weights_only loader allows for a tensor; anything else is refused.

import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
import { floatToHalf, halfToFloat } from '../kernels/f16';

/** The dtypes embeddings go on the wire in. */
export type TorchFloatDtype = 'float32' | 'float16' | 'bfloat16';
export type TorchDtype = TorchFloatDtype | 'int64';

export interface TorchTensor {
  /**
   * Row-major values as f32 (f16 and bf16 storages are widened; int64 values, such as a Qwen-VL image's
   * image_grid_thw, are read only when exact in f32: within ±2^24).
   */
  data: Float32Array;
  shape: number[];
  /** The storage's dtype in the file. */
  dtype: TorchDtype;
}

/** The bytes are not one tensor in PyTorch's format (or use a part of it this reader does not take). */
export class TorchFormatError extends Error {
  override readonly name = 'TorchFormatError';
}

const STORAGE_CLASS: Record<TorchDtype, string> = {
  float32: 'FloatStorage',
  float16: 'HalfStorage',
  bfloat16: 'BFloat16Storage',
  int64: 'LongStorage',
};
const ELEMENT_BYTES: Record<TorchDtype, number> = { float32: 4, float16: 2, bfloat16: 2, int64: 8 };
/** The largest integer an f32 holds exactly. */
const EXACT_IN_F32 = 2 ** 24;
const ARCHIVE = 'archive';

// ---- writing ----

class PickleWriter {
  private readonly bytes: number[] = [];
  private memo = 0;

  op(code: number): this {
    this.bytes.push(code);
    return this;
  }
  global(module: string, name: string): this {
    this.op(0x63); // GLOBAL
    for (const c of `${module}\n${name}\n`) this.bytes.push(c.charCodeAt(0));
    return this.put();
  }
  str(s: string): this {
    const utf8 = strToU8(s);
    this.bytes.push(0x58, ...le32(utf8.length)); // BINUNICODE (protocol 2 has no shorter form)
    this.bytes.push(...utf8);
    return this.put();
  }
  int(n: number): this {
    if (!Number.isInteger(n) || n < 0) throw new TorchFormatError(`cannot pickle ${n}: only non-negative integers are written`);
    if (n < 256)
      this.bytes.push(0x4b, n); // BININT1
    else if (n < 65536)
      this.bytes.push(0x4d, n & 0xff, n >> 8); // BININT2
    else if (n < 2 ** 31)
      this.bytes.push(0x4a, ...le32(n)); // BININT
    else throw new TorchFormatError(`cannot pickle ${n}: larger than 2^31 - 1`);
    return this;
  }
  tuple(write: () => void): this {
    this.op(0x28); // MARK
    write();
    this.op(0x74); // TUPLE
    return this.put();
  }
  /** BINPUT: memoize the top of the stack, as Python's pickler does after each object. */
  private put(): this {
    const i = this.memo++;
    if (i < 256) this.bytes.push(0x71, i);
    else this.bytes.push(0x72, ...le32(i));
    return this;
  }
  reduced(): this {
    this.op(0x52); // REDUCE
    return this.put();
  }
  done(): Uint8Array {
    this.op(0x2e); // STOP
    return Uint8Array.from(this.bytes);
  }
}

function le32(n: number): number[] {
  return [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff];
}

function contiguousStrides(shape: readonly number[]): number[] {
  const strides = new Array<number>(shape.length);
  let s = 1;
  for (let i = shape.length - 1; i >= 0; i--) {
    strides[i] = s;
    s *= shape[i];
  }
  return strides;
}

/** The storage bytes of `data` in `dtype` (f32 values rounded to f16 or bf16 when asked; int64 takes integers). */
function storageBytes(data: Float32Array, dtype: TorchDtype): Uint8Array {
  if (dtype === 'float32') return new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
  if (dtype === 'int64') {
    const out = new BigInt64Array(data.length);
    for (let i = 0; i < data.length; i++) {
      if (!Number.isInteger(data[i]))
        throw new TorchFormatError(`value ${i} (${data[i]}) is not an integer; an int64 tensor holds integers`);
      out[i] = BigInt(data[i]);
    }
    return new Uint8Array(out.buffer);
  }
  const out = new Uint16Array(data.length);
  const f32 = new Float32Array(1);
  const u32 = new Uint32Array(f32.buffer);
  for (let i = 0; i < data.length; i++) {
    f32[0] = data[i];
    out[i] = dtype === 'bfloat16' ? bf16Bits(u32[0]) : floatToHalf(data[i]);
  }
  return new Uint8Array(out.buffer);
}

/** f32 bits to bf16 bits, rounding to nearest even (NaN stays NaN). */
function bf16Bits(x: number): number {
  if ((x & 0x7fffffff) > 0x7f800000) return ((x >>> 16) | 0x40) & 0xffff;
  return ((x + 0x7fff + ((x >>> 16) & 1)) >>> 16) & 0xffff;
}

/** `torch.save(tensor)`'s bytes for a contiguous tensor of `shape` holding `data` (row-major). */
export function encodeTorchTensor(data: Float32Array, shape: readonly number[], dtype: TorchDtype = 'float32'): Uint8Array {
  const numel = shape.reduce((a, b) => a * b, 1);
  if (numel !== data.length) throw new TorchFormatError(`shape [${shape.join(', ')}] holds ${numel} values but ${data.length} were given`);
  const p = new PickleWriter();
  p.op(0x80).op(2); // PROTO 2
  p.global('torch._utils', '_rebuild_tensor_v2');
  p.tuple(() => {
    p.tuple(() => {
      p.str('storage');
      p.global('torch', STORAGE_CLASS[dtype]);
      p.str('0');
      p.str('cpu');
      p.int(numel);
    });
    p.op(0x51); // BINPERSID
    p.int(0);
    p.tuple(() => {
      for (const d of shape) p.int(d);
    });
    p.tuple(() => {
      for (const s of contiguousStrides(shape)) p.int(s);
    });
    p.op(0x89); // NEWFALSE: requires_grad
    p.global('collections', 'OrderedDict');
    p.op(0x29); // EMPTY_TUPLE
    p.reduced();
  });
  p.reduced();
  return zipSync(
    {
      [`${ARCHIVE}/data.pkl`]: p.done(),
      [`${ARCHIVE}/byteorder`]: strToU8('little'),
      [`${ARCHIVE}/data/0`]: storageBytes(data, dtype),
      [`${ARCHIVE}/version`]: strToU8('3\n'),
    },
    { level: 0, mtime: new Date('2000-01-01T00:00:00Z') },
  );
}

// ---- reading ----

type PickleValue = string | number | boolean | null | PickleValue[] | { global: string } | { persistent: PickleValue[] } | TensorCall;
interface TensorCall {
  storage: PickleValue[];
  offset: number;
  shape: number[];
  stride: number[];
}

const ALLOWED_GLOBALS = new Set([
  'torch._utils._rebuild_tensor_v2',
  'collections.OrderedDict',
  ...Object.values(STORAGE_CLASS).map((c) => `torch.${c}`),
]);

function readPickle(bytes: Uint8Array): TensorCall {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const stack: PickleValue[] = [];
  const marks: number[] = [];
  const memo = new Map<number, PickleValue>();
  let i = 0;
  const need = (n: number) => {
    if (i + n > bytes.length) throw new TorchFormatError('data.pkl ends in the middle of an opcode');
  };
  const text = (n: number) => {
    need(n);
    const s = strFromU8(bytes.subarray(i, i + n));
    i += n;
    return s;
  };
  const line = () => {
    const end = bytes.indexOf(0x0a, i);
    if (end < 0) throw new TorchFormatError('data.pkl ends inside a GLOBAL');
    return text(end - i + 1).slice(0, -1);
  };
  const popMark = () => {
    const m = marks.pop();
    if (m === undefined) throw new TorchFormatError('data.pkl closes a tuple it never opened');
    return stack.splice(m);
  };
  const pop = () => {
    if (stack.length === 0) throw new TorchFormatError('data.pkl pops an empty stack');
    return stack.pop()!;
  };
  for (;;) {
    need(1);
    const op = bytes[i++];
    switch (op) {
      case 0x80: // PROTO
        need(1);
        i++;
        break;
      case 0x95: // FRAME
        need(8);
        i += 8;
        break;
      case 0x63: {
        // GLOBAL
        const name = `${line()}.${line()}`;
        if (!ALLOWED_GLOBALS.has(name)) throw new TorchFormatError(`data.pkl names ${name}; only a plain tensor is accepted`);
        stack.push({ global: name });
        break;
      }
      case 0x28: // MARK
        marks.push(stack.length);
        break;
      case 0x74: // TUPLE
        stack.push(popMark());
        break;
      case 0x29: // EMPTY_TUPLE
        stack.push([]);
        break;
      case 0x85: // TUPLE1
        stack.push([pop()]);
        break;
      case 0x86: {
        // TUPLE2
        const b = pop();
        stack.push([pop(), b]);
        break;
      }
      case 0x87: {
        // TUPLE3
        const c = pop();
        const b = pop();
        stack.push([pop(), b, c]);
        break;
      }
      case 0x8c: // SHORT_BINUNICODE
        need(1);
        stack.push(text(bytes[i++]));
        break;
      case 0x58: // BINUNICODE
        need(4);
        i += 4;
        stack.push(text(view.getUint32(i - 4, true)));
        break;
      case 0x4b: // BININT1
        need(1);
        stack.push(bytes[i++]);
        break;
      case 0x4d: // BININT2
        need(2);
        stack.push(view.getUint16(i, true));
        i += 2;
        break;
      case 0x4a: // BININT
        need(4);
        stack.push(view.getInt32(i, true));
        i += 4;
        break;
      case 0x8a: {
        // LONG1
        need(1);
        const n = bytes[i++];
        need(n);
        let v = 0;
        for (let k = n - 1; k >= 0; k--) v = v * 256 + bytes[i + k];
        if (n > 0 && bytes[i + n - 1] & 0x80) v -= 256 ** n;
        i += n;
        stack.push(v);
        break;
      }
      case 0x89: // NEWFALSE
        stack.push(false);
        break;
      case 0x88: // NEWTRUE
        stack.push(true);
        break;
      case 0x4e: // NONE
        stack.push(null);
        break;
      case 0x7d: // EMPTY_DICT
        stack.push([]);
        break;
      case 0x71: // BINPUT
        need(1);
        memo.set(bytes[i++], stack[stack.length - 1]);
        break;
      case 0x72: // LONG_BINPUT
        need(4);
        memo.set(view.getUint32(i, true), stack[stack.length - 1]);
        i += 4;
        break;
      case 0x94: // MEMOIZE
        memo.set(memo.size, stack[stack.length - 1]);
        break;
      case 0x68: // BINGET
      case 0x6a: {
        // LONG_BINGET
        const k = op === 0x68 ? bytes[i] : view.getUint32(i, true);
        i += op === 0x68 ? 1 : 4;
        if (!memo.has(k)) throw new TorchFormatError(`data.pkl reads memo ${k}, never stored`);
        stack.push(memo.get(k)!);
        break;
      }
      case 0x51: // BINPERSID
        stack.push({ persistent: pop() as PickleValue[] });
        break;
      case 0x52: {
        // REDUCE
        const args = pop() as PickleValue[];
        const fn = pop() as { global?: string };
        if (fn.global === 'collections.OrderedDict') stack.push([]);
        else if (fn.global === 'torch._utils._rebuild_tensor_v2') {
          const [storage, offset, shape, stride] = args as [{ persistent: PickleValue[] }, number, number[], number[]];
          if (!storage?.persistent) throw new TorchFormatError('the tensor has no storage record');
          stack.push({ storage: storage.persistent, offset, shape, stride } as TensorCall as unknown as PickleValue);
        } else throw new TorchFormatError(`data.pkl calls ${fn.global ?? 'something'}; only a plain tensor is accepted`);
        break;
      }
      case 0x2e: {
        // STOP
        const top = pop() as unknown as TensorCall;
        if (!top || !Array.isArray(top.shape)) throw new TorchFormatError('the pickle is not one tensor');
        return top;
      }
      default:
        throw new TorchFormatError(`data.pkl uses opcode 0x${op.toString(16)}, which this reader does not take (one plain tensor only)`);
    }
  }
}

/** A tensor from `torch.save`'s bytes (one contiguous float32, float16, bfloat16 or int64 tensor on any device). */
export function decodeTorchTensor(bytes: Uint8Array): TorchTensor {
  let files: Record<string, Uint8Array>;
  try {
    files = unzipSync(bytes);
  } catch (e) {
    throw new TorchFormatError(`not a ZIP archive as torch.save writes (${e instanceof Error ? e.message : String(e)})`);
  }
  const pkl = Object.keys(files).find((n) => /^[^/]+\/data\.pkl$/.test(n));
  if (!pkl) throw new TorchFormatError('the archive has no <name>/data.pkl (was it written by torch.save with the ZIP format?)');
  const root = pkl.slice(0, -'data.pkl'.length);
  const order = files[`${root}byteorder`];
  if (order && strFromU8(order) !== 'little')
    throw new TorchFormatError(`the tensor is ${strFromU8(order)}-endian; only little-endian is read`);
  const call = readPickle(files[pkl]);
  const [kind, storageType, key] = call.storage as [string, { global: string }, string];
  if (kind !== 'storage') throw new TorchFormatError(`the persistent record is a ${String(kind)}, not a storage`);
  const dtype = (Object.keys(STORAGE_CLASS) as TorchDtype[]).find((d) => `torch.${STORAGE_CLASS[d]}` === storageType?.global);
  if (!dtype) throw new TorchFormatError(`the storage is ${storageType?.global}; float32, float16, bfloat16 and int64 are read`);
  const raw = files[`${root}data/${key}`];
  if (!raw) throw new TorchFormatError(`the archive has no ${root}data/${key} for the tensor's storage`);
  const shape = call.shape;
  const numel = shape.reduce((a, b) => a * b, 1);
  const expected = contiguousStrides(shape);
  if (numel > 1 && call.stride.some((s, d) => shape[d] > 1 && s !== expected[d])) {
    throw new TorchFormatError(`the tensor is not contiguous (strides [${call.stride.join(', ')}]); save tensor.contiguous()`);
  }
  const size = ELEMENT_BYTES[dtype];
  if ((call.offset + numel) * size > raw.length) {
    throw new TorchFormatError(`the storage holds ${raw.length / size} values but the tensor needs ${call.offset + numel}`);
  }
  const body = raw.slice(call.offset * size, (call.offset + numel) * size);
  let data: Float32Array;
  if (dtype === 'float32') data = new Float32Array(body.buffer);
  else if (dtype === 'int64') {
    const ints = new BigInt64Array(body.buffer);
    data = new Float32Array(numel);
    for (let k = 0; k < numel; k++) {
      if (ints[k] > EXACT_IN_F32 || ints[k] < -EXACT_IN_F32) {
        throw new TorchFormatError(`int64 value ${k} (${ints[k]}) is beyond ±2^24, more than this reader keeps exactly`);
      }
      data[k] = Number(ints[k]);
    }
  } else {
    const bits = new Uint16Array(body.buffer);
    data = new Float32Array(numel);
    if (dtype === 'float16') for (let k = 0; k < numel; k++) data[k] = halfToFloat(bits[k]);
    else {
      const u32 = new Uint32Array(data.buffer);
      for (let k = 0; k < numel; k++) u32[k] = bits[k] << 16;
    }
  }
  return { data, shape: [...shape], dtype };
}
