// The tiny checkpoint loads, encodes tiles and decodes tokens with the shapes its config implies.

import { beforeAll, describe, expect, it, vi } from 'vitest';
import { GpuBoundsError } from '../../src/errors';
import { generate } from '../../src/model/generate';
import { loadModel } from '../../src/families/load';
import type { LoadedModel } from '../../src/model/load';
import { NodeDirSource } from '../../src/io/model-source-node';
import { randomUniform } from '../../src/selfcheck/random';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

const gpu = useGpu();
let model: LoadedModel;

beforeAll(async () => {
  const dir = ensureTinyModels();
  model = await loadModel(gpu(), new NodeDirSource(`${dir}/smolvlm-tiny`), { kvCacheTokens: 1024, maxTokensPerStep: 128 });
  return () => model.destroy();
});

describe('tiny model smoke', () => {
  it('encodes 5 tiles into 5 x image_seq_len embeddings', async () => {
    const v = model.config.vision!;
    const pixels = randomUniform(5 * 3 * v.imageSize * v.imageSize, 1);
    const out = await model.vision!.encode({ pixels, numTiles: 5 }, { captureTowerOutput: true });
    expect(out.embeddings.shape).toEqual([5 * v.imageSeqLen, model.config.text.hiddenSize]);
    expect(out.towerOutput!.length).toBe(5 * v.patchesPerSide ** 2 * v.hiddenSize);
    const emb = await gpu().readF32(out.embeddings);
    expect(emb.every(Number.isFinite)).toBe(true);
    gpu().release(out.embeddings);
  });

  it('prefills in chunks, decodes, and frees its KV blocks', async () => {
    const ids = Uint32Array.from({ length: 300 }, (_, i) => (i * 97) % 49000);
    const tokens: number[] = [];
    const timings = { prefillMs: 0, numPrefillChunks: 0, decodeStepMs: [] as number[] };
    for await (const t of generate(
      model.runner,
      1,
      {
        promptIds: ids,
        placeholders: [],
        maxNewTokens: 6,
        stopIds: new Set(),
        chunkSize: 128,
      },
      timings,
    ))
      tokens.push(t);
    expect(tokens.length).toBe(6);
    expect(timings.numPrefillChunks).toBe(3);
    expect(timings.decodeStepMs.length).toBe(5);
    // (every step reads the kernels' out-of-range flags back with its ids and throws GpuBoundsError on any)
    expect(model.kv.stats().numFree).toBe(model.kv.stats().numBlocks);
  });
});

describe('decode path', () => {
  it('submits one command buffer per decode step, creates no GPU buffer, reads back only the sampled id', async () => {
    const ids = Uint32Array.from({ length: 40 }, (_, i) => (i * 31) % 49000);
    const req = { promptIds: ids, placeholders: [], maxNewTokens: 12, stopIds: new Set<number>(), chunkSize: 128 };
    for await (const _ of generate(model.runner, 2, req)); // warm-up: plans and pool buffers exist
    const device = gpu().device;
    const createBuffer = vi.spyOn(device, 'createBuffer');
    const submit = vi.spyOn(device.queue, 'submit');
    const readBack = vi.spyOn(gpu(), 'encodeAndRead');
    let counted = false;
    let buffers = 0;
    let submits = 0;
    let reads = 0;
    let tokens = 0;
    for await (const _ of generate(model.runner, 3, req)) {
      if (++tokens === 2) {
        // from here on every step is a decode step
        createBuffer.mockClear();
        submit.mockClear();
        readBack.mockClear();
        counted = true;
      }
    }
    if (counted) {
      buffers = createBuffer.mock.calls.length;
      submits = submit.mock.calls.length;
      reads = readBack.mock.calls.length;
    }
    createBuffer.mockRestore();
    submit.mockRestore();
    readBack.mockRestore();
    // 10 decode steps ran after the counters were cleared (tokens 3..12).
    expect(tokens).toBe(12);
    expect(buffers).toBe(0);
    expect(reads).toBe(10);
    // one command buffer per decode step: layers, head and the copy of the sampled id together
    expect(submits).toBe(10);
  });
});

describe('GPU error flags', () => {
  it('are read back with every step: an out-of-range KV slot raises GpuBoundsError with the count, and the next step is clean', async () => {
    const lm = model.lm;
    const bad = {
      ids: Uint32Array.of(1, 2, 3),
      tokenSeq: new Uint32Array(3),
      positions: Uint32Array.of(0, 1, 2),
      slots: Uint32Array.of(0, lm.kv.numSlots + 7, 2), // one slot past the cache
      blockTables: new Uint32Array(lm.maxBlocksPerSeq),
      numSeqs: 1,
      headRows: Uint32Array.of(2),
      sampling: [{ temperature: 0, topK: 0, topP: 1, seed: 0, step: 0 }],
    };
    const err = await lm.step(bad).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GpuBoundsError);
    const flags = (err as GpuBoundsError).flags;
    expect(flags).toEqual([{ kernel: 'kv-write', count: model.config.text.numLayers, maxIndex: lm.kv.numSlots + 7 }]);
    const ok = await lm.step({ ...bad, slots: Uint32Array.of(0, 1, 2) });
    expect(ok.ids.length).toBe(1);
  });
});
