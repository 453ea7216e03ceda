// Device loss in Node (docs/design.md invariant 8): the device is destroyed while a request decodes (through
// tessera serve: its stream ends with a device_lost error event, the server answers 503 until the engine
// has recreated the device and the model), and the next request answers with the reference tokens, with
// the encoder cache kept. Runs on an engine with its own Dawn device (the
// other GPU tests share one, which must not be destroyed).

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createEngine } from '../../src/engine/create-node';
import type { Engine } from '../../src/engine/engine';
import type { ChatCompletion, ChatCompletionRequest } from '../../src/engine/types';
import { startServer } from '../../src/server/listen-node';
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

  it('a device destroyed mid-decode fails that request (tessera serve: an error event ends its stream); 503 with Retry-After until the device is back; then it answers, the encoder cache kept', async () => {
    expect((await engine.chat.completions.create(ask(20))).tessera.tokenIds).toEqual(WANT);
    const firstGpu = engine.gpu;
    const server = await startServer({ engine, ownsEngine: false, modelName: 'tiny', port: 0 });
    try {
      const post = (body: object) =>
        fetch(`${server.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
      const image = `data:image/png;base64,${SAMPLE.toString('base64')}`;
      const request = {
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image_url', image_url: { url: image } },
              { type: 'text', text: 'Can you describe this image?' },
            ],
          },
        ],
      };
      const stream = await post({ ...request, max_tokens: 60, stream: true });
      expect(stream.status).toBe(200);
      const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
      let text = '';
      while (text.split('\n\n').length - 1 < 4) text += (await reader.read()).value ?? '';
      firstGpu.device.destroy();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += value;
      }
      const events = text.trim().split('\n\n');
      expect(events.at(-1)).toBe('data: [DONE]');
      const error = JSON.parse(events.at(-2)!.slice(6)) as { error: { code: string; type: string; message: string } };
      expect(error.error).toMatchObject({ code: 'device_lost', type: 'service_unavailable_error' });
      expect(error.error.message).toMatch(/recreates its device and model on the next request/);

      const health = await fetch(`${server.url}/health`);
      expect(health.status).toBe(503);
      expect(Number(health.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      const refused = await post({ ...request, max_tokens: 4 });
      expect(refused.status).toBe(503);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('engine_unavailable');
      while ((await fetch(`${server.url}/health`)).status !== 200) await new Promise((r) => setTimeout(r, 100));

      const after = (await (await post({ ...request, max_tokens: 20 })).json()) as ChatCompletion;
      expect(after.tessera.tokenIds).toEqual(WANT);
      expect(after.tessera.media[0].source).toBe('memory'); // the encoder cache survived
    } finally {
      await server.close();
    }
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
