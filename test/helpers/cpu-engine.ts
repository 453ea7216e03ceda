// The CPU-backend engine the test/cpu engine tests share: the tiny checkpoint on onnxruntime-node with the
// encoder in-process, created before a file's tests and destroyed after; and the check that a test left
// nothing running and every KV block free.

import { afterAll, beforeAll, expect } from 'vitest';
import { createEngine } from '../../src/engine/create-node';
import type { Engine } from '../../src/engine/engine';
import { ensureTinyModels } from './tiny-models';
import { TEST_ENGINE_STALL_MS, watchedEngine } from './watch-engine';

/** Registers the hooks; the returned function gives the engine inside tests. */
export function useCpuEngine(kvCacheTokens: number): () => Engine {
  let engine: Engine | undefined;
  beforeAll(async () => {
    engine = await watchedEngine('CPU engine smolvlm-tiny', (onProgress) =>
      createEngine({
        model: `${ensureTinyModels()}/smolvlm-tiny`,
        device: 'cpu',
        encoder: { mode: 'in-process' },
        kvCacheTokens,
        stallTimeoutMs: TEST_ENGINE_STALL_MS,
        onProgress,
      }),
    );
  });
  afterAll(() => engine?.destroy());
  return () => engine!;
}

export function expectIdle(engine: Engine): void {
  const s = engine.stats();
  expect(s.kv.numFreeBlocks).toBe(s.kv.numBlocks);
  expect(s.scheduler).toMatchObject({ numWaiting: 0, numRunning: 0 });
}
