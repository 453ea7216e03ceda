// A load reads every tensor into one reused buffer (read-arena.ts), and passes over the tensors it does not
// use without keeping their bytes: both checkpoint readers give the same bytes as with fresh arrays, from
// chunks (a Node file stream) and from a byte stream read into the arena (a fetch or Cache API body).

import { describe, expect, it } from 'vitest';
import { ggmlType } from '../../src/model/weights/gguf/gguf-format';
import { openGguf } from '../../src/model/weights/gguf/gguf-reader';
import { writeGguf } from '../../src/model/weights/gguf/gguf-writer';
import { ReadArena } from '../../src/model/weights/read-arena';
import { openSafetensors } from '../../src/model/weights/safetensors';
import { writeSafetensors } from '../../src/model/weights/safetensors-writer';
import { iterateStream } from '../../src/io/model-source';

function seeded(n: number, seed: number): Float32Array {
  let s = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = (s / 2 ** 32) * 2 - 1;
  }
  return out;
}

async function* chunked(bytes: Uint8Array, size: number) {
  for (let o = 0; o < bytes.length; o += size) yield bytes.slice(o, o + size);
}

/** Reads a byte stream answered in an array of the reader's own (a BYOB request), all streams together. */
let byobReads = 0;

/** A byte stream (as a fetch or Cache API body is) that answers each read with at most `size` bytes. */
function byteStream(bytes: Uint8Array, size: number): ReadableStream<Uint8Array> {
  let o = 0;
  return new ReadableStream({
    type: 'bytes',
    pull(controller) {
      const request = controller.byobRequest;
      if (o >= bytes.length) {
        controller.close();
        request?.respond(0);
        return;
      }
      if (!request?.view) {
        controller.enqueue(bytes.slice(o, (o += size)));
        return;
      }
      const view = new Uint8Array(request.view.buffer, request.view.byteOffset, request.view.byteLength);
      const k = Math.min(size, view.byteLength, bytes.length - o);
      view.set(bytes.subarray(o, o + k));
      o += k;
      byobReads++;
      request.respond(k);
    },
  });
}

/** The file as each kind of source: chunks to copy from, or a byte stream read into the reader's arrays. */
const SOURCES = [
  { name: 'chunks', open: (bytes: Uint8Array) => chunked(bytes, 1021) },
  { name: 'byte stream', open: (bytes: Uint8Array) => iterateStream(byteStream(bytes, 100_003)) },
];

/** Every tensor a reader yields, copied at the moment it is yielded (an arena's view changes after). */
async function readAll(tensors: AsyncIterable<{ info: { name: string }; bytes: Uint8Array }>) {
  const got = new Map<string, { bytes: Uint8Array; buffer: ArrayBufferLike; bufferBytes: number }>();
  for await (const { info, bytes } of tensors)
    got.set(info.name, { bytes: bytes.slice(), buffer: bytes.buffer, bufferBytes: bytes.buffer.byteLength });
  return got;
}

describe.each(SOURCES)('reading tensors into one arena, from $name', ({ name: kind, open }) => {
  // 'large' (1.6 MB) is over the byte reader's 1 MiB buffer: a byte stream reads it straight into the arena.
  const safetensors = writeSafetensors([
    { name: 'small', dtype: 'F32', shape: [3], data: seeded(3, 1) },
    { name: 'unused', dtype: 'BF16', shape: [64, 32], data: seeded(2048, 2) },
    { name: 'large', dtype: 'F32', shape: [400, 1000], data: seeded(400_000, 3) },
    { name: 'last', dtype: 'BF16', shape: [5], data: seeded(5, 4) },
  ]);

  it('safetensors: the same bytes as fresh arrays, in the arena, and skipped tensors never yielded', async () => {
    const fresh = await readAll((await openSafetensors(chunked(safetensors, 4096), 'x.safetensors')).tensors);
    const arena = new ReadArena();
    const st = await openSafetensors(
      open(safetensors),
      'x.safetensors',
      undefined,
      safetensors.length,
      arena.options((name) => name === 'unused'),
    );
    const largest = Math.max(...['small', 'large', 'last'].map((n) => st.header.tensors.get(n)!).map((i) => i.end - i.begin));
    arena.reserve(largest);
    const reused = await readAll(st.tensors);
    expect([...reused.keys()]).toEqual(['small', 'large', 'last']);
    for (const [name, t] of reused) expect(Buffer.compare(t.bytes, fresh.get(name)!.bytes), name).toBe(0);
    // Views of the arena: its size, not each tensor's. A byte stream moves the arena's memory to a new
    // ArrayBuffer on every read; chunks are copied into the one the arena allocated.
    for (const t of reused.values()) expect(t.bufferBytes).toBe(largest);
    if (kind === 'chunks') expect(new Set([...reused.values()].map((t) => t.buffer)).size).toBe(1);
    else expect(byobReads).toBeGreaterThan(safetensors.length / 100_003 - 1);
  });

  it('GGUF: the same blocks as fresh arrays, in the arena, and skipped tensors never yielded', async () => {
    const file = writeGguf(
      [{ key: 'general.architecture', type: 'string', value: 'llama' }],
      [
        { name: 'a', shape: [2, 64], type: ggmlType('Q8_0'), values: () => seeded(128, 5) },
        { name: 'b', shape: [3, 256], type: ggmlType('Q4_K'), values: () => seeded(768, 6) },
        { name: 'c', shape: [1024, 512], type: ggmlType('Q8_0'), values: () => seeded(524_288, 7) },
        { name: 'd', shape: [96], type: ggmlType('F32'), values: () => seeded(96, 8) },
      ],
    );
    const fresh = await readAll((await openGguf(chunked(file, 4096), 'x.gguf')).tensors);
    const arena = new ReadArena();
    const opened = await openGguf(
      open(file),
      'x.gguf',
      undefined,
      file.length,
      arena.options((n) => n === 'b'),
    );
    const largest = Math.max(...['a', 'c', 'd'].map((n) => opened.header.tensors.get(n)!.sizeBytes));
    arena.reserve(largest);
    const reused = await readAll(opened.tensors);
    expect([...reused.keys()]).toEqual(['a', 'c', 'd']);
    for (const [name, t] of reused) expect(Buffer.compare(t.bytes, fresh.get(name)!.bytes), name).toBe(0);
    for (const t of reused.values()) expect(t.bufferBytes).toBe(largest);
  });

  it('a file cut inside a tensor is TruncatedFileError naming it', async () => {
    const cut = safetensors.slice(0, safetensors.length - 500_000);
    const st = await openSafetensors(open(cut), 'x.safetensors', undefined, undefined, new ReadArena().options());
    await expect(readAll(st.tensors)).rejects.toThrow(/tensor 'large' is cut/);
  });
});

describe('ReadArena', () => {
  it('grows when a tensor is larger than the room reserved, and keeps the larger buffer', () => {
    const arena = new ReadArena();
    arena.reserve(16);
    const first = arena.take(8);
    const grown = arena.take(64);
    expect(grown.buffer).not.toBe(first.buffer);
    expect(arena.take(32).buffer).toBe(grown.buffer);
  });
});
