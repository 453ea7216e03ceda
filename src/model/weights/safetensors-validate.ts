// Validation of an untrusted safetensors header, before any tensor byte is read or any GPU buffer is made
// for it. Follows the reference implementation (huggingface/safetensors, `Metadata::validate` and
// `SafeTensors::read_metadata`): with the tensors sorted by offset, each one starts exactly where the
// previous one ended (the first at 0), its byte length is numel * dtype size, and the data section ends
// exactly at the end of the file. So no two tensors share bytes, no bytes are unaccounted for, and a
// header cannot claim more data than the file holds.
//
//   [u64 N][N-byte JSON header][data: t0 | t1 | t2 ... ]     8 + N + end(last) == file size
//                                    0    e0   e1

import { CheckpointFormatError, TruncatedFileError } from '../../errors';
import type { SafetensorsHeader, TensorInfo } from './safetensors-header';

const isCount = (n: unknown): n is number => Number.isSafeInteger(n) && (n as number) >= 0;

/** Throws when the header size alone does not fit the file (checked before the header is buffered). */
export function checkHeaderSize(headerSize: number, file: string, fileBytes: number | undefined): void {
  if (fileBytes !== undefined && 8 + headerSize > fileBytes) {
    throw new TruncatedFileError(file, 8 + headerSize, fileBytes, `the header size says ${headerSize} bytes`);
  }
}

/** Checks one header entry's numbers (before they are trusted for arithmetic). */
export function checkTensorEntry(file: string, name: string, shape: unknown[], offsets: unknown[]): void {
  if (!shape.every(isCount)) {
    throw new CheckpointFormatError(`${file}: '${name}' has shape ${JSON.stringify(shape)}; dimensions must be non-negative integers`);
  }
  if (!offsets.every(isCount) || (offsets[1] as number) < (offsets[0] as number)) {
    throw new CheckpointFormatError(
      `${file}: '${name}' has data_offsets ${JSON.stringify(offsets)}; they must be non-negative integers [begin, end] with begin <= end`,
    );
  }
}

/** Checks metadata and the layout of every tensor; with `fileBytes` (the real size), the total too. */
export function validateSafetensorsHeader(header: SafetensorsHeader, file: string, fileBytes: number | undefined): void {
  for (const [k, v] of Object.entries(header.metadata as unknown as object)) {
    if (typeof v !== 'string') throw new CheckpointFormatError(`${file}: __metadata__.${k} is not a string; the header is malformed`);
  }
  const sorted: TensorInfo[] = [...header.tensors.values()].sort((a, b) => a.begin - b.begin || a.end - b.end);
  let end = 0;
  let previous: TensorInfo | undefined;
  for (const t of sorted) {
    if (t.begin < end) {
      throw new CheckpointFormatError(
        `${file}: tensors '${previous!.name}' [${previous!.begin}, ${previous!.end}) and '${t.name}' [${t.begin}, ${t.end}) share bytes; ` +
          'every tensor must have its own bytes. The file is corrupt or crafted.',
      );
    }
    if (t.begin > end) {
      throw new CheckpointFormatError(
        `${file}: bytes [${end}, ${t.begin}) of the data section belong to no tensor (before '${t.name}'); ` +
          'the data section must be contiguous. The file is corrupt or crafted.',
      );
    }
    end = t.end;
    previous = t;
  }
  const total = header.dataOffset + end;
  if (fileBytes === undefined) return;
  if (total > fileBytes) throw new TruncatedFileError(file, total, fileBytes, 'the header describes more tensor data than the file holds');
  if (total < fileBytes) {
    throw new CheckpointFormatError(
      `${file} has ${fileBytes - total} bytes after the last tensor (the header accounts for ${total} of ${fileBytes}); the file is corrupt or crafted.`,
    );
  }
}
