// The fault suite (short; the long run is `npm run soak`): mixed concurrent requests on the tiny model with
// cancellations and bad inputs among them. Every bad request fails alone with its named error, every good
// greedy request answers as it does alone, and afterwards GPU memory, KV blocks and encoder cache
// references are back where they were, round after round.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine';
import { testEngine } from '../helpers/engine';
import { KINDS, memoryFigures, mixImages, mixItems, runMix, type MixResult } from '../helpers/request-mix';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

const gpu = useGpu();
let engine: Engine;
let images: Uint8Array[];

beforeAll(async () => {
  engine = await testEngine(gpu(), `${ensureTinyModels()}/smolvlm-tiny`, { kvCacheTokens: 2048, maxTokensPerStep: 128, encoder: { maxBatchTiles: 16 } });
  images = await mixImages(3);
});
afterAll(() => engine?.destroy());

describe('fault suite', () => {
  it('mixed concurrent requests: each outcome as expected, memory flat from round to round', async () => {
    const reference = new Map<string, number[]>();
    const items = mixItems(KINDS.length * 2, images.length);
    const rounds: Array<{ results: MixResult[]; memory: ReturnType<typeof memoryFigures> }> = [];
    for (let round = 0; round < 2; round++) {
      const results = await runMix(engine, items, images, 4, reference);
      rounds.push({ results, memory: memoryFigures(engine) });
    }
    for (const { results, memory } of rounds) {
      expect(results.length).toBe(items.length);
      expect(results.filter((r) => r.mismatch).map((r) => r.mismatch)).toEqual([]);
      // Every request released what it held.
      expect(memory.kvFreeBlocks).toBe(memory.kvBlocks);
      expect(memory.cacheRefs).toBe(0);
    }
    // Round 2 ran the same requests (now cache hits): nothing more is held on the GPU than after round 1.
    expect(rounds[1].memory.gpuBytesLive).toBe(rounds[0].memory.gpuBytesLive);
    const s = engine.stats();
    expect(s.failedRequests).toBe(rounds.flatMap((r) => r.results).filter((r) => r.error).length);
  });
});
