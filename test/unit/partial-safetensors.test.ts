// Reading part of a safetensors file by range requests (src/model/weights/partial-safetensors.ts) over the
// tiny checkpoint's model.safetensors served by a local HTTP server that honours Range: the vision tower and
// connector's tensors come out byte for byte as from the whole file, and the language model's bytes are
// never requested; a server that ignores Range, or tensors that are most of the file, fall back to a
// whole-file read.

import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UrlSource } from '../../src/io/model-source';
import { openPartialSafetensors } from '../../src/model/weights/partial-safetensors';
import { openSafetensors } from '../../src/model/weights/safetensors';
import { type RangeServer, startRangeServer } from '../helpers/range-server';
import { ensureTinyModels } from '../helpers/tiny-models';

let file: Buffer;
let server: RangeServer;
let base = '';

beforeAll(async () => {
  file = readFileSync(`${ensureTinyModels()}/smolvlm-tiny/model.safetensors`);
  server = await startRangeServer(ensureTinyModels());
  base = `${server.url}smolvlm-tiny/`;
});
afterAll(() => server?.close());

async function tensors(stream: AsyncIterable<Uint8Array>): Promise<Map<string, Buffer>> {
  const st = await openSafetensors(stream, 'model.safetensors');
  const out = new Map<string, Buffer>();
  for await (const { info, bytes } of st.tensors) out.set(info.name, Buffer.from(bytes));
  return out;
}

async function* whole(): AsyncGenerator<Uint8Array> {
  yield file;
}

describe('range reads of a safetensors file', () => {
  it('gives the vision tower and connector byte for byte without requesting the language model', async () => {
    const all = await tensors(whole());
    const names = [...all.keys()].filter((n) => n.startsWith('model.vision_model.') || n.startsWith('model.connector.'));
    expect(names.length).toBeGreaterThan(10);
    const source = new UrlSource(base, { listHub: false, useCache: false });
    server.served.length = 0;
    const progress: number[] = [];
    const opened = await openPartialSafetensors(source, 'model.safetensors', names, (loaded) => progress.push(loaded));
    expect(opened).toBeDefined();
    const part = await tensors(opened!.stream);
    expect([...part.keys()].sort()).toEqual([...names].sort());
    for (const n of names) expect(part.get(n)!.equals(all.get(n)!), n).toBe(true);
    const wantBytes = names.reduce((a, n) => a + all.get(n)!.length, 0);
    const sentBytes = server.served.reduce((a, s) => a + s.bytes, 0);
    expect(server.served.every((s) => s.range !== undefined)).toBe(true);
    expect(sentBytes).toBeLessThan(wantBytes + 2 * 2 ** 20 + 100_000); // the tensors, the header, gaps under 1 MiB
    expect(sentBytes).toBeLessThan(file.length * 0.8);
    expect(progress.at(-1)).toBeGreaterThanOrEqual(wantBytes);
    expect(opened!.version).toBe(`partial:"${file.length}"`);
  });

  it('falls back to a whole-file read when the server ignores Range, or the tensors are most of the file', async () => {
    const all = await tensors(whole());
    const source = new UrlSource(base, { listHub: false, useCache: false });
    server.honourRanges = false;
    try {
      expect(
        await openPartialSafetensors(source, 'model.safetensors', ['model.connector.modality_projection.proj.weight']),
      ).toBeUndefined();
    } finally {
      server.honourRanges = true;
    }
    expect(await openPartialSafetensors(source, 'model.safetensors', [...all.keys()])).toBeUndefined();
    expect(
      await openPartialSafetensors(new UrlSource(`${server.url}missing/`, { listHub: false, useCache: false }), 'x.safetensors', ['a']),
    ).toBeUndefined();
  });
});
