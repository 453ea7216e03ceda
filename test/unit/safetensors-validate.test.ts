// Untrusted safetensors headers: offsets integral, sorted, contiguous, non-overlapping, inside the file,
// and the header's total checked against the real file size before any tensor byte is read. Follows the
// reference validation (huggingface/safetensors `Metadata::validate`: each tensor starts where the previous
// ended, and the data section ends exactly at the end of the buffer).

import { describe, expect, it } from 'vitest';
import { CheckpointFormatError, TruncatedFileError } from '../../src/errors';
import { streamSafetensors } from '../../src/model/weights/safetensors';
import { writeSafetensors } from '../../src/model/weights/safetensors-writer';

type Entry = { dtype: string; shape: unknown[]; data_offsets: unknown[] };

/** A file with this header and `dataBytes` bytes of data (the header padded to 8 bytes, as writers do). */
function craft(entries: Record<string, Entry | Record<string, string>>, dataBytes: number): Uint8Array {
  let json = JSON.stringify(entries);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const head = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + head.byteLength + dataBytes);
  new DataView(out.buffer).setBigUint64(0, BigInt(head.byteLength), true);
  out.set(head, 8);
  for (let i = 8 + head.byteLength; i < out.byteLength; i++) out[i] = i & 0xff;
  return out;
}

async function* chunks(bytes: Uint8Array, size = 64): AsyncGenerator<Uint8Array> {
  for (let o = 0; o < bytes.byteLength; o += size) yield bytes.subarray(o, o + size);
}

/** Read the whole file; returns the tensor names, or the error. */
async function read(bytes: Uint8Array, size: 'known' | 'unknown' = 'known'): Promise<string[] | Error> {
  const names: string[] = [];
  try {
    const sizeBytes = size === 'known' ? bytes.byteLength : undefined;
    for await (const t of streamSafetensors(chunks(bytes), 'm.safetensors', undefined, undefined, sizeBytes)) names.push(t.info.name);
    return names;
  } catch (e) {
    return e as Error;
  }
}

const f32 = (shape: number[], begin: number, end: number): Entry => ({ dtype: 'F32', shape, data_offsets: [begin, end] });

describe('safetensors header validation', () => {
  it('accepts what the writer makes, and zero-sized tensors', async () => {
    const ok = writeSafetensors([
      { name: 'a', dtype: 'F32', shape: [2, 3], data: new Float32Array(6) },
      { name: 'empty', dtype: 'F16', shape: [0, 4], data: new Float32Array(0) },
      { name: 'b', dtype: 'BF16', shape: [5], data: new Float32Array(5) },
    ]);
    expect(await read(ok)).toEqual(['a', 'empty', 'b']);
  });

  it('two tensors sharing bytes are an error naming both', async () => {
    const err = await read(craft({ a: f32([4], 0, 16), b: f32([4], 0, 16) }, 16));
    expect(err).toBeInstanceOf(CheckpointFormatError);
    expect((err as Error).message).toMatch(/'a' \[0, 16\) and 'b' \[0, 16\) share bytes/);
  });

  it('overlapping ranges are an error', async () => {
    const err = await read(craft({ a: f32([4], 0, 16), b: f32([4], 8, 24) }, 24));
    expect(err).toBeInstanceOf(CheckpointFormatError);
    expect((err as Error).message).toContain('share bytes');
  });

  it('a hole between tensors is an error', async () => {
    const err = await read(craft({ a: f32([4], 0, 16), b: f32([4], 24, 40) }, 40));
    expect(err).toBeInstanceOf(CheckpointFormatError);
    expect((err as Error).message).toContain('bytes [16, 24) of the data section belong to no tensor');
  });

  it('data that does not start at offset 0 is an error', async () => {
    const err = await read(craft({ a: f32([4], 8, 24) }, 24));
    expect(err).toBeInstanceOf(CheckpointFormatError);
    expect((err as Error).message).toContain('bytes [0, 8) of the data section belong to no tensor');
  });

  it('offsets and dimensions must be non-negative integers', async () => {
    for (const bad of [
      f32([4], 0.5, 16.5),
      f32([4], -16, 0),
      f32([2.5, 1.6], 0, 16),
      f32([4], 0, 1e300),
      { dtype: 'F32', shape: [4], data_offsets: ['0', '16'] },
    ]) {
      const err = await read(craft({ a: bad }, 16));
      expect(err, JSON.stringify(bad)).toBeInstanceOf(CheckpointFormatError);
    }
  });

  it('a header that describes more data than the file holds fails before any tensor byte is read', async () => {
    // The data section would be 4 GiB; the file is a few hundred bytes.
    const bytes = craft({ a: f32([2 ** 30], 0, 2 ** 32) }, 0);
    let pulled = 0;
    async function* counted() {
      for await (const c of chunks(bytes)) {
        pulled += c.byteLength;
        yield c;
      }
    }
    const err = await (async () => {
      for await (const _ of streamSafetensors(counted(), 'm.safetensors', undefined, undefined, bytes.byteLength)) void _;
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TruncatedFileError);
    expect((err as Error).message).toContain(`needs ${bytes.byteLength + 2 ** 32} bytes but the file has ${bytes.byteLength}`);
    expect(pulled).toBe(bytes.byteLength);
  });

  it('the header is checked against the real size before onHeader (where GPU buffers are allocated)', async () => {
    const bytes = craft({ a: f32([4], 0, 16) }, 16);
    let called = false;
    const err = await (async () => {
      for await (const _ of streamSafetensors(
        chunks(bytes.subarray(0, bytes.byteLength - 4)),
        'm.safetensors',
        () => (called = true),
        undefined,
        bytes.byteLength - 4,
      ))
        void _;
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TruncatedFileError);
    expect(called).toBe(false);
  });

  it('a stream that ends early without a known size names the tensor that was cut', async () => {
    const bytes = craft({ a: f32([4], 0, 16), b: f32([4], 16, 32) }, 32);
    const err = await read(bytes.subarray(0, bytes.byteLength - 4), 'unknown');
    expect(err).toBeInstanceOf(TruncatedFileError);
    expect((err as Error).message).toContain("tensor 'b' is cut");
  });

  it('bytes after the last tensor are an error when the size is known', async () => {
    const ok = craft({ a: f32([4], 0, 16) }, 16);
    const longer = new Uint8Array(ok.byteLength + 8);
    longer.set(ok);
    const err = await read(longer);
    expect(err).toBeInstanceOf(CheckpointFormatError);
    expect((err as Error).message).toContain('8 bytes after the last tensor');
  });

  it('a header size larger than the file fails without waiting for the bytes', async () => {
    const bytes = craft({ a: f32([4], 0, 16) }, 16);
    new DataView(bytes.buffer).setBigUint64(0, 50_000_000n, true);
    const err = await read(bytes);
    expect(err).toBeInstanceOf(TruncatedFileError);
    expect((err as Error).message).toContain('the header size says 50000000 bytes');
  });

  it('__metadata__ must be an object of strings', async () => {
    const err = await read(craft({ __metadata__: 'oops' as unknown as Record<string, string>, a: f32([4], 0, 16) }, 16));
    expect(err).toBeInstanceOf(CheckpointFormatError);
  });
});
