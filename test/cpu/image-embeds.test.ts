// image_embeds parts (vLLM's format: base64 of torch.save(tensor), with a uuid), on the CPU backend: the
// embeddings engine.imageEmbeddings() computes for an image, sent back as an image_embeds part, give the
// tokens the image itself gives; a later part with only the uuid uses the cached embeddings; wrong shapes,
// unknown uuids and an engine that does not take embeddings are refused by name; tessera serve passes
// them through.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/create-node';
import type { Engine } from '../../src/engine/engine';
import type { ChatCompletionRequest, ChatContentPart } from '../../src/engine/types';
import { EmbeddingsNotAcceptedError, EmbeddingsNotCachedError, EmbeddingsShapeError, InvalidMessageError } from '../../src/errors';
import { encodeTorchTensor } from '../../src/protocol/torch-tensor';
import { startServer } from '../../src/server/listen-node';
import { expectIdle } from '../helpers/cpu-engine';
import { ensureTinyModels } from '../helpers/tiny-models';

const SAMPLE = readFileSync(resolve(import.meta.dirname, '../../public/sample.png'));
const model = () => `${ensureTinyModels()}/smolvlm-tiny`;
let engine: Engine;

beforeAll(async () => {
  engine = await createEngine({ model: model(), device: 'cpu', encoder: { mode: 'in-process' }, media: { acceptEmbeddings: true } });
});
afterAll(() => engine?.destroy());

const ask = (part: ChatContentPart): ChatCompletionRequest & { stream?: false } => ({
  messages: [{ role: 'user', content: [part, { type: 'text', text: 'Can you describe this image?' }] }],
  max_tokens: 12,
});
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

describe('image_embeds parts', () => {
  it('the embeddings of an image, sent as image_embeds, give the tokens the image gives; then by uuid alone, from the cache', async () => {
    const e = await engine.imageEmbeddings(SAMPLE);
    expect(e.shape[1]).toBe(engine.media.info.imageSeqLen);
    expect(e.shape[0] * e.shape[1] * e.shape[2]).toBe(e.data.length);
    const want = await engine.chat.completions.create(ask({ type: 'image', image: SAMPLE }));

    const wire = base64(encodeTorchTensor(e.data, e.shape));
    const given = await engine.chat.completions.create(
      ask({ type: 'image_embeds', image_embeds: wire, uuid: e.key, tessera: { grid: e.grid } }),
    );
    expect(given.tessera.tokenIds).toEqual(want.tessera.tokenIds);
    expect(given.tessera.media[0]).toMatchObject({ source: 'given', numTiles: e.shape[0] });
    expect(given.usage.prompt_tokens).toBe(want.usage.prompt_tokens);

    const byUuid = await engine.chat.completions.create(
      ask({ type: 'image_embeds', image_embeds: null, uuid: e.key, tessera: { grid: e.grid } }),
    );
    expect(byUuid.tessera.tokenIds).toEqual(want.tessera.tokenIds);
    expect(byUuid.tessera.media[0].source).toBe('memory');

    // the 2-D form and the tensor itself work as well
    const rows = base64(encodeTorchTensor(e.data, [e.shape[0] * e.shape[1], e.shape[2]]));
    const flat = await engine.chat.completions.create(ask({ type: 'image_embeds', image_embeds: rows, tessera: { grid: e.grid } }));
    expect(flat.tessera.tokenIds).toEqual(want.tessera.tokenIds);
    const direct = await engine.chat.completions.create(
      ask({ type: 'image_embeds', image_embeds: { data: e.data, shape: e.shape }, uuid: 'direct', tessera: { grid: e.grid } }),
    );
    expect(direct.tessera.tokenIds).toEqual(want.tessera.tokenIds);
    expectIdle(engine);
  });

  it('refuses unknown uuids, wrong shapes, wrong grids and malformed tensors by name', async () => {
    const e = await engine.imageEmbeddings(SAMPLE);
    const fails = (part: ChatContentPart) => engine.chat.completions.create(ask(part));
    await expect(fails({ type: 'image_embeds', image_embeds: null, uuid: 'never-sent' })).rejects.toThrow(EmbeddingsNotCachedError);
    const hidden = e.shape[2];
    const wrongHidden = base64(
      encodeTorchTensor(new Float32Array(e.shape[0] * e.shape[1] * (hidden + 1)), [e.shape[0], e.shape[1], hidden + 1]),
    );
    await expect(fails({ type: 'image_embeds', image_embeds: wrongHidden, tessera: { grid: e.grid } })).rejects.toThrow(
      EmbeddingsShapeError,
    );
    await expect(fails({ type: 'image_embeds', image_embeds: wrongHidden, tessera: { grid: e.grid } })).rejects.toThrow(
      new RegExp(`takes \\[${e.shape[0]}, ${e.shape[1]}, ${hidden}\\]`),
    );
    const wrongGrid: [number, number] = e.grid[0] === 0 ? [1, 2] : [0, 0];
    await expect(
      fails({ type: 'image_embeds', image_embeds: base64(encodeTorchTensor(e.data, e.shape)), tessera: { grid: wrongGrid } }),
    ).rejects.toThrow(EmbeddingsShapeError);
    const nan = Float32Array.from(e.data);
    nan[5] = Number.NaN;
    await expect(
      fails({ type: 'image_embeds', image_embeds: base64(encodeTorchTensor(nan, e.shape)), tessera: { grid: e.grid } }),
    ).rejects.toThrow(/finite values \(value 5 is NaN\)/);
    await expect(fails({ type: 'image_embeds', image_embeds: 'bm90IGEgemlw', tessera: { grid: e.grid } })).rejects.toThrow(
      InvalidMessageError,
    );
    await expect(fails({ type: 'image_embeds', image_embeds: null })).rejects.toThrow(/neither image_embeds nor a uuid/);
    // A Qwen-VL image's form (rows with a patch grid) is not an Idefics3 image's.
    const rows = base64(encodeTorchTensor(e.data, [e.shape[0] * e.shape[1], e.shape[2]]));
    await expect(fails({ type: 'image_embeds', image_embeds: { image_embeds: rows, image_grid_thw: [1, 16, 16] } })).rejects.toThrow(
      /carries a patch grid \(image_grid_thw\), a Qwen-VL image's; .* is an Idefics3 checkpoint/,
    );
    expectIdle(engine);
  });

  it('an engine without media.acceptEmbeddings refuses them; tessera serve passes them through the openai client', async () => {
    const closed = await createEngine({ model: model(), device: 'cpu', encoder: { mode: 'in-process' } });
    try {
      await expect(closed.chat.completions.create(ask({ type: 'image_embeds', image_embeds: null, uuid: 'x' }))).rejects.toThrow(
        EmbeddingsNotAcceptedError,
      );
    } finally {
      closed.destroy();
    }
    const e = await engine.imageEmbeddings(SAMPLE);
    const want = await engine.chat.completions.create(ask({ type: 'image', image: SAMPLE }));
    const server = await startServer({ engine, ownsEngine: false, modelName: 'tiny', port: 0 });
    try {
      const client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none', maxRetries: 0 });
      const part = {
        type: 'image_embeds',
        image_embeds: base64(encodeTorchTensor(e.data, e.shape)),
        uuid: `http-${e.key}`,
        tessera: { grid: e.grid },
      };
      const r = await client.chat.completions.create({
        model: 'tiny',
        max_tokens: 12,
        // vLLM's part: not in the openai package's types
        messages: [{ role: 'user', content: [part as never, { type: 'text', text: 'Can you describe this image?' }] }],
      });
      expect((r as unknown as { tessera: { tokenIds: number[] } }).tessera.tokenIds).toEqual(want.tessera.tokenIds);
    } finally {
      await server.close();
    }
  });
});
