// A checkpoint from a URL is data, not code: a header cannot make Tessera allocate what the file does not
// hold, a sharded index cannot point outside the checkpoint, and NaN weights are refused by name.

import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { CheckpointFormatError, NonFiniteWeightError, TruncatedFileError } from '../../src/errors';
import { UrlSource } from '../../src/io/model-source';
import { NodeDirSource } from '../../src/io/model-source-node';
import { parseModelConfig } from '../../src/families/registry';
import { loadModel } from '../../src/families/load';
import { writeSafetensors } from '../../src/model/weights/safetensors-writer';
import { weightLayout } from '../../src/model/weight-layout';
import { REAL_CONFIG, microConfig, microSource, tensorsFor } from '../helpers/micro-checkpoint';
import { useGpu } from './gpu';

const gpu = useGpu();
const encode = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));

/** Counts the weight buffers created while `run` runs. */
async function countWeightBuffers(run: () => Promise<unknown>): Promise<{ result: unknown; weightBuffers: number }> {
  const createBuffer = vi.spyOn(gpu().device, 'createBuffer');
  try {
    const result = await run().catch((e: unknown) => e);
    return { result, weightBuffers: createBuffer.mock.calls.filter(([d]) => String(d.label).startsWith('weight:')).length };
  } finally {
    createBuffer.mockRestore();
  }
}

describe('safetensors header against the real file size', () => {
  it('a small header claiming the whole SmolVLM-256M fails fast, before any GPU buffer, with low RSS', async () => {
    // Every tensor of the real 256M checkpoint (BF16, ~0.5 GB of data), offsets contiguous, but the file is
    // the header alone: the loader must not allocate the model's GPU buffers (about 1 GB in f32) first.
    const layout = weightLayout(parseModelConfig(REAL_CONFIG));
    const header: Record<string, unknown> = {};
    let offset = 0;
    for (const t of layout.checkpoint) {
      const size = t.shape.reduce((a, b) => a * b, 1) * 2;
      header[t.name] = { dtype: 'BF16', shape: t.shape, data_offsets: [offset, offset + size] };
      offset += size;
    }
    const json = encode(header);
    const file = new Uint8Array(8 + json.byteLength);
    new DataView(file.buffer).setBigUint64(0, BigInt(json.byteLength), true);
    file.set(json, 8);
    expect(file.byteLength).toBeLessThan(64 * 1024);
    const rssBefore = process.memoryUsage().rss;
    const t0 = performance.now();
    const { result, weightBuffers } = await countWeightBuffers(() =>
      loadModel(gpu(), microSource(REAL_CONFIG, { 'model.safetensors': file }), { kvCacheTokens: 64, maxTokensPerStep: 16 }),
    );
    expect(result).toBeInstanceOf(TruncatedFileError);
    expect((result as Error).message).toContain(`needs ${8 + json.byteLength + offset} bytes but the file has ${file.byteLength}`);
    expect(weightBuffers).toBe(0);
    expect(performance.now() - t0).toBeLessThan(5000);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(100 * 2 ** 20);
  });
});

describe("a sharded index names only the checkpoint's own files", () => {
  const config = microConfig({ model_type: 'smolvlm', tie_word_embeddings: true });
  const tensors = tensorsFor(config);
  const shard = writeSafetensors(tensors);

  for (const outside of [
    'https://elsewhere.example/model.safetensors',
    '../../other-org/other-repo/resolve/main/model.safetensors',
    '/abs/model.safetensors',
  ]) {
    it(`UrlSource: ${outside} is refused before anything is fetched outside the base`, async () => {
      const base = 'https://huggingface.co/org/repo/resolve/main/';
      const weightMap = Object.fromEntries(tensors.map((t, i) => [t.name, i === 3 ? outside : 'model.safetensors']));
      const served: Record<string, Uint8Array> = {
        [`${base}config.json`]: encode(config),
        [`${base}model.safetensors.index.json`]: encode({ weight_map: weightMap }),
        [`${base}model.safetensors`]: shard,
      };
      const fetched: string[] = [];
      const fetchImpl = (async (url: string) => {
        fetched.push(url);
        const body = served[url];
        return body
          ? new Response(body as Uint8Array<ArrayBuffer>, { headers: { 'content-length': String(body.byteLength) } })
          : new Response('', { status: 404 });
      }) as unknown as typeof fetch;
      const err = await loadModel(gpu(), new UrlSource(base, { useCache: false, fetchImpl, listHub: false }), {
        kvCacheTokens: 64,
        maxTokensPerStep: 16,
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(CheckpointFormatError);
      expect((err as Error).message).toContain(`names the file ${JSON.stringify(outside)}`);
      expect(fetched.every((u) => u.startsWith(base))).toBe(true);
    });
  }

  it('NodeDirSource: ../ in the weight map is refused, though the file exists there', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tessera-escape-'));
    try {
      mkdirSync(join(root, 'ckpt'));
      writeFileSync(join(root, 'outside.safetensors'), shard);
      writeFileSync(join(root, 'ckpt', 'config.json'), JSON.stringify(config));
      const weightMap = Object.fromEntries(tensors.map((t) => [t.name, '../outside.safetensors']));
      writeFileSync(join(root, 'ckpt', 'model.safetensors.index.json'), JSON.stringify({ weight_map: weightMap }));
      const err = await loadModel(gpu(), new NodeDirSource(join(root, 'ckpt')), { kvCacheTokens: 64, maxTokensPerStep: 16 }).catch(
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(CheckpointFormatError);
      expect((err as Error).message).toContain('"../outside.safetensors"');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('non-finite weights', () => {
  for (const [dtype, bad] of [
    ['F32', NaN],
    ['BF16', Infinity],
    ['F16', -Infinity],
  ] as const) {
    it(`${dtype}: a ${bad} in a weight is a NonFiniteWeightError naming the tensor, and nothing stays allocated`, async () => {
      const config = microConfig();
      const tensors = tensorsFor(config, dtype);
      const target = tensors.find((t) => t.name === 'model.text_model.layers.0.mlp.down_proj.weight')!;
      target.data[7] = bad;
      target.data[9] = bad;
      const before = gpu().memory.stats().bytesLive;
      const err = await loadModel(gpu(), microSource(config, { 'model.safetensors': writeSafetensors(tensors) }), {
        kvCacheTokens: 64,
        maxTokensPerStep: 16,
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(NonFiniteWeightError);
      expect((err as NonFiniteWeightError).tensor).toBe('model.text_model.layers.0.mlp.down_proj.weight');
      expect((err as Error).message).toContain(`holds 2 non-finite values (the first, ${bad}, at element 7)`);
      expect(gpu().memory.stats().bytesLive).toBe(before);
    });
  }
});
