// The tiny checkpoint loads, encodes tiles and decodes tokens with the shapes its config implies.

import { beforeAll, describe, expect, it } from 'vitest';
import { generate } from '../../src/model/generate';
import { loadModel, type LoadedModel } from '../../src/model/load';
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
    const v = model.config.vision;
    const pixels = randomUniform(5 * 3 * v.imageSize * v.imageSize, 1);
    const out = await model.vision.encode({ pixels, numTiles: 5 }, { captureTowerOutput: true });
    expect(out.embeddings.shape).toEqual([5 * model.config.imageSeqLen, model.config.text.hiddenSize]);
    expect(out.towerOutput!.length).toBe(5 * v.patchesPerSide ** 2 * v.hiddenSize);
    const emb = await gpu().readF32(out.embeddings);
    expect(emb.every(Number.isFinite)).toBe(true);
    gpu().release(out.embeddings);
  });

  it('prefills in chunks, decodes, and frees its KV blocks', async () => {
    const ids = Uint32Array.from({ length: 300 }, (_, i) => (i * 97) % 49000);
    const tokens: number[] = [];
    const timings = { prefillMs: 0, numPrefillChunks: 0, decodeStepMs: [] as number[] };
    for await (const t of generate(model.lm, model.kv, 1, {
      promptIds: ids,
      placeholders: [],
      maxNewTokens: 6,
      stopIds: new Set(),
      chunkSize: 128,
    }, timings)) tokens.push(t);
    expect(tokens.length).toBe(6);
    expect(timings.numPrefillChunks).toBe(3);
    expect(timings.decodeStepMs.length).toBe(5);
    expect(model.kv.stats().numFreeBlocks).toBe(model.kv.stats().numBlocks);
    expect(await model.lm.readErrorFlags()).toEqual({
      gatherErrors: [0, 0], ropeErrors: [0, 0], kvErrors: [0, 0], spliceErrors: [0, 0], lastErrors: [0, 0],
    });
  });
});
