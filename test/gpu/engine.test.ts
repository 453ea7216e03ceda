// The engine end to end on the tiny checkpoint in Node: the OpenAI-style API (streaming and not), parity
// of its greedy tokens with the PyTorch goldens, sampling, cancellation, and every bad input in the
// issue list, each a named error for that request only: the next request on the same engine succeeds.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine';
import type { ChatCompletionChunk, ChatCompletionRequest } from '../../src/engine/types';
import { ContextLengthError, ImageDecodeError, ImageTokenMismatchError } from '../../src/errors';
import { generate } from '../../src/model/generate';
import { testEngine } from '../helpers/engine';
import { goldenManifest } from '../helpers/goldens';
import { jsonProblems, jsonRequests } from '../helpers/json-formats';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';
import type { Idefics3Processor } from '../../src/processor/processor';

const gpu = useGpu();
const SAMPLE = readFileSync(resolve(import.meta.dirname, '../../public/sample.png'));
let engine: Engine;

function ask(
  image: Uint8Array | undefined,
  text: string,
  extra: Partial<ChatCompletionRequest> & { stream?: false } = {},
): ChatCompletionRequest & { stream?: false } {
  const content: ChatCompletionRequest['messages'][0]['content'] = image
    ? [
        { type: 'image', image },
        { type: 'text', text },
      ]
    : [{ type: 'text', text }];
  return { messages: [{ role: 'user', content }], max_tokens: 4, ...extra };
}

async function expectHealthy() {
  const r = await engine.chat.completions.create(ask(SAMPLE, 'Can you describe this image?', { max_tokens: 2 }));
  expect(r.tessera.tokenIds).toEqual(goldenManifest().greedy['smolvlm-tiny'].tokens.slice(0, 2));
  const s = engine.stats();
  expect(s.kv.numFreeBlocks).toBe(s.kv.numBlocks);
}

beforeAll(async () => {
  const dir = ensureTinyModels();
  engine = await testEngine(gpu(), `${dir}/smolvlm-tiny`, { kvCacheTokens: 2048, maxTokensPerStep: 128 });
});
afterAll(() => engine?.destroy());

describe('engine', () => {
  it('answers with the reference greedy tokens, streamed and not', async () => {
    const want = goldenManifest().greedy['smolvlm-tiny'].tokens;
    const full = await engine.chat.completions.create(ask(SAMPLE, 'Can you describe this image?', { max_tokens: 20 }));
    expect(full.tessera.tokenIds).toEqual(want);
    expect(full.choices[0].finish_reason).toBe('length');
    expect(full.usage).toEqual({ prompt_tokens: 252, completion_tokens: 20, total_tokens: 272 });
    expect(full.tessera.numTiles).toBe(13);
    expect(full.tessera.imageTokens).toBe(208);

    const chunks: ChatCompletionChunk[] = [];
    for await (const c of await engine.chat.completions.create({
      ...ask(SAMPLE, 'Can you describe this image?', { max_tokens: 20 }),
      stream: true,
    })) {
      chunks.push(c);
    }
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    const last = chunks.at(-1)!;
    expect(last.choices[0].finish_reason).toBe('length');
    expect(last.tessera!.tokenIds).toEqual(want);
    expect(chunks.map((c) => c.choices[0].delta.content ?? '').join('')).toBe(full.choices[0].message.content);
    expect(engine.processor.decode(want)).toBe(full.choices[0].message.content);
  });

  it('sampling with a seed is repeatable and differs from greedy', async () => {
    const req = ask(SAMPLE, 'Can you describe this image?', { max_tokens: 8, temperature: 0.9, top_p: 0.9, top_k: 40, seed: 7 });
    const a = await engine.chat.completions.create(req);
    const b = await engine.chat.completions.create(req);
    expect(a.tessera.tokenIds).toEqual(b.tessera.tokenIds);
    expect(a.tessera.tokenIds).not.toEqual(goldenManifest().greedy['smolvlm-tiny'].tokens.slice(0, 8));
  });

  it('a text-only prompt works', async () => {
    const r = await engine.chat.completions.create(ask(undefined, 'Hello there', { max_tokens: 3 }));
    expect(r.tessera.imageTokens).toBe(0);
    expect(r.tessera.tokenIds.length).toBe(3);
  });

  it('cancellation frees the request at once and the next request runs', async () => {
    const abort = new AbortController();
    const stream = await engine.chat.completions.create({
      ...ask(SAMPLE, 'Describe it.', { max_tokens: 50 }),
      stream: true,
      signal: abort.signal,
    });
    // The stream ends quietly where it was stopped (as the openai client's streams do).
    let n = 0;
    for await (const c of stream) {
      if (c.choices[0].delta.content && ++n === 2) abort.abort();
    }
    expect(n).toBeLessThan(50);
    await expectHealthy();
  });
});

describe('bad input: a named error for that request, and the engine stays usable', () => {
  it('bytes that are not an image', async () => {
    const err = await engine.chat.completions.create(ask(new TextEncoder().encode('definitely not a PNG'), 'hi')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImageDecodeError);
    expect((err as Error).message).toContain('20 bytes could not be decoded as an image');
    await expectHealthy();
  });

  it('a 1x1 image', async () => {
    const png = await sharp({ create: { width: 1, height: 1, channels: 3, background: { r: 200, g: 10, b: 10 } } })
      .png()
      .toBuffer();
    const r = await engine.chat.completions.create(ask(png, 'What color is this?', { max_tokens: 2 }));
    expect(r.tessera.numTiles).toBe(17);
    expect(r.tessera.tokenIds.length).toBe(2);
  });

  it('a 10000 x 10000 image is resized, not held whole', async () => {
    const png = await sharp({ create: { width: 10000, height: 10000, channels: 3, background: { r: 20, g: 120, b: 200 } } })
      .png()
      .toBuffer();
    const rssBefore = process.memoryUsage().rss;
    const r = await engine.chat.completions.create(ask(png, 'What is this?', { max_tokens: 2 }));
    expect(r.tessera.numTiles).toBe(17);
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(300 * 2 ** 20);
  });

  it('embeddings that do not match the placeholders are refused with both numbers', async () => {
    const plan = (
      await (engine.processor as Idefics3Processor).prepare([
        {
          role: 'user',
          content: [
            { type: 'image', image: SAMPLE },
            { type: 'text', text: 'x' },
          ],
        },
      ])
    ).plan;
    const run = generate(engine.model.runner, 999, {
      promptIds: plan.tokenIds,
      placeholders: plan.placeholders.flatMap((p) => p.runs),
      mediaEmbeddings: new Float32Array(192 * engine.model.config.text.hiddenSize),
      maxNewTokens: 1,
      stopIds: new Set(),
      chunkSize: 64,
    });
    const err = await run.next().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImageTokenMismatchError);
    expect((err as Error).message).toContain('the prompt has 208 image tokens but the encoder returned 192 embeddings');
    await expectHealthy();
  });

  it('a prompt longer than the context window', async () => {
    const err = await engine.chat.completions.create(ask(SAMPLE, 'word '.repeat(3000), { max_tokens: 8 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContextLengthError);
    expect((err as Error).message).toMatch(
      /the prompt has \d+ tokens and 8 more were asked for, but the context window is 2048 tokens \(the model's limit, max_position_embeddings/,
    );
    await expectHealthy();
  });

  it('max_tokens past the context window', async () => {
    const err = await engine.chat.completions.create(ask(SAMPLE, 'hi', { max_tokens: 5000 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ContextLengthError);
    await expectHealthy();
  });

  it('counts every request and failure', () => {
    const s = engine.stats();
    expect(s.requests).toBeGreaterThanOrEqual(12);
    expect(s.failedRequests).toBe(4);
  });
});

describe('response_format on WebGPU', () => {
  // The grammar's mask goes through logit-adjust.wgsl before argmax and the sampler (the rest of the API:
  // test/cpu/response-format.test.ts on the CPU backend).
  it('8 at once, JSON mode and two schemas, greedy and sampled, with penalties on some: each valid, as it is alone', async () => {
    const reqs = jsonRequests(8).map((r, i) => (i % 4 === 3 ? { ...r, frequency_penalty: 1, presence_penalty: 0.5 } : r));
    const together = await Promise.all(reqs.map((r) => engine.chat.completions.create(r)));
    together.forEach((r, i) => {
      expect(jsonProblems(reqs[i]!, r.choices[0]!.message.content)).toEqual([]);
      expect(r.choices[0]!.finish_reason).toBe('stop');
    });
    expect(engine.stats().scheduler.batchSeqs.max).toBeGreaterThanOrEqual(8);
    expect((await engine.chat.completions.create(reqs[3]!)).choices[0]!.message.content).toBe(together[3]!.choices[0]!.message.content);
    const s = engine.stats();
    expect(s.kv.numFreeBlocks).toBe(s.kv.numBlocks);
  });
});
