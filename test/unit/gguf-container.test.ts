// The GGUF writer's files read back the same through Tessera's streaming reader and through an
// independent parser (@huggingface/gguf): metadata of every value type, tensor names, ggml types, shapes
// and offsets. Each block type's values round-trip within its quantization step.

import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gguf } from '@huggingface/gguf';
import { describe, expect, it } from 'vitest';
import { dequantizeGgml } from '../../src/model/weights/gguf/gguf-blocks';
import { type GgmlTypeName, type GgufEntry, ggmlType } from '../../src/model/weights/gguf/gguf-format';
import { openGguf } from '../../src/model/weights/gguf/gguf-reader';
import { ggufChunks, writeGguf } from '../../src/model/weights/gguf/gguf-writer';

function seeded(n: number, seed: number, scale = 1): Float32Array {
  let s = seed >>> 0;
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    out[i] = ((s / 2 ** 32) * 2 - 1) * scale;
  }
  return out;
}

const TYPES: GgmlTypeName[] = ['F32', 'F16', 'BF16', 'Q8_0', 'Q4_0', 'Q4_1', 'Q5_0', 'Q5_1', 'Q4_K', 'Q5_K', 'Q6_K'];

const ENTRIES: GgufEntry[] = [
  { key: 'general.architecture', type: 'string', value: 'llama' },
  { key: 'general.name', type: 'string', value: 'tiny ✓ unicode' },
  { key: 'test.u8', type: 'u8', value: 200 },
  { key: 'test.i8', type: 'i8', value: -100 },
  { key: 'test.u16', type: 'u16', value: 60000 },
  { key: 'test.i16', type: 'i16', value: -30000 },
  { key: 'test.u32', type: 'u32', value: 4000000000 },
  { key: 'test.i32', type: 'i32', value: -2000000000 },
  { key: 'test.f32', type: 'f32', value: 1e-5 },
  { key: 'test.bool', type: 'bool', value: true },
  { key: 'test.u64', type: 'u64', value: 2n ** 60n },
  { key: 'test.i64', type: 'i64', value: -5n },
  { key: 'test.f64', type: 'f64', value: Math.PI },
  { key: 'test.tokens', type: 'array', itemType: 'string', value: ['<s>', 'Ġhello', '', '\n'] },
  { key: 'test.sections', type: 'array', itemType: 'i32', value: [16, 24, 24, 0] },
];

const TENSORS = TYPES.map((name, i) => ({
  name: `t.${name.toLowerCase()}`,
  shape: name.endsWith('_K') ? [3, 512] : i % 2 ? [2, 3, 64] : [96],
  type: ggmlType(name),
  values: () => seeded(name.endsWith('_K') ? 1536 : i % 2 ? 384 : 96, 7 + i, 0.5),
}));

async function* chunked(bytes: Uint8Array, size: number) {
  for (let o = 0; o < bytes.length; o += size) yield bytes.slice(o, o + size);
}

describe('GGUF container', () => {
  const file = writeGguf(ENTRIES, TENSORS);

  it('reads back its metadata, tensor types and shapes through the streaming reader, in 7-byte chunks', async () => {
    const opened = await openGguf(chunked(file, 7), 'tiny.gguf', undefined, file.length);
    const m = opened.header.metadata;
    expect(m.get('general.name')).toBe('tiny ✓ unicode');
    expect(m.get('test.u32')).toBe(4000000000);
    expect(m.get('test.i32')).toBe(-2000000000);
    expect(m.get('test.u64')).toBe(2n ** 60n);
    expect(m.get('test.i64')).toBe(-5);
    expect(m.get('test.f32')).toBeCloseTo(1e-5, 10);
    expect(m.get('test.tokens')).toEqual(['<s>', 'Ġhello', '', '\n']);
    expect(m.get('test.sections')).toEqual([16, 24, 24, 0]);
    const seen: string[] = [];
    for await (const { info, bytes } of opened.tensors) {
      const t = TENSORS.find((x) => x.name === info.name)!;
      expect(info.shape).toEqual(t.shape);
      expect(info.type.name).toBe(t.type.name);
      expect(bytes.length).toBe(info.sizeBytes);
      seen.push(info.name);
    }
    expect(seen).toEqual(TENSORS.map((t) => t.name));
    expect(opened.header.fileBytes).toBe(file.length);
  });

  it('is read the same by @huggingface/gguf (an independent parser)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tessera-gguf-'));
    const path = join(dir, 'tiny.gguf');
    writeFileSync(path, file);
    const parsed = await gguf(path, { allowLocalFile: true });
    const ours = (await openGguf(chunked(file, 4096), 'tiny.gguf')).header;
    expect(parsed.metadata.version).toBe(3);
    for (const e of ENTRIES) {
      const theirs = (parsed.metadata as Record<string, unknown>)[e.key];
      const mine = ours.metadata.get(e.key);
      if (e.type === 'u64' || e.type === 'i64') expect(BigInt(theirs as bigint)).toBe(BigInt(mine as bigint));
      else if (e.type === 'f32') expect(theirs).toBeCloseTo(mine as number, 12);
      else expect(theirs).toEqual(mine);
    }
    expect(Number(parsed.tensorDataOffset)).toBe(ours.dataOffset);
    expect(parsed.tensorInfos.map((t) => [t.name, t.dtype, t.shape.map(Number), Number(t.offset)])).toEqual(
      [...ours.tensors.values()].map((t) => [t.name, t.type.code, t.ne, t.offset]),
    );
  });

  it.each(TYPES)('%s blocks hold the written values within the type step', async (name) => {
    const t = TENSORS.find((x) => x.type.name === name)!;
    const values = t.values();
    const opened = await openGguf(chunked(file, 1 << 16), 'tiny.gguf');
    let got: Float64Array | undefined;
    for await (const { info, bytes } of opened.tensors) if (info.name === t.name) got = dequantizeGgml(info.type, bytes, values.length);
    const amax = Math.max(...values.map(Math.abs));
    // The largest error each encoding allows, relative to the largest |value|: half a step, or a whole
    // step for the symmetric types whose most negative level has no positive twin (Q4_0: -8..7), plus
    // f16 scale rounding; K-quants round their group steps to 6-bit multiples of an f16 super-scale.
    const bound: Record<GgmlTypeName, number> = {
      F32: 0,
      F16: 2 ** -11,
      BF16: 2 ** -8,
      Q8_0: 0.51 / 127,
      Q4_0: 1 / 8,
      Q4_1: 1 / 15,
      Q5_0: 1 / 16,
      Q5_1: 1 / 31,
      Q4_K: 0.1,
      Q5_K: 0.05,
      Q6_K: 1 / 30,
    };
    let worst = 0;
    for (let i = 0; i < values.length; i++) worst = Math.max(worst, Math.abs(got![i] - values[i]));
    expect(worst).toBeLessThanOrEqual(amax * bound[name] * 1.001 + 1e-7);
  });

  it('streams the writer output one tensor at a time', () => {
    const chunks = [...ggufChunks(ENTRIES, TENSORS)];
    expect(chunks.length).toBeGreaterThan(TENSORS.length);
    expect(chunks.reduce((a, c) => a + c.length, 0)).toBe(file.length);
  });

  it('names what is wrong with a file that is not GGUF, cut short, or of an unread type', async () => {
    await expect(openGguf(chunked(new Uint8Array(64), 64), 'x.gguf')).rejects.toThrow(/x\.gguf is not a GGUF file/);
    await expect(openGguf(chunked(file.slice(0, 40), 64), 'x.gguf')).rejects.toMatchObject({ name: 'TruncatedFileError' });
    const cut = await openGguf(chunked(file.slice(0, file.length - 10), 4096), 'x.gguf');
    await expect(
      (async () => {
        for await (const _ of cut.tensors);
      })(),
    ).rejects.toThrow(/is cut/);
    const iq = writeGguf(
      [],
      [
        { name: 'w', shape: [32], type: { name: 'IQ4_NL', code: 20, blockValues: 32, blockBytes: 18 }, values: () => new Float32Array(32) },
      ].map((t) => ({ ...t, type: ggmlType('Q4_0') })),
    );
    // Patch the tensor's type code to IQ4_NL (20), which Tessera does not read.
    const view = new DataView(iq.buffer);
    const typeAt = 4 + 4 + 8 + 8 + (8 + 1) + 4 + 8;
    expect(view.getUint32(typeAt, true)).toBe(2);
    view.setUint32(typeAt, 20, true);
    await expect(openGguf(chunked(iq, 4096), 'iq.gguf')).rejects.toThrow(/ggml type 20, which Tessera does not read/);
  });
});
