// A Qwen-VL image's embeddings outside a request, on the CPU backend with each tiny Qwen checkpoint:
// engine.imageEmbeddings() gives the rows in vLLM's layout ([tokens, hidden · (1 + DeepStack levels)]) with
// the patch grid; sent back as vLLM's dictionary { image_embeds, image_grid_thw } they answer with
// test/reference/qwen_pipeline.py's float64 tokens, as the image does; by uuid alone (tessera.grid_thw) from
// the caches; the same rows under another grid are another image (neither cache answers with the first);
// wrong grids and shapes are refused by name. Then the remote engine against tessera serve: embeddings and
// their grids travel, never the image, with the reference tokens.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/create-node';
import type { Engine } from '../../src/engine/engine';
import type { ChatCompletionRequest, ChatContentPart } from '../../src/engine/types';
import { EmbeddingsNotCachedError, EmbeddingsShapeError, InvalidMessageError } from '../../src/errors';
import { decodeTorchTensor, encodeTorchTensor } from '../../src/protocol/torch-tensor';
import { createRemoteEngine } from '../../src/remote/create-remote-node';
import type { RemoteEngine } from '../../src/remote/remote-engine';
import { type RunningServer, startServer } from '../../src/server/listen-node';
import { qwenPipelineGoldens } from '../helpers/goldens';
import { ensureTinyModels } from '../helpers/tiny-models';

const { input, golden } = qwenPipelineGoldens();
/** <|image_pad|> in the Qwen2 vocabulary. */
const IMAGE_PAD = 151655;
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

/** The case's image bytes and text (the one-image cases of qwen-pipeline-input.json). */
function caseParts(id: string): { image: Uint8Array; text: string } {
  const spec = input.cases.find((c) => c.id === id)!;
  return {
    image: new Uint8Array(readFileSync(resolve(spec.content.find((p) => p.image)!.image!))),
    text: spec.content.find((p) => p.text)!.text!,
  };
}

const ask = (part: ChatContentPart, text: string, max_tokens: number): ChatCompletionRequest & { stream?: false } => ({
  messages: [{ role: 'user', content: [part, { type: 'text', text }] }],
  max_tokens,
});

describe.each(golden.models.map((m) => [m.checkpoint, m] as const))('%s: image_embeds', (name, want) => {
  const ref = (id: string) => want.cases.find((c) => c.id === id)!;
  const prompt = (id: string) => input.models.find((m) => m.checkpoint === name)!.cases.find((c) => c.id === id)!;
  const model = () => `${ensureTinyModels()}/${name}`;
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({
      model: model(),
      device: 'cpu',
      encoder: { mode: 'in-process' },
      media: { acceptEmbeddings: true },
      kvCacheTokens: 2048,
    });
  });
  afterAll(() => engine?.destroy());

  it.each(['sample', 'tall'])(
    '%s: the rows of engine.imageEmbeddings() as vLLM sends them answer the reference tokens; then by uuid alone',
    async (id) => {
      const { image, text } = caseParts(id);
      const tokens = ref(id).tokens;
      const e = await engine.imageEmbeddings(image);
      const { hiddenSize, deepstackLevels } = engine.media.info;
      const [t, h, w] = e.gridThw!;
      expect([t, h, w]).toEqual([prompt(id).grids[0].t, prompt(id).grids[0].h, prompt(id).grids[0].w]);
      expect(e.shape).toEqual([(h * w) / 4, hiddenSize * (1 + deepstackLevels)]);
      expect(e.data.length).toBe(e.shape[0] * e.shape[1]);

      const grid = base64(encodeTorchTensor(Float32Array.from(e.gridThw!), [1, 3], 'int64'));
      const uuid = `${name}-${id}`;
      const given = await engine.chat.completions.create(
        ask(
          { type: 'image_embeds', image_embeds: { image_embeds: base64(encodeTorchTensor(e.data, e.shape)), image_grid_thw: grid }, uuid },
          text,
          tokens.length,
        ),
      );
      expect(given.tessera.tokenIds).toEqual(tokens);
      expect(given.tessera.media[0]).toMatchObject({ source: 'given', grid: prompt(id).grids[0] });
      expect(given.usage.prompt_tokens).toBe(prompt(id).ids.length);

      const byUuid = await engine.chat.completions.create(
        ask({ type: 'image_embeds', image_embeds: null, uuid, tessera: { grid_thw: [t, h, w] } }, text, tokens.length),
      );
      expect(byUuid.tessera.tokenIds).toEqual(tokens);
      // The prefix cache took the image's tokens too (they sit after the first image pad).
      expect(byUuid.tessera.cachedTokens).toBeGreaterThan(prompt(id).ids.indexOf(IMAGE_PAD));

      // The tensor itself, with the grid as an array, is the same image.
      const direct = await engine.chat.completions.create(
        ask(
          { type: 'image_embeds', image_embeds: { image_embeds: { data: e.data, shape: e.shape }, image_grid_thw: [[t, h, w]] } },
          text,
          tokens.length,
        ),
      );
      expect(direct.tessera.tokenIds).toEqual(tokens);
    },
  );

  it('the same rows under the transposed grid are another image: no cache answers with the first', async () => {
    const { image, text } = caseParts('tall');
    const e = await engine.imageEmbeddings(image);
    const [t, h, w] = e.gridThw!;
    expect(h).not.toBe(w);
    const uuid = `${name}-transposed`;
    const rows = base64(encodeTorchTensor(e.data, e.shape));
    const first = await engine.chat.completions.create(
      ask({ type: 'image_embeds', image_embeds: { image_embeds: rows, image_grid_thw: [t, h, w] }, uuid }, text, 2),
    );
    const other = await engine.chat.completions.create(
      ask({ type: 'image_embeds', image_embeds: { image_embeds: rows, image_grid_thw: [t, w, h] }, uuid }, text, 2),
    );
    expect(other.tessera.media[0].key).not.toBe(first.tessera.media[0].key);
    expect(other.tessera.media[0].source).toBe('given');
    expect(other.tessera.media[0].grid).toEqual({ t, h: w, w: h });
    expect(other.tessera.cachedTokens).toBeLessThanOrEqual(prompt('tall').ids.indexOf(IMAGE_PAD));
    // By uuid, the grid picks which of the two is meant; a grid never sent is not cached.
    const byUuid = await engine.chat.completions.create(
      ask({ type: 'image_embeds', image_embeds: null, uuid, tessera: { grid_thw: [t, w, h] } }, text, 2),
    );
    expect(byUuid.tessera.media[0].key).toBe(other.tessera.media[0].key);
    await expect(
      engine.chat.completions.create(
        ask({ type: 'image_embeds', image_embeds: null, uuid, tessera: { grid_thw: [t, h * 2, w] } }, text, 2),
      ),
    ).rejects.toBeInstanceOf(EmbeddingsNotCachedError);
  });

  it('refuses a part without a patch grid, a grid that is not an image’s, and rows of the wrong shape by name, and answers the next request', async () => {
    const { image, text } = caseParts('sample');
    const e = await engine.imageEmbeddings(image);
    const [t, h, w] = e.gridThw!;
    const rows = base64(encodeTorchTensor(e.data, e.shape));
    const send = (image_embeds: unknown, extra: object = {}) =>
      engine.chat.completions.create(ask({ type: 'image_embeds', image_embeds, ...extra } as ChatContentPart, text, 2));
    await expect(send(rows)).rejects.toThrow(/has no patch grid: a qwen.* image's embeddings go as vLLM's dictionary/);
    await expect(send({ image_embeds: rows })).rejects.toThrow(/dictionary without image_grid_thw/);
    await expect(send({ image_embeds: rows, image_grid_thw: [t, h + 1, w] })).rejects.toThrow(/multiples of its merge size 2/);
    await expect(send({ image_embeds: rows, image_grid_thw: [2, h, w] })).rejects.toThrow(/t is 1 for an image/);
    await expect(send({ image_embeds: rows, image_grid_thw: [t, h, w, 1] })).rejects.toBeInstanceOf(InvalidMessageError);
    await expect(send({ image_embeds: rows, image_grid_thw: 'bm90IGEgdGVuc29y' })).rejects.toBeInstanceOf(InvalidMessageError);
    await expect(send({ image_embeds: rows, image_grid_thw: [t, h, w] }, { tessera: { grid: [1, 2] } })).rejects.toThrow(
      /both a patch grid/,
    );
    // Rows for another grid's token count, and rows without the DeepStack levels (or with too few values).
    const wrongCount = send({ image_embeds: rows, image_grid_thw: [t, h + 2, w] });
    await expect(wrongCount).rejects.toBeInstanceOf(EmbeddingsShapeError);
    await expect(wrongCount).rejects.toThrow(/image_grid_thw/);
    const n = e.shape[0];
    const narrow = base64(encodeTorchTensor(e.data.subarray(0, n * (e.shape[1] - 8)), [n, e.shape[1] - 8]));
    await expect(send({ image_embeds: narrow, image_grid_thw: [t, h, w] })).rejects.toBeInstanceOf(EmbeddingsShapeError);
    const r = await engine.chat.completions.create(
      ask({ type: 'image_embeds', image_embeds: { image_embeds: rows, image_grid_thw: [t, h, w] } }, text, ref('sample').tokens.length),
    );
    expect(r.tessera.tokenIds).toEqual(ref('sample').tokens);
  });

  describe('the remote engine against tessera serve', () => {
    let server: RunningServer;
    let remote: RemoteEngine;
    const bodies: string[] = [];
    beforeAll(async () => {
      server = await startServer({ engine, modelName: 'tiny-qwen', port: 0 });
      remote = await createRemoteEngine({
        baseURL: `${server.url}/v1`,
        model: 'tiny-qwen',
        checkpoint: model(),
        device: 'cpu',
        encoder: { mode: 'in-process' },
        fetch: async (url, init) => {
          if (typeof init?.body === 'string') bodies.push(init.body);
          return fetch(url, init);
        },
      });
    });
    afterAll(async () => {
      remote?.destroy();
      await server?.close();
    });

    it('sends the rows and their patch grid, never the image, and answers the reference tokens; a second ask sends the uuid and grid alone', async () => {
      const { image, text } = caseParts('tall');
      const imagePart = { type: 'image', image } as const;
      const first = await remote.chat.completions.create(ask(imagePart, text, ref('tall').tokens.length));
      expect(first.tessera.tokenIds).toEqual(ref('tall').tokens);
      const part = JSON.parse(bodies.at(-1)!).messages[0].content[0];
      expect(part.type).toBe('image_embeds');
      const grid = decodeTorchTensor(Buffer.from(part.image_embeds.image_grid_thw, 'base64'));
      expect(grid).toMatchObject({ dtype: 'int64', shape: [1, 3] });
      const g = prompt('tall').grids[0];
      expect([...grid.data]).toEqual([g.t, g.h, g.w]);
      expect(bodies.at(-1)).not.toContain(Buffer.from(image).toString('base64').slice(0, 64));

      const second = await remote.chat.completions.create(ask(imagePart, text, ref('tall').tokens.length));
      expect(second.tessera.tokenIds).toEqual(ref('tall').tokens);
      const again = JSON.parse(bodies.at(-1)!).messages[0].content[0];
      expect(again).toEqual({ type: 'image_embeds', image_embeds: null, uuid: part.uuid, tessera: { grid_thw: [g.t, g.h, g.w] } });
      expect(remote.stats()).toMatchObject({ mode: 'embeds', parts: { embeds: 2, byUuid: 1, raw: 0 } });
    });
  });
});
