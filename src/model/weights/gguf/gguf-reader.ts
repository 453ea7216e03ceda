// Streaming GGUF reader (format: gguf-format.ts). The header (metadata and tensor infos) is parsed field
// by field as the bytes arrive; then each tensor is cut from the stream in offset order, so a file is
// never held whole: only the tensor being read is.

import { CheckpointFormatError, TruncatedFileError } from '../../../errors';
import { byteReader } from '../byte-reader';
import type { TensorReadOptions } from '../read-arena';
import {
  GGML_TYPE_NAMES,
  GGUF_DEFAULT_ALIGNMENT,
  GGUF_MAGIC,
  GGUF_VALUE,
  type GgufHeader,
  type GgufTensorInfo,
  type GgufValue,
  ggmlTypeOf,
  ggufTensorBytes,
} from './gguf-format';

// Bounds no real file reaches; a corrupt count fails here instead of allocating for it.
const MAX_COUNT = 100_000_000;
const MAX_STRING_BYTES = 100_000_000;
const MAX_DIMS = 4;

interface StreamedGgufTensor {
  info: GgufTensorInfo;
  /**
   * The tensor's bytes as stored (blocks for quantized types), in a fresh array the consumer may keep, or
   * in TensorReadOptions.arena's buffer when given.
   */
  bytes: Uint8Array;
}

export interface OpenedGguf {
  header: GgufHeader;
  /** Every tensor in file order (but those TensorReadOptions.skip names), as soon as its bytes are complete. */
  tensors: AsyncGenerator<StreamedGgufTensor>;
  close(): Promise<void>;
}

const utf8 = new TextDecoder('utf-8', { fatal: false });

/**
 * An f32 value as the shortest decimal that rounds to it (what a converter wrote: rms_norm_eps 1e-5, not
 * 9.99999974737875e-6), so configs read from GGUF equal the Hugging Face ones.
 */
function shortestF32(v: number): number {
  if (!Number.isFinite(v)) return v;
  for (let digits = 1; digits < 9; digits++) {
    const d = Number(v.toPrecision(digits));
    if (Math.fround(d) === v) return d;
  }
  return v;
}

export async function openGguf(
  source: AsyncIterable<Uint8Array>,
  file: string,
  onBytes?: (bytesRead: number) => void,
  fileBytes?: number,
  readOptions: TensorReadOptions = {},
): Promise<OpenedGguf> {
  const reader = byteReader(source, onBytes);
  const inHeader = (seen: number) => new TruncatedFileError(file, seen + 1, seen, 'inside the GGUF header');
  const view = async (n: number) => {
    const b = await reader.read(n, true, inHeader);
    return new DataView(b.buffer, b.byteOffset, n);
  };
  const u32 = async () => (await view(4)).getUint32(0, true);
  const u64 = async (what: string) => {
    const v = (await view(8)).getBigUint64(0, true);
    if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new CheckpointFormatError(`${file}: GGUF ${what} ${v} is out of range`);
    return Number(v);
  };
  const count = async (what: string) => {
    const n = await u64(what);
    if (n > MAX_COUNT) throw new CheckpointFormatError(`${file}: GGUF ${what} ${n} is more than any real file has`);
    return n;
  };
  const string = async (what: string) => {
    const n = await u64(`${what} length`);
    if (n > MAX_STRING_BYTES) throw new CheckpointFormatError(`${file}: GGUF ${what} of ${n} bytes is more than any real file has`);
    return utf8.decode(await reader.read(n, true, inHeader));
  };
  const scalar = async (type: number, key: string): Promise<GgufValue> => {
    switch (type) {
      case GGUF_VALUE.u8:
        return (await view(1)).getUint8(0);
      case GGUF_VALUE.i8:
        return (await view(1)).getInt8(0);
      case GGUF_VALUE.u16:
        return (await view(2)).getUint16(0, true);
      case GGUF_VALUE.i16:
        return (await view(2)).getInt16(0, true);
      case GGUF_VALUE.u32:
        return (await view(4)).getUint32(0, true);
      case GGUF_VALUE.i32:
        return (await view(4)).getInt32(0, true);
      case GGUF_VALUE.f32:
        return shortestF32((await view(4)).getFloat32(0, true));
      case GGUF_VALUE.bool:
        return (await view(1)).getUint8(0) !== 0;
      case GGUF_VALUE.string:
        return string(`value of '${key}'`);
      case GGUF_VALUE.u64: {
        const v = (await view(8)).getBigUint64(0, true);
        return v <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(v) : v;
      }
      case GGUF_VALUE.i64: {
        const v = (await view(8)).getBigInt64(0, true);
        return v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(v) : v;
      }
      case GGUF_VALUE.f64:
        return (await view(8)).getFloat64(0, true);
      default:
        throw new CheckpointFormatError(`${file}: GGUF metadata '${key}' has value type ${type}, which GGUF does not define`);
    }
  };
  const value = async (type: number, key: string): Promise<GgufValue> => {
    if (type !== GGUF_VALUE.array) return scalar(type, key);
    const itemType = await u32();
    const n = await count(`length of the array '${key}'`);
    const out: GgufValue[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = await value(itemType, key);
    return out;
  };

  const magic = await reader.read(4, true, (seen) => new TruncatedFileError(file, 4, seen, 'no room for the GGUF magic'));
  if (new DataView(magic.buffer).getUint32(0, true) !== GGUF_MAGIC) {
    throw new CheckpointFormatError(
      `${file} is not a GGUF file: it starts with ${[...magic].map((b) => b.toString(16).padStart(2, '0')).join(' ')}, not "GGUF"`,
    );
  }
  const version = await u32();
  if (version !== 2 && version !== 3) {
    throw new CheckpointFormatError(
      `${file} is GGUF version ${version}; Tessera reads versions 2 and 3 (re-convert it with a current llama.cpp)`,
    );
  }
  const numTensors = await count('tensor count');
  const numMetadata = await count('metadata count');
  const metadata = new Map<string, GgufValue>();
  for (let i = 0; i < numMetadata; i++) {
    const key = await string('metadata key');
    metadata.set(key, await value(await u32(), key));
  }
  const alignment = metadata.get('general.alignment') ?? GGUF_DEFAULT_ALIGNMENT;
  if (typeof alignment !== 'number' || alignment < 1 || alignment % 8 !== 0) {
    throw new CheckpointFormatError(`${file}: general.alignment is ${String(alignment)}; GGUF needs a multiple of 8`);
  }
  const tensors = new Map<string, GgufTensorInfo>();
  for (let i = 0; i < numTensors; i++) {
    const name = await string('tensor name');
    const numDims = await u32();
    if (numDims < 1 || numDims > MAX_DIMS)
      throw new CheckpointFormatError(`${file}: tensor '${name}' has ${numDims} dimensions; GGUF allows 1 to ${MAX_DIMS}`);
    const ne: number[] = [];
    for (let d = 0; d < numDims; d++) ne.push(await u64(`dimension of '${name}'`));
    const code = await u32();
    const offset = await u64(`offset of '${name}'`);
    const type = ggmlTypeOf(code);
    if (!type) {
      throw new CheckpointFormatError(
        `${file}: tensor '${name}' has ggml type ${code}, which Tessera does not read (it reads ${GGML_TYPE_NAMES.join(', ')}); ` +
          'use a file quantized to one of those (llama-quantize can re-quantize it)',
      );
    }
    const sizeBytes = ggufTensorBytes(type, ne);
    if (sizeBytes === undefined) {
      throw new CheckpointFormatError(
        `${file}: tensor '${name}' is ${type.name} with ${ne[0]} values per row, not whole blocks of ${type.blockValues}`,
      );
    }
    if (offset % alignment !== 0)
      throw new CheckpointFormatError(`${file}: tensor '${name}' starts at offset ${offset}, not a multiple of the alignment ${alignment}`);
    if (tensors.has(name)) throw new CheckpointFormatError(`${file}: tensor '${name}' is listed twice`);
    tensors.set(name, { name, ne, shape: [...ne].reverse(), type, offset, sizeBytes });
  }
  const dataOffset = Math.ceil(reader.consumed / alignment) * alignment;
  const ordered = [...tensors.values()].sort((a, b) => a.offset - b.offset);
  for (let i = 1; i < ordered.length; i++) {
    const prev = ordered[i - 1];
    if (ordered[i].offset < prev.offset + prev.sizeBytes) {
      throw new CheckpointFormatError(`${file}: tensors '${prev.name}' and '${ordered[i].name}' overlap`);
    }
  }
  const last = ordered.at(-1);
  const header: GgufHeader = {
    version,
    metadata,
    tensors,
    alignment,
    dataOffset,
    fileBytes: dataOffset + (last ? last.offset + last.sizeBytes : 0),
  };
  if (fileBytes !== undefined && header.fileBytes > fileBytes) {
    throw new TruncatedFileError(file, header.fileBytes, fileBytes, `its tensors end at byte ${header.fileBytes}`);
  }

  async function* stream(): AsyncGenerator<StreamedGgufTensor> {
    for (const info of ordered) {
      if (readOptions.skip?.(info.name)) continue; // its bytes are passed over before the next tensor's
      const start = dataOffset + info.offset;
      if (start > reader.consumed) {
        await reader.read(
          start - reader.consumed,
          false,
          (seen) => new TruncatedFileError(file, header.fileBytes, seen, `before tensor '${info.name}'`),
        );
      }
      const into = readOptions.arena?.take(info.sizeBytes);
      const bytes = await reader.read(
        info.sizeBytes,
        true,
        (seen) => new TruncatedFileError(file, header.fileBytes, seen, `tensor '${info.name}' is cut`),
        into,
      );
      if (into) readOptions.arena!.adopt(bytes);
      yield { info, bytes };
    }
  }
  return { header, tensors: stream(), close: reader.close };
}
