// Device loss in Node (docs/design.md invariant 8): the device is destroyed while a request decodes; that request
// fails with DeviceLostError, and the next request recreates the device and the model and answers with
// the reference tokens, with the encoder cache kept. Runs on an engine with its own Dawn device (the
// other GPU tests share one, which must not be destroyed).

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createEngine } from '../../src/engine/create-node';
import type { Engine } from '../../src/engine/engine';
import type { ChatCompletionRequest } from '../../src/engine/types';
import { DeviceLostError } from '../../src/errors';
import { goldenManifest } from '../helpers/goldens';
import { ensureTinyModels } from '../helpers/tiny-models';

// A second Dawn device compiles every pipeline again: slow on a CPU-emulated GPU.
vi.setConfig({ testTimeout: 600_000, hookTimeout: 300_000 });

const SAMPLE = readFileSync(resolve(import.meta.dirname, '../../public/sample.png'));
const WANT = goldenManifest().greedy['smolvlm-tiny'].tokens;
const ask = (maxTokens: number): ChatCompletionRequest & { stream?: false } => ({
  messages: [
    {
      role: 'user',
      content: [
        { type: 'image', image: SAMPLE },
        { type: 'text', text: 'Can you describe this image?' },
      ],
    },
  ],
  max_tokens: maxTokens,
});

describe('device loss', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({
      model: `${ensureTinyModels()}/smolvlm-tiny`,
      device: 'webgpu',
      encoder: { mode: 'in-process' },
      kvCacheTokens: 2048,
      maxTokensPerStep: 128,
    });
  });
  afterAll(() => engine?.destroy());

  it('a device destroyed mid-decode fails that request; the next one recreates the device and answers', async () => {
    expect((await engine.chat.completions.create(ask(20))).tessera.tokenIds).toEqual(WANT);
    const firstGpu = engine.gpu;
    const steps = engine.stats().scheduler.numSteps;
    const doomed = engine.chat.completions.create(ask(60)).catch((e: unknown) => e);
    while (engine.stats().scheduler.numSteps < steps + 4) await new Promise((r) => setTimeout(r, 2));
    firstGpu.device.destroy();
    const err = await doomed;
    expect(err).toBeInstanceOf(DeviceLostError);
    expect((err as Error).message).toMatch(/recreates its device and model on the next request/);

    const after = await engine.chat.completions.create(ask(20));
    expect(after.tessera.tokenIds).toEqual(WANT);
    expect(after.tessera.media[0].source).toBe('memory'); // the encoder cache survived
    expect(engine.gpu).not.toBe(firstGpu);
    const s = engine.stats();
    expect(s.deviceLosses).toBe(1);
    expect(s.deviceRecoveries).toBe(1);
    expect(s.kv.numFreeBlocks).toBe(s.kv.numBlocks);
  });

  it('a device lost while idle is noticed by the next request, which answers', async () => {
    engine.gpu.device.destroy();
    await new Promise((r) => setTimeout(r, 50));
    expect((await engine.chat.completions.create(ask(4))).tessera.tokenIds).toEqual(WANT.slice(0, 4));
    expect(engine.stats().deviceRecoveries).toBe(2);
  });
});
