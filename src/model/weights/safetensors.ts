// Streaming safetensors reader. Format (https://github.com/huggingface/safetensors):
//   [8 bytes: u64 LE header size N][N bytes: JSON header][data]
//   header: { "__metadata__"?: {...}, "<name>": { dtype, shape, data_offsets: [begin, end] } }, offsets
//   relative to the start of data. Tensors are cut from the byte stream as it arrives, so a file is never
//   held in memory whole; only the tensor being filled is.

import { CheckpointFormatError, TruncatedFileError } from '../../errors';
import { halfToFloat } from '../../kernels/f16';
import { byteReader } from './byte-reader';
import type { TensorReadOptions } from './read-arena';
import { checkHeaderSize, checkTensorEntry, validateSafetensorsHeader } from './safetensors-validate';
import type { SafetensorsDtype, SafetensorsHeader, TensorInfo } from './safetensors-header';

export type { SafetensorsHeader, TensorInfo };

const DTYPE_BYTES: Record<string, number> = {
  F64: 8,
  F32: 4,
  F16: 2,
  BF16: 2,
  I64: 8,
  I32: 4,
  I16: 2,
  I8: 1,
  U8: 1,
  U16: 2,
  U32: 4,
  U64: 8,
  BOOL: 1,
};

/** Header size from the first 8 bytes; throws on a size no real file has. */
export function readHeaderSize(first8: Uint8Array, file: string): number {
  if (first8.byteLength < 8) throw new TruncatedFileError(file, 8, first8.byteLength, 'no room for the header size');
  const n = new DataView(first8.buffer, first8.byteOffset, 8).getBigUint64(0, true);
  if (n === 0n || n > 100_000_000n) {
    throw new CheckpointFormatError(`${file} is not a safetensors file: header size ${n} is out of range`);
  }
  return Number(n);
}

export function parseSafetensorsHeader(json: Uint8Array, headerSize: number, file: string): SafetensorsHeader {
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder().decode(json));
  } catch (e) {
    throw new CheckpointFormatError(`${file} is not a safetensors file: its header is not JSON (${(e as Error).message})`);
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw))
    throw new CheckpointFormatError(`${file}: safetensors header is not an object`);
  const tensors = new Map<string, TensorInfo>();
  let metadata: Record<string, string> = {};
  let dataBytes = 0;
  for (const [name, value] of Object.entries(raw as Record<string, unknown>)) {
    if (name === '__metadata__') {
      if (value === null || typeof value !== 'object' || Array.isArray(value))
        throw new CheckpointFormatError(`${file}: __metadata__ is not an object`);
      metadata = value as Record<string, string>;
      continue;
    }
    const v = value as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    const dtype = String(v?.dtype);
    const shape = v?.shape;
    const offsets = v?.data_offsets;
    if (!(dtype in DTYPE_BYTES) || !Array.isArray(shape) || !Array.isArray(offsets) || offsets.length !== 2) {
      throw new CheckpointFormatError(`${file}: header entry for '${name}' is malformed: ${JSON.stringify(value)}`);
    }
    checkTensorEntry(file, name, shape, offsets);
    const [begin, end] = offsets as number[];
    const numel = (shape as number[]).reduce((a, b) => a * b, 1);
    if (end - begin !== numel * DTYPE_BYTES[dtype]) {
      throw new CheckpointFormatError(
        `${file}: '${name}' has shape [${shape.join(', ')}] ${dtype} = ${numel * DTYPE_BYTES[dtype]} bytes but its offsets span ${end - begin}`,
      );
    }
    tensors.set(name, { name, dtype: dtype as SafetensorsDtype, shape: shape as number[], begin, end });
    dataBytes = Math.max(dataBytes, end);
  }
  return { dataOffset: 8 + headerSize, tensors, metadata, fileBytes: 8 + headerSize + dataBytes };
}

export interface StreamedTensor {
  info: TensorInfo;
  /**
   * The tensor's raw bytes (little-endian, as stored), in a fresh array the consumer may keep, or in
   * TensorReadOptions.arena's buffer when given.
   */
  bytes: Uint8Array;
}

export interface OpenedSafetensors {
  header: SafetensorsHeader;
  /** The header's JSON bytes as stored (part of a file's identity for stored quantized copies). */
  headerJson: Uint8Array;
  /** Every tensor in file order (but those TensorReadOptions.skip names), as soon as its bytes are complete. */
  tensors: AsyncGenerator<StreamedTensor>;
  /** Stop reading (releases the source stream, e.g. the file handle) without reading the rest. */
  close(): Promise<void>;
}

/**
 * Read a safetensors header from `source`, and return it with a generator over the tensors that
 * follows. A stream that ends early throws TruncatedFileError naming the tensor that was cut.
 * `fileBytes`, the real size when the source knows it, is checked against the header (safetensors-
 * validate.ts) before this returns, so a header claiming more than the file holds fails before the
 * caller allocates anything for it.
 */
export async function openSafetensors(
  source: AsyncIterable<Uint8Array>,
  file: string,
  onBytes?: (bytesRead: number) => void,
  fileBytes?: number,
  readOptions: TensorReadOptions = {},
): Promise<OpenedSafetensors> {
  const reader = byteReader(source, onBytes);
  const read = reader.read;

  const headerSize = readHeaderSize(
    await read(8, true, (seen) => new TruncatedFileError(file, 8, seen, 'no room for the header size')),
    file,
  );
  checkHeaderSize(headerSize, file, fileBytes);
  const headerJson = await read(headerSize, true, (seen) => new TruncatedFileError(file, 8 + headerSize, seen, 'inside the header'));
  const header = parseSafetensorsHeader(headerJson, headerSize, file);
  validateSafetensorsHeader(header, file, fileBytes);

  async function* tensors(): AsyncGenerator<StreamedTensor> {
    const ordered = [...header.tensors.values()].sort((a, b) => a.begin - b.begin);
    for (const info of ordered) {
      if (readOptions.skip?.(info.name)) continue; // its bytes are passed over before the next tensor's
      const start = header.dataOffset + info.begin;
      if (start > reader.consumed) {
        await read(
          start - reader.consumed,
          false,
          (seen) => new TruncatedFileError(file, header.fileBytes, seen, `before tensor '${info.name}'`),
        );
      }
      const n = info.end - info.begin;
      const into = readOptions.arena?.take(n);
      const bytes = await read(
        n,
        true,
        (seen) => new TruncatedFileError(file, header.fileBytes, seen, `tensor '${info.name}' is cut`),
        into,
      );
      if (into) readOptions.arena!.adopt(bytes);
      yield { info, bytes };
    }
  }

  return {
    header,
    headerJson,
    tensors: tensors(),
    close: reader.close,
  };
}

/**
 * Pull bytes from `source` and yield the header, then every tensor in file order as soon as its bytes
 * are complete. A stream that ends early throws TruncatedFileError naming the tensor that was cut.
 */
export async function* streamSafetensors(
  source: AsyncIterable<Uint8Array>,
  file: string,
  onHeader?: (header: SafetensorsHeader) => void,
  onBytes?: (bytesRead: number) => void,
  fileBytes?: number,
): AsyncGenerator<StreamedTensor> {
  const opened = await openSafetensors(source, file, onBytes, fileBytes);
  onHeader?.(opened.header);
  yield* opened.tensors;
}

/** Convert stored bytes to f32. F16 and BF16 widen exactly; F32 is copied. */
export function toFloat32(info: TensorInfo, bytes: Uint8Array): Float32Array {
  return toFloat32Into(info, bytes, new Float32Array(bytes.byteLength / DTYPE_BYTES[info.dtype]));
}

/**
 * toFloat32 into the start of `out` (at least that long), returned as a view of the values: a load widens a
 * tensor chunk after chunk into one scratch array instead of leaving an array per chunk for the collector
 * (in a browser tab that garbage is resident memory until V8 gets to it).
 */
export function toFloat32Into(info: TensorInfo, bytes: Uint8Array, out: Float32Array): Float32Array {
  const n = bytes.byteLength / DTYPE_BYTES[info.dtype];
  if (out.length < n) throw new RangeError(`toFloat32Into: ${n} values do not fit in ${out.length}`);
  const values = out.subarray(0, n);
  const aligned = bytes.byteOffset % 4 === 0 ? bytes : bytes.slice();
  switch (info.dtype) {
    case 'F32':
      values.set(new Float32Array(aligned.buffer, aligned.byteOffset, n));
      return values;
    case 'BF16': {
      const src = new Uint16Array(aligned.buffer, aligned.byteOffset, n);
      const bits = new Uint32Array(values.buffer, values.byteOffset, n);
      for (let i = 0; i < n; i++) bits[i] = src[i] << 16;
      return values;
    }
    case 'F16': {
      const src = new Uint16Array(aligned.buffer, aligned.byteOffset, n);
      for (let i = 0; i < n; i++) values[i] = halfToFloat(src[i]);
      return values;
    }
    default:
      throw new CheckpointFormatError(`tensor '${info.name}' is ${info.dtype}; Tessera loads F32, F16 and BF16 weights`);
  }
}
