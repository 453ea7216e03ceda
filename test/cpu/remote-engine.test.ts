// The remote engine (createRemoteEngine, Node) against tessera serve over loopback, both on the CPU
// backend with the tiny checkpoint: the images are encoded on the client and only embeddings travel (no
// image bytes in any request body), with the tokens the local engine gives; a second ask sends the same
// uuid alone; a server that refuses embeddings gets raw images with the same uuids and stats() says so;
// streaming and abort; the AI SDK's model over it; a server with another model is refused by name.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { generateText, streamText } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tesseraModel } from '../../src/ai-sdk';
import { createEngine } from '../../src/engine/create-node';
import type { Engine } from '../../src/engine/engine';
import type { ChatCompletionRequest } from '../../src/engine/types';
import { RemoteModelMismatchError, RemoteServerError } from '../../src/errors';
import { createRemoteEngine } from '../../src/remote/create-remote-node';
import type { RemoteEngine } from '../../src/remote/remote-engine';
import { type RunningServer, startServer } from '../../src/server/listen-node';
import { ensureTinyModels } from '../helpers/tiny-models';

const SAMPLE = readFileSync(resolve(import.meta.dirname, '../../public/sample.png'));
const PNG_BASE64 = SAMPLE.toString('base64').slice(0, 64);
const checkpoint = () => `${ensureTinyModels()}/smolvlm-tiny`;

let engine: Engine;
let server: RunningServer;
let remote: RemoteEngine;
const bodies: string[] = [];
const recording: typeof fetch = async (input, init) => {
  if (typeof init?.body === 'string') bodies.push(init.body);
  return fetch(input, init);
};

beforeAll(async () => {
  engine = await createEngine({ model: checkpoint(), device: 'cpu', encoder: { mode: 'in-process' }, media: { acceptEmbeddings: true } });
  server = await startServer({ engine, modelName: 'tiny', port: 0 });
  remote = await createRemoteEngine({
    baseURL: `${server.url}/v1`,
    model: 'tiny',
    checkpoint: checkpoint(),
    device: 'cpu',
    encoder: { mode: 'in-process' },
    fetch: recording,
  });
});
afterAll(async () => {
  remote?.destroy();
  await server?.close();
});

const ask = (text: string): ChatCompletionRequest & { stream?: false } => ({
  messages: [
    {
      role: 'user',
      content: [
        { type: 'image', image: SAMPLE },
        { type: 'text', text },
      ],
    },
  ],
  max_tokens: 10,
});

describe('the remote engine against tessera serve', () => {
  it('sends embeddings, never image bytes, and answers with the local engine tokens; a second ask sends the uuid alone', async () => {
    const local = await engine.chat.completions.create(ask('Can you describe this image?'));
    bodies.length = 0;
    const first = await remote.chat.completions.create(ask('Can you describe this image?'));
    expect(first.tessera.tokenIds).toEqual(local.tessera.tokenIds);
    expect(first.choices[0].message.content).toBe(local.choices[0].message.content);
    expect(bodies).toHaveLength(1);
    const sent = JSON.parse(bodies[0]);
    const part = sent.messages[0].content[0];
    expect(part.type).toBe('image_embeds');
    expect(typeof part.image_embeds).toBe('string');
    expect(bodies[0]).not.toContain(PNG_BASE64);
    expect(bodies[0]).not.toContain('image_url');
    expect(remote.stats()).toMatchObject({ mode: 'embeds', fallback: null, imageBytesSent: 0, parts: { embeds: 1, byUuid: 0, raw: 0 } });

    const second = await remote.chat.completions.create(ask('What colour is it?'));
    const again = JSON.parse(bodies[1]).messages[0].content[0];
    expect(again).toEqual({ type: 'image_embeds', image_embeds: null, uuid: part.uuid, tessera: part.tessera });
    expect(bodies[1].length).toBeLessThan(bodies[0].length / 10);
    expect(second.tessera.tokenIds).toEqual((await engine.chat.completions.create(ask('What colour is it?'))).tessera.tokenIds);
    expect(remote.stats().parts).toEqual({ embeds: 2, byUuid: 1, raw: 0 });
    expect(remote.stats().encoder.encodes).toBe(1); // encoded once on the client
  });

  it('streams, and an abort ends the stream and frees the server side', async () => {
    const abort = new AbortController();
    const stream = await remote.chat.completions.create(
      { ...ask('Tell me a long story.'), max_tokens: 500, stream: true },
      { signal: abort.signal },
    );
    let chunks = 0;
    for await (const _ of stream) if (++chunks === 3) abort.abort();
    expect(chunks).toBeLessThan(20);
    const t0 = performance.now();
    while (engine.stats().scheduler.numRunning > 0 && performance.now() - t0 < 5000) await new Promise((r) => setTimeout(r, 20));
    const s = engine.stats();
    expect(s.kv.numFreeBlocks).toBe(s.kv.numBlocks);
    const streamed = await remote.chat.completions.create({ ...ask('Can you describe this image?'), stream: true });
    let text = '';
    for await (const c of streamed) text += c.choices[0]?.delta.content ?? '';
    expect(text).toBe((await engine.chat.completions.create(ask('Can you describe this image?'))).choices[0].message.content);
  });

  it("as the AI SDK's model (tessera/ai-sdk): generateText and streamText answer with the local engine's text", async () => {
    const model = tesseraModel(remote);
    const messages = [
      {
        role: 'user' as const,
        content: [
          { type: 'image' as const, image: new Uint8Array(SAMPLE), mediaType: 'image/png' },
          { type: 'text' as const, text: 'Can you describe this image?' },
        ],
      },
    ];
    const local = await engine.chat.completions.create(ask('Can you describe this image?'));
    const generated = await generateText({ model, messages, maxOutputTokens: 10 });
    expect(generated.text).toBe(local.choices[0].message.content);
    expect(generated.usage.inputTokens).toBe(local.usage.prompt_tokens);
    let streamed = '';
    for await (const t of streamText({ model, messages, maxOutputTokens: 10 }).textStream) streamed += t;
    expect(streamed).toBe(local.choices[0].message.content);
  });

  it('falls back to raw images with the same uuid when the server refuses embeddings, and says so', async () => {
    const closed = await createEngine({ model: checkpoint(), device: 'cpu', encoder: { mode: 'in-process' } });
    const plain = await startServer({ engine: closed, modelName: 'tiny', port: 0 });
    const sent: string[] = [];
    const r = await createRemoteEngine({
      baseURL: `${plain.url}/v1`,
      model: 'tiny',
      checkpoint: checkpoint(),
      device: 'cpu',
      encoder: { mode: 'in-process' },
      fetch: async (input, init) => {
        if (typeof init?.body === 'string') sent.push(init.body);
        return fetch(input, init);
      },
    });
    try {
      const answer = await r.chat.completions.create(ask('Can you describe this image?'));
      expect(answer.tessera.tokenIds).toEqual((await engine.chat.completions.create(ask('Can you describe this image?'))).tessera.tokenIds);
      const s = r.stats();
      expect(s.mode).toBe('raw');
      expect(s.fallback).toMatch(/does not take precomputed embeddings/);
      expect(sent).toHaveLength(2);
      const embedsPart = JSON.parse(sent[0]).messages[0].content[0];
      const rawPart = JSON.parse(sent[1]).messages[0].content[0];
      expect(rawPart.type).toBe('image_url');
      expect(rawPart.image_url.url.startsWith('data:image/png;base64,')).toBe(true);
      expect(rawPart.uuid).toBe(embedsPart.uuid);
      expect(s.imageBytesSent).toBe(SAMPLE.length);
    } finally {
      r.destroy();
      await plain.close();
    }
  });

  it('sends float16 embeddings when asked: half the bytes, decoded and spliced by the server', async () => {
    const sent: string[] = [];
    const half = await createRemoteEngine({
      baseURL: `${server.url}/v1`,
      model: 'tiny',
      checkpoint: checkpoint(),
      device: 'cpu',
      encoder: { mode: 'in-process' },
      embeddingsDtype: 'float16',
      fetch: async (input, init) => {
        if (typeof init?.body === 'string') sent.push(init.body);
        return fetch(input, init);
      },
    });
    try {
      const r = await half.chat.completions.create({ ...ask('Can you describe this image?'), max_tokens: 3 });
      expect(r.usage.completion_tokens).toBe(3);
      expect(r.tessera.media[0].source).toBe('memory'); // the f32 values of the first test were cached under this uuid
      const f32Bytes = bodies[0].length;
      expect(sent[0].length / f32Bytes).toBeGreaterThan(0.45);
      expect(sent[0].length / f32Bytes).toBeLessThan(0.55);
    } finally {
      half.destroy();
    }
  });

  it('refuses a server without the model, or with another checkpoint, by name', async () => {
    const options = {
      baseURL: `${server.url}/v1`,
      checkpoint: checkpoint(),
      device: 'cpu' as const,
      encoder: { mode: 'in-process' as const },
    };
    await expect(createRemoteEngine({ ...options, model: 'other' })).rejects.toThrow(RemoteModelMismatchError);
    await expect(createRemoteEngine({ ...options, model: 'tiny', checkpoint: `${ensureTinyModels()}/smolvlm-tiny-hd8` })).rejects.toThrow(
      /hidden size|tokens per image tile/,
    );
    const wrongKey = await startServer({ engine, ownsEngine: false, modelName: 'tiny', port: 0, apiKey: 'k' });
    try {
      await expect(createRemoteEngine({ ...options, baseURL: `${wrongKey.url}/v1`, model: 'tiny', apiKey: 'nope' })).rejects.toThrow(
        RemoteServerError,
      );
    } finally {
      await wrongKey.close();
    }
  });
});
