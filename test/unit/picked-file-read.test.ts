// A picked file (FileListSource, a File's stream) is read chunk by chunk and given on as a byte stream
// (io/body-reader.ts readChunkwise): the safetensors reader's BYOB reads, small ones (the header) and ones
// far larger than a chunk (a tensor read into its own array), get exactly the file's bytes in order.

import { describe, expect, it } from 'vitest';
import { FileListSource } from '../../src/io/model-source';
import { byteReader } from '../../src/model/weights/byte-reader';

const truncated = (seen: number) => new Error(`cut at ${seen}`);

describe('a picked file read through FileListSource', () => {
  it('serves byte-stream reads of every size from its chunks, then ends', async () => {
    const bytes = new Uint8Array(5_000_003);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7 + (i >> 9)) & 0xff;
    const source = new FileListSource([new File([bytes], 'model.safetensors')]);
    const opened = (await source.openBytes('model.safetensors'))!;
    expect(opened.sizeBytes).toBe(bytes.length);
    const reader = byteReader(opened.stream);
    const sizes = [8, 100, 3_000_000, 1, 1_999_894];
    let at = 0;
    for (const n of sizes) {
      const into = n > 1 << 20 ? new Uint8Array(n) : undefined;
      const got = await reader.read(n, true, truncated, into);
      expect(got.byteLength).toBe(n);
      expect(Buffer.from(got).equals(bytes.subarray(at, at + n)), `bytes ${at} to ${at + n}`).toBe(true);
      at += n;
    }
    expect(reader.consumed).toBe(bytes.length);
    await expect(reader.read(1, true, truncated)).rejects.toThrow(`cut at ${bytes.length}`);
  });
});
