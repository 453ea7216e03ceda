// A load reads every tensor into one reused buffer (read-arena.ts), and passes over the tensors it does not
// use without keeping their bytes: both checkpoint readers give the same bytes as with fresh arrays.

import { describe, expect, it } from 'vitest';
import { ggmlType } from '../../src/model/weights/gguf/gguf-format';
import { openGguf } from '../../src/model/weights/gguf/gguf-reader';
import { writeGguf } from '../../src/model/weights/gguf/gguf-writer';
import { ReadArena } from '../../src/model/weights/read-arena';
import { openSafetensors } from '../../src/model/weights/safetensors';
import { writeSafetensors } from '../../src/model/weights/safetensors-writer';

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

/** Every tensor a reader yields, copied at the moment it is yielded (an arena's view changes after). */
async function readAll(tensors: AsyncIterable<{ info: { name: string }; bytes: Uint8Array }>) {
  const got = new Map<string, { bytes: Uint8Array; buffer: ArrayBufferLike }>();
  for await (const { info, bytes } of tensors) got.set(info.name, { bytes: bytes.slice(), buffer: bytes.buffer });
  return got;
}

describe('reading tensors into one arena', () => {
  const safetensors = writeSafetensors([
    { name: 'small', dtype: 'F32', shape: [3], data: seeded(3, 1) },
    { name: 'unused', dtype: 'BF16', shape: [64, 32], data: seeded(2048, 2) },
    { name: 'large', dtype: 'F16', shape: [40, 16], data: seeded(640, 3) },
    { name: 'last', dtype: 'BF16', shape: [5], data: seeded(5, 4) },
  ]);

  it('safetensors: the same bytes as fresh arrays, in one buffer, and skipped tensors never yielded', async () => {
    const fresh = await readAll((await openSafetensors(chunked(safetensors, 13), 'x.safetensors')).tensors);
    const arena = new ReadArena();
    const st = await openSafetensors(
      chunked(safetensors, 13),
      'x.safetensors',
      undefined,
      safetensors.length,
      arena.options((name) => name === 'unused'),
    );
    arena.reserve(Math.max(...['small', 'large', 'last'].map((n) => st.header.tensors.get(n)!).map((i) => i.end - i.begin)));
    const reused = await readAll(st.tensors);
    expect([...reused.keys()]).toEqual(['small', 'large', 'last']);
    for (const [name, t] of reused) expect(t.bytes).toEqual(fresh.get(name)!.bytes);
    expect(new Set([...reused.values()].map((t) => t.buffer)).size).toBe(1);
    expect(new Set([...fresh.values()].map((t) => t.buffer)).size).toBe(4);
  });

  it('GGUF: the same blocks as fresh arrays, in one buffer, and skipped tensors never yielded', async () => {
    const file = writeGguf(
      [{ key: 'general.architecture', type: 'string', value: 'llama' }],
      [
        { name: 'a', shape: [2, 64], type: ggmlType('Q8_0'), values: () => seeded(128, 5) },
        { name: 'b', shape: [3, 256], type: ggmlType('Q4_K'), values: () => seeded(768, 6) },
        { name: 'c', shape: [96], type: ggmlType('F32'), values: () => seeded(96, 7) },
      ],
    );
    const fresh = await readAll((await openGguf(chunked(file, 29), 'x.gguf')).tensors);
    const arena = new ReadArena();
    const opened = await openGguf(
      chunked(file, 29),
      'x.gguf',
      undefined,
      file.length,
      arena.options((n) => n === 'b'),
    );
    arena.reserve(Math.max(opened.header.tensors.get('a')!.sizeBytes, opened.header.tensors.get('c')!.sizeBytes));
    const reused = await readAll(opened.tensors);
    expect([...reused.keys()]).toEqual(['a', 'c']);
    for (const [name, t] of reused) expect(t.bytes).toEqual(fresh.get(name)!.bytes);
    expect(new Set([...reused.values()].map((t) => t.buffer)).size).toBe(1);
  });

  it('grows when a tensor is larger than the room reserved, and keeps the larger buffer', () => {
    const arena = new ReadArena();
    arena.reserve(16);
    const first = arena.take(8);
    const grown = arena.take(64);
    expect(grown.buffer).not.toBe(first.buffer);
    expect(arena.take(32).buffer).toBe(grown.buffer);
  });
});
