// The Qwen-VL families on the CPU backend (createEngine({ device: 'cpu' }): onnxruntime-node over the tiny
// checkpoints' ONNX graphs, made by scripts/make-tiny-onnx.ts in transformers.js's Qwen-VL layout, with
// M-RoPE position_ids [3, batch, seq] and Qwen3-VL's DeepStack as inputs). Each request of
// test/reference/qwen_pipeline.py must answer with its float64 tokens, as on WebGPU (qwen-engine.test.ts);
// then the encoder and prefix caches, a prefill in 16-token chunks that splits the image and its DeepStack
// rows, every request batched with a text one (within what batching on the
// CPU backend promises: test/helpers/batch-agreement.ts), and a Qwen3-VL graph without DeepStack refused by
// name.

import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEngine } from '../../src/engine/create-node';
import type { Engine } from '../../src/engine/engine';
import type { ChatCompletionRequest } from '../../src/engine/types';
import { OnnxGraphMismatchError } from '../../src/errors';
import { batchAgreement, scored } from '../helpers/batch-agreement';
import { qwenPipelineGoldens } from '../helpers/goldens';
import { qwenTurn } from '../helpers/qwen-turn';
import { ensureTinyModels } from '../helpers/tiny-models';

const { input, golden } = qwenPipelineGoldens();
/** <|image_pad|> in the Qwen2 vocabulary. */
const IMAGE_PAD = 151655;

type Message = ChatCompletionRequest['messages'][number];
const ask = (messages: Message[], max_tokens: number): ChatCompletionRequest & { stream?: false } => ({
  messages,
  max_tokens,
  logprobs: true,
  top_logprobs: 2,
});

function expectIdle(e: Engine): void {
  const s = e.stats();
  expect(s.kv.numFreeBlocks).toBe(s.kv.numBlocks);
  expect(s.scheduler).toMatchObject({ numWaiting: 0, numRunning: 0, encodingEmbeddings: 0 });
}

describe.each(golden.models.map((m) => [m.checkpoint, m] as const))("%s on device: 'cpu'", (name, want) => {
  const given = (id: string) => input.models.find((m) => m.checkpoint === name)!.cases.find((c) => c.id === id)!;
  const ref = (id: string) => want.cases.find((c) => c.id === id)!;
  let engine: Engine;
  beforeAll(async () => {
    engine = await createEngine({
      model: `${ensureTinyModels()}/${name}`,
      device: 'cpu',
      encoder: { mode: 'in-process' },
      kvCacheTokens: 2048,
      maxTokensPerStep: 128,
    });
  });
  afterAll(() => engine?.destroy());

  it.each(want.cases.map((c) => c.id))('%s: answers with the reference tokens', async (id) => {
    expect(engine.stats().device.backend).toBe('cpu');
    const r = await engine.chat.completions.create(ask([qwenTurn(id)], ref(id).tokens.length));
    expect(r.tessera.tokenIds).toEqual(ref(id).tokens);
    // Each step's log probability is the reference's (its largest logit minus log Σ exp), within what the
    // image resize moves it, as on WebGPU (qwen-engine.test.ts): up to 1.0e-3 measured here.
    const logprobs = r.choices[0].logprobs!.content!.map((l) => l.logprob);
    for (const [s, lp] of logprobs.entries()) {
      expect(Math.abs(lp - (ref(id).stepTop[s].logits[0] - ref(id).logSumExp[s])), `step ${s}`).toBeLessThan(2e-2);
    }
    expect(r.usage.prompt_tokens).toBe(given(id).ids.length);
    expect(r.tessera.imageTokens).toBe(given(id).ids.filter((t) => t === IMAGE_PAD).length);
    expect(r.tessera.media.filter((m) => !m.video).map((m) => m.grid)).toEqual(given(id).grids);
  });

  it('answers the same request again from the encoder cache and the prefix cache, unchanged', async () => {
    const again = await engine.chat.completions.create(ask([qwenTurn('sample')], ref('sample').tokens.length));
    expect(again.tessera.tokenIds).toEqual(ref('sample').tokens);
    expect(again.tessera.media[0].source).toBe('memory');
    expect(again.tessera.cachedTokens).toBeGreaterThan(0);
    expectIdle(engine);
  });

  it('with the encoder cache emptied, the prefix cache alone answers the image, and the answer says so', async () => {
    // More text after the image, so the cached prefix (whole blocks, short of the prompt's last token) holds it all.
    const turn = qwenTurn('sample');
    const content = [
      ...(turn.content as Extract<Message['content'], unknown[]>),
      { type: 'text' as const, text: ' Say it in one long sentence, with every colour and shape you can see in it.' },
    ];
    const first = await engine.chat.completions.create(ask([{ role: 'user', content }], 1));
    await engine.encoderCache.clear();
    const encodes = engine.stats().encoder.encodes;
    const again = await engine.chat.completions.create(ask([{ role: 'user', content }], 1));
    // The same first step (its chosen log probability: a near tie on another CPU may pick the other token,
    // with the same probability); this prompt has no reference tokens to hold it to.
    const lp = (r: typeof first) => r.choices[0].logprobs!.content![0].logprob;
    expect(Math.abs(lp(again) - lp(first))).toBeLessThan(1e-3);
    expect(again.tessera.cachedTokens).toBeGreaterThan(given('sample').ids.lastIndexOf(IMAGE_PAD));
    expect(again.tessera.media[0].source).toBe('prefix-cache');
    expect(engine.stats().encoder.encodes).toBe(encodes);
    expectIdle(engine);
  });

  it('prefilled in 16-token chunks (an image, and its DeepStack rows, split across steps) answers the same tokens', async () => {
    const chunked = await createEngine({
      model: `${ensureTinyModels()}/${name}`,
      device: 'cpu',
      encoder: { mode: 'in-process' },
      kvCacheTokens: 2048,
      maxTokensPerStep: 16,
      prefixCaching: false,
    });
    try {
      for (const id of ['sample', 'two-images']) {
        const r = await chunked.chat.completions.create(ask([qwenTurn(id)], ref(id).tokens.length));
        expect(r.tessera.tokenIds, id).toEqual(ref(id).tokens);
      }
    } finally {
      chunked.destroy();
    }
  });

  it('batches every request and a text-only one together, each answering as alone (as batching on the CPU promises)', async () => {
    const text = ask([{ role: 'user', content: 'Say something about colours.' }], 6);
    const alone = await engine.chat.completions.create(text);
    engine.encoderCache.clear();
    const [txt, ...answers] = await Promise.all([
      engine.chat.completions.create(text),
      ...want.cases.map((c) => engine.chat.completions.create(ask([qwenTurn(c.id)], c.tokens.length))),
    ]);
    expect(batchAgreement(scored(alone), scored(txt), false).problems).toEqual([]);
    // Each image request's reference tokens hold in the batch too: their top two logits are at least 0.0077
    // apart, above the 2e-3 within which the contract lets a batch pick the other token.
    for (const [i, a] of answers.entries()) expect(a.tessera.tokenIds, want.cases[i]!.id).toEqual(want.cases[i]!.tokens);
    expectIdle(engine);
  });
});

describe('a Qwen3-VL export in the transformers.js layout (no DeepStack)', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'tessera-qwen3-nodeepstack-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is refused by name (OnnxGraphMismatchError naming deepstack_visual_embeds), not run to different answers', async () => {
    const src = `${ensureTinyModels()}/qwen3_vl-tiny`;
    for (const f of readdirSync(src)) if (f !== 'onnx') copyFileSync(join(src, f), join(dir, f));
    mkdirSync(join(dir, 'onnx'));
    for (const f of ['vision_encoder.onnx', 'embed_tokens.onnx']) copyFileSync(join(src, 'onnx', f), join(dir, 'onnx', f));
    // The same weights' decoder exported as if the checkpoint had no DeepStack levels.
    const { qwenDecoderGraph } = await import('../../scripts/onnx/qwen-onnx');
    const { checkpointReader } = await import('../../scripts/make-tiny-onnx');
    const config = JSON.parse(readFileSync(join(src, 'config.json'), 'utf8'));
    const plain = { ...config, vision_config: { ...config.vision_config, deepstack_visual_indexes: [] } };
    writeFileSync(join(dir, 'onnx', 'decoder_model_merged.onnx'), qwenDecoderGraph(plain, checkpointReader(src).read).encode());
    const err = await createEngine({ model: dir, device: 'cpu', encoder: { mode: 'in-process' } }).then(
      (e) => {
        e.destroy();
        return undefined;
      },
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OnnxGraphMismatchError);
    expect((err as OnnxGraphMismatchError).needs).toContain('deepstack_visual_embeds [2, batch, seq, 64]');
  });
});
