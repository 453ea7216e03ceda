// Untrusted request fields through the engine: each bad request fails alone with its named error (no
// silent greedy decoding, no ids [0, 0, 0, 0], no TypeError), and the next request answers correctly.

import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Engine } from '../../src/engine/engine';
import type { ChatCompletionRequest } from '../../src/engine/types';
import {
  InvalidMessageError,
  InvalidRequestError,
  PrivateNetworkRefusedError,
  RequestAbortedError,
  TooManyImagesError,
} from '../../src/errors';
import { testEngine } from '../helpers/engine';
import { goldenManifest } from '../helpers/goldens';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

const gpu = useGpu();
const SAMPLE = readFileSync(resolve(import.meta.dirname, '../../public/sample.png'));
const TOKENS = goldenManifest().greedy['smolvlm-tiny'].tokens;
let engine: Engine;
let server: Server;
let base: string;

const withImage = (extra: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest & { stream?: false } => ({
  messages: [
    {
      role: 'user',
      content: [
        { type: 'image', image: SAMPLE },
        { type: 'text', text: 'Can you describe this image?' },
      ],
    },
  ],
  max_tokens: 4,
  ...extra,
  stream: false,
});

async function expectHealthy(): Promise<void> {
  const r = await engine.chat.completions.create(withImage({ max_tokens: 2 }));
  expect(r.tessera.tokenIds).toEqual(TOKENS.slice(0, 2));
  const s = engine.stats();
  expect(s.kv.numFreeBlocks).toBe(s.kv.numBlocks);
}

beforeAll(async () => {
  engine = await testEngine(gpu(), `${ensureTinyModels()}/smolvlm-tiny`, {
    kvCacheTokens: 2048,
    maxTokensPerStep: 128,
    media: { maxImagesPerRequest: 4 },
  });
  server = createServer((_req, res) => void res.writeHead(200).write('x')); // a body that never ends
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  engine?.destroy();
  server.closeAllConnections();
  server.close();
});

describe('request fields are checked on every request', () => {
  it('top_p 0 after a sampled request is an InvalidRequestError, not ids [0, 0, 0, 0]', async () => {
    const sampled = await engine.chat.completions.create(withImage({ temperature: 0.9, top_p: 0.9, seed: 7 }));
    expect(sampled.tessera.tokenIds.length).toBe(4);
    for (const top_p of [0, -1]) {
      const err = await engine.chat.completions.create(withImage({ temperature: 0.9, top_p, seed: 7 })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidRequestError);
      expect((err as InvalidRequestError).field).toBe('top_p');
    }
    await expectHealthy();
  });

  it('temperature NaN or -1 is an InvalidRequestError, not silent greedy decoding', async () => {
    for (const temperature of [NaN, -1]) {
      const err = await engine.chat.completions.create(withImage({ temperature })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidRequestError);
    }
    const err = await engine.chat.completions.create(withImage({ temperature: 0.5, top_k: -1 })).catch((e: unknown) => e);
    expect((err as InvalidRequestError).field).toBe('top_k');
  });

  it('image parts of the wrong type and malformed data: URLs are InvalidMessageError', async () => {
    const bad: unknown[] = [
      { type: 'image', image: 42 },
      { type: 'image', image: 'not bytes' },
      { type: 'image_url', image_url: { url: 'data:image/png;base64,@@@' } },
      { type: 'image_url', image_url: { url: 'data:image/png,%E0%A4%A' } },
    ];
    for (const part of bad) {
      const req = {
        messages: [{ role: 'user', content: [part, { type: 'text', text: 'hi' }] }],
        max_tokens: 2,
      } as ChatCompletionRequest & { stream?: false };
      const err = await engine.chat.completions.create(req).catch((e: unknown) => e);
      expect(err, JSON.stringify(part)).toBeInstanceOf(InvalidMessageError);
    }
    await expectHealthy();
  });

  it('too many images are refused before any is decoded', async () => {
    const prepare = vi.spyOn(engine.media, 'prepare');
    const content = [
      ...Array.from({ length: 5 }, () => ({ type: 'image' as const, image: SAMPLE })),
      { type: 'text' as const, text: 'hi' },
    ];
    const err = await engine.chat.completions.create({ messages: [{ role: 'user', content }], max_tokens: 2 }).catch((e: unknown) => e);
    expect(prepare).not.toHaveBeenCalled();
    prepare.mockRestore();
    expect(err).toBeInstanceOf(TooManyImagesError);
  });

  it("an image_url fetch stops when the request's signal aborts", async () => {
    const abort = new AbortController();
    const req = withImage({ signal: abort.signal });
    req.messages = [
      {
        role: 'user',
        content: [
          { type: 'image_url', image_url: { url: `${base}/slow.png` } },
          { type: 'text', text: 'hi' },
        ],
      },
    ];
    const pending = engine.chat.completions.create(req).catch((e: unknown) => e);
    setTimeout(() => abort.abort(), 100);
    expect(await pending).toBeInstanceOf(RequestAbortedError);
    await expectHealthy();
  });

  it('media.blockPrivateNetwork refuses a loopback image_url', async () => {
    const guarded = await testEngine(gpu(), `${ensureTinyModels()}/smolvlm-tiny`, {
      kvCacheTokens: 256,
      maxTokensPerStep: 128,
      media: { blockPrivateNetwork: true },
    });
    try {
      const req = withImage();
      req.messages = [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: `${base}/x.png` } },
            { type: 'text', text: 'hi' },
          ],
        },
      ];
      expect(await guarded.chat.completions.create(req).catch((e: unknown) => e)).toBeInstanceOf(PrivateNetworkRefusedError);
    } finally {
      guarded.destroy();
    }
  });
});
