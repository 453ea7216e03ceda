// The Qwen-VL families through the engine, on each tiny checkpoint in Node: the image prepared and encoded
// by the media encoder, the prompt planned by the QwenProcessor (M-RoPE positions), the rows spliced (with
// Qwen3-VL's DeepStack levels) and decoded by the serve loop. The greedy answer must be the tokens of
// test/reference/qwen_pipeline.py (float64, torchvision's preprocessing), as test/gpu/qwen-pipeline.test.ts
// finds them piece by piece. Then what the engine adds: the encoder cache and the prefix cache must not
// change an answer (a repeated request, a second turn resumed from the cached prefix, compared with an
// engine without prefix caching that prefills in small chunks, splitting the image), a text-only request
// batched beside an image request, and the parts the families do not take yet, refused by name.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine';
import type { ChatCompletion, ChatCompletionRequest } from '../../src/engine/types';
import { AudioNotSupportedError, UnsupportedModelError, VideoNotSupportedError } from '../../src/errors';
import { testEngine } from '../helpers/engine';
import { qwenPipelineGoldens } from '../helpers/goldens';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

const { input, golden } = qwenPipelineGoldens();
const IMAGE = new Uint8Array(readFileSync(resolve(input.image)));
const gpu = useGpu();
/** <|image_pad|> in the Qwen2 vocabulary. */
const IMAGE_PAD = 151655;

type Message = ChatCompletionRequest['messages'][number];
const imageTurn = (text: string): Message => ({
  role: 'user',
  content: [
    { type: 'image', image: IMAGE },
    { type: 'text', text },
  ],
});
const ask = (messages: Message[], max_tokens: number): ChatCompletionRequest & { stream?: false } => ({
  messages,
  max_tokens,
  logprobs: true,
  top_logprobs: 2,
});

/**
 * Two engines' answers to one request agree: every step's chosen log probability within `tol`, and the
 * same tokens up to the first step where both saw a near tie (their top two within 10·tol), after which
 * the answers may part on another machine's rounding.
 */
function expectSameAnswer(a: ChatCompletion, b: ChatCompletion, tol: number): void {
  const la = a.choices[0].logprobs!.content!;
  const lb = b.choices[0].logprobs!.content!;
  for (let s = 0; s < Math.min(la.length, lb.length); s++) {
    const gapA = la[s].top_logprobs[0].logprob - la[s].top_logprobs[1].logprob;
    if (a.tessera.tokenIds[s] !== b.tessera.tokenIds[s]) {
      expect(gapA, `step ${s}: the answers part without a near tie`).toBeLessThan(10 * tol);
      return;
    }
    expect(Math.abs(la[s].logprob - lb[s].logprob), `step ${s}`).toBeLessThan(tol);
  }
}

describe.each(golden.models.map((m) => [m.checkpoint, m] as const))('%s through the engine', (name, want) => {
  const dir = () => `${ensureTinyModels()}/${name}`;
  const promptIds = input.models.find((m) => m.checkpoint === name)!.ids;
  let engine: Engine;
  let first: ChatCompletion;
  beforeAll(async () => {
    engine = await testEngine(gpu(), dir(), { kvCacheTokens: 1024, maxTokensPerStep: 128 });
  });
  afterAll(() => engine?.destroy());

  it('answers an image request with the reference tokens', async () => {
    first = await engine.chat.completions.create(ask([imageTurn(input.prompt)], want.tokens.length));
    expect(first.tessera.tokenIds).toEqual(want.tokens);
    expect(first.usage.prompt_tokens).toBe(promptIds.length);
    const [media] = first.tessera.media;
    expect(media.source).toBe('encoded');
    // public/sample.png (640 x 480) within the tiny checkpoints' 224² pixel budget, one pad token per 2 x 2
    // patches: 18 x 12 patches of 14 px (Qwen2.5-VL), 16 x 12 of 16 px (Qwen3-VL).
    expect(media.grid).toEqual({ t: 1, h: 12, w: name.startsWith('qwen3') ? 16 : 18 });
    expect(first.tessera.imageTokens).toBe(promptIds.filter((id) => id === IMAGE_PAD).length);
    expect(engine.processor.decode(want.tokens)).toBe(first.choices[0].message.content);
  });

  it('answers the same request again from the encoder cache and the prefix cache, unchanged', async () => {
    const again = await engine.chat.completions.create(ask([imageTurn(input.prompt)], want.tokens.length));
    expect(again.tessera.tokenIds).toEqual(want.tokens);
    expect(again.tessera.media[0].source).toBe('memory');
    expect(again.tessera.cachedTokens).toBeGreaterThan(0);
  });

  it('batches a text-only request beside an image request, each answering as alone', async () => {
    const text = ask([{ role: 'user', content: 'Say something about colours.' }], 6);
    const alone = await engine.chat.completions.create(text);
    const [img, txt] = await Promise.all([
      engine.chat.completions.create(ask([imageTurn(input.prompt)], want.tokens.length)),
      engine.chat.completions.create(text),
    ]);
    expect(img.tessera.tokenIds).toEqual(want.tokens);
    expectSameAnswer(txt, alone, 1e-3);
  });

  it('a second turn resumed from the cached prefix answers as an engine that prefills it in chunks', async () => {
    const turn = ask(
      [
        imageTurn(input.prompt),
        { role: 'assistant', content: first.choices[0].message.content },
        { role: 'user', content: 'And what colours are there?' },
      ],
      6,
    );
    const cached = await engine.chat.completions.create(turn);
    expect(cached.tessera.cachedTokens).toBeGreaterThanOrEqual(promptIds.length - 16);
    // No prefix cache, and 16-token steps: the image's rows are spliced over several steps.
    const fresh = await testEngine(gpu(), dir(), { kvCacheTokens: 1024, maxTokensPerStep: 16, prefixCaching: false });
    try {
      const chunked = await fresh.chat.completions.create(turn);
      expect(chunked.tessera.cachedTokens).toBe(0);
      expect(chunked.tessera.timings.numPrefillChunks).toBeGreaterThan(4);
      expectSameAnswer(cached, chunked, 1e-3);
    } finally {
      fresh.destroy();
    }
  });

  it('refuses video and audio parts and imageEmbeddings() by name, and answers the next request', async () => {
    const part = (p: unknown) => ask([{ role: 'user', content: [p, { type: 'text', text: 'hi' }] } as Message], 2);
    await expect(
      engine.chat.completions.create(part({ type: 'video', video: { frames: [{ image: IMAGE, timestamp: 0 }] } })),
    ).rejects.toBeInstanceOf(VideoNotSupportedError);
    await expect(engine.chat.completions.create(part({ type: 'audio', audio: new Uint8Array(8) }))).rejects.toBeInstanceOf(
      AudioNotSupportedError,
    );
    await expect(engine.imageEmbeddings(IMAGE)).rejects.toBeInstanceOf(UnsupportedModelError);
    const r = await engine.chat.completions.create(ask([imageTurn(input.prompt)], 2));
    expect(r.tessera.tokenIds).toEqual(want.tokens.slice(0, 2));
  });
});
