// The engine compiles the language model's pipelines while it loads (src/model/runner/gpu-warm-up.ts): on a fresh
// device, creating the engine reports phase 'compile' step by step, and the first requests (an image,
// greedy; then sampled) compile no further pipeline on the engine's device. The scratch sequence leaves
// the KV pool full and the answers equal to the goldens.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine';
import type { EngineProgress } from '../../src/engine/types';
import { warmUpSteps } from '../../src/model/runner/gpu-warm-up';
import type { GpuContext } from '../../src/gpu/context';
import { createNodeGpuContext } from '../../src/gpu/node';
import { NARROW_MAX_ROWS } from '../../src/kernels/matmul';
import { testEngine } from '../helpers/engine';
import { goldenManifest } from '../helpers/goldens';
import { ensureTinyModels } from '../helpers/tiny-models';

const SAMPLE = readFileSync(resolve(import.meta.dirname, '../../public/sample.png'));
// A fresh Uint8Array each time: a Node Buffer's slice() is a view, and the worker pool transfers it.
const ask = (extra: object = {}) => ({
  messages: [
    {
      role: 'user' as const,
      content: [
        { type: 'image' as const, image: new Uint8Array(SAMPLE) },
        { type: 'text' as const, text: 'Can you describe this image?' },
      ],
    },
  ],
  max_tokens: 3,
  ...extra,
});

describe('warm-up', () => {
  it('runs a prefill step wider than the decode matmul plan, a decode step, batched decode steps and a sampled one', () => {
    expect(warmUpSteps(128).map((s) => [s.name, s.numTokens])).toEqual([
      ['prefill', 2 * NARROW_MAX_ROWS],
      ['decode', 1],
      ['batch', 2],
      ['batch', 4],
      ['sampling', 1],
    ]);
    expect(warmUpSteps(4)[0].numTokens).toBe(4); // never wider than a step may be
    expect(warmUpSteps(2).map((s) => s.numTokens)).toEqual([2, 1, 2, 1]);
  });

  // A device of its own: on the suite's shared device earlier files have compiled these pipelines already.
  let gpu: GpuContext;
  let engine: Engine;
  const progress: EngineProgress[] = [];
  let pipelinesAfterCreate = 0;
  beforeAll(async () => {
    gpu = await createNodeGpuContext();
    // Media are encoded in worker threads (their own devices), so only the language model uses `gpu`.
    engine = await testEngine(gpu, `${ensureTinyModels()}/smolvlm-tiny`, {
      kvCacheTokens: 1024,
      maxTokensPerStep: 128,
      workers: true,
      onProgress: (p) => progress.push(p),
    });
    pipelinesAfterCreate = gpu.pipelines.size;
  });
  afterAll(() => {
    engine?.destroy();
    gpu?.destroy();
  });

  it('reports each compile step between the weight upload and ready', () => {
    const phases = progress.map((p) => p.phase);
    expect(phases.lastIndexOf('upload')).toBeLessThan(phases.indexOf('compile'));
    expect(phases.at(-1)).toBe('ready');
    expect(progress.filter((p) => p.phase === 'compile').map((p) => [p.step, p.done, p.total])).toEqual([
      ['prefill', 0, 5],
      ['decode', 1, 5],
      ['batch', 2, 5],
      ['batch', 3, 5],
      ['sampling', 4, 5],
      ['done', 5, 5],
    ]);
    expect(pipelinesAfterCreate).toBeGreaterThan(5);
  });

  it('leaves the KV pool full, and the first requests compile nothing and answer as the goldens', async () => {
    const s = engine.stats();
    expect(s.kv.numFreeBlocks).toBe(s.kv.numBlocks);
    const greedy = await engine.chat.completions.create(ask());
    expect(greedy.tessera.tokenIds).toEqual(goldenManifest().greedy['smolvlm-tiny'].tokens.slice(0, 3));
    await engine.chat.completions.create(ask({ temperature: 0.8, seed: 3 }));
    // Three at once: decode steps of 3 and 2 rows, one greedy head and sampled heads on several rows.
    await Promise.all([ask(), ask({ temperature: 0.8, seed: 4 }), ask({ max_tokens: 5 })].map((r) => engine.chat.completions.create(r)));
    expect(gpu.pipelines.size).toBe(pipelinesAfterCreate);
    const after = engine.stats();
    expect(after.kv.numFreeBlocks).toBe(after.kv.numBlocks);
  });
});
