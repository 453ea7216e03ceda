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
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine';
import type { ChatCompletion, ChatCompletionRequest } from '../../src/engine/types';
import { AudioNotSupportedError, EncoderOutOfMemoryError, ToolsNotSupportedError } from '../../src/errors';
import { smartResize } from '../../src/processor/smart-resize';
import { testEngine } from '../helpers/engine';
import { qwenPipelineGoldens } from '../helpers/goldens';
import { JSON_CASES, jsonProblems } from '../helpers/json-formats';
import { qwenTurn } from '../helpers/qwen-turn';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

const { input, golden } = qwenPipelineGoldens();
const SAMPLING = (
  JSON.parse(readFileSync(resolve('test/fixtures/goldens/qwen-video-sampling.json'), 'utf8')) as {
    sampling: Array<{ total: number; fps: number; qwen2: number[]; qwen3: number[] }>;
  }
).sampling;
const gpu = useGpu();
/** <|image_pad|> in the Qwen2 vocabulary. */
const IMAGE_PAD = 151655;

type Message = ChatCompletionRequest['messages'][number];
const IMAGE = new Uint8Array(readFileSync(resolve('public/sample.png')));
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
  const given = (id: string) => input.models.find((m) => m.checkpoint === name)!.cases.find((c) => c.id === id)!;
  const ref = (id: string) => want.cases.find((c) => c.id === id)!;
  let engine: Engine;
  let first: ChatCompletion;
  beforeAll(async () => {
    engine = await testEngine(gpu(), dir(), { kvCacheTokens: 1024, maxTokensPerStep: 128 });
  });
  afterAll(() => engine?.destroy());

  it.each(want.cases.map((c) => c.id))('%s: answers with the reference tokens', async (id) => {
    const r = await engine.chat.completions.create(ask([qwenTurn(id)], ref(id).tokens.length));
    if (id === 'sample') first = r;
    expect(r.tessera.tokenIds).toEqual(ref(id).tokens);
    // Each step's log probability is the reference's (its largest logit minus log Σ exp).
    const logprobs = r.choices[0].logprobs!.content!.map((l) => l.logprob);
    const refLogprobs = ref(id).stepTop.map((t, s) => t.logits[0] - ref(id).logSumExp[s]);
    for (const [s, lp] of logprobs.entries()) expect(Math.abs(lp - refLogprobs[s]), `step ${s}`).toBeLessThan(2e-2);
    expect(r.usage.prompt_tokens).toBe(given(id).ids.length);
    const images = r.tessera.media.filter((m) => !m.video);
    expect(images.map((m) => m.grid)).toEqual(given(id).grids);
    expect(r.tessera.imageTokens).toBe(given(id).ids.filter((t) => t === IMAGE_PAD).length);
    // A video's frame groups: one media item each, of one temporal patch; their times as the reference's.
    for (const [v, want] of given(id).videos.entries()) {
      const groups = r.tessera.media.filter((m) => m.video?.videoIndex === v);
      expect(groups.map((m) => m.grid)).toEqual(want.timestamps.map(() => ({ t: 1, ...want.group })));
      expect(r.tessera.videos[v].frames.map((f) => f.timestamp)).toEqual(want.timestamps);
    }
    expect(engine.processor.decode(ref(id).tokens)).toBe(r.choices[0].message.content);
  });

  it('response_format with a bounded JSON schema (Qwen2 BPE vocabulary under XGrammar): answers that parse, validate and end', async () => {
    // Both schemas at once too: the grammar masks of two requests in one step. (JSON mode is unbounded:
    // a random-weight model can write one string until max_tokens.)
    const reqs = JSON_CASES.filter((c) => c.format.type === 'json_schema').map((c) => ({
      messages: [{ role: 'user' as const, content: `Answer as JSON: ${c.label}.` }],
      max_tokens: 160,
      response_format: c.format,
    }));
    const answers = await Promise.all(reqs.map((r) => engine.chat.completions.create(r)));
    for (const [i, r] of answers.entries()) {
      expect(jsonProblems(reqs[i]!, r.choices[0].message.content)).toEqual([]);
      expect(r.choices[0].finish_reason).toBe('stop');
    }
  });

  it('answers the same request again from the encoder cache and the prefix cache, unchanged', async () => {
    const again = await engine.chat.completions.create(ask([qwenTurn('sample')], ref('sample').tokens.length));
    expect(again.tessera.tokenIds).toEqual(ref('sample').tokens);
    expect(again.tessera.media[0].source).toBe('memory');
    expect(again.tessera.cachedTokens).toBeGreaterThan(0);
  });

  it('batches every request and a text-only one together, each answering as alone', async () => {
    const text = ask([{ role: 'user', content: 'Say something about colours.' }], 6);
    const alone = await engine.chat.completions.create(text);
    engine.encoderCache.clear();
    const all = () =>
      Promise.all([
        engine.chat.completions.create(text),
        ...want.cases.map((c) => engine.chat.completions.create(ask([qwenTurn(c.id)], c.tokens.length))),
      ]);
    // Cold: the images encode while the text request decodes (which of them share a step is a race).
    const [txt, ...answers] = await all();
    for (const [i, a] of answers.entries()) expect(a.tessera.tokenIds, want.cases[i].id).toEqual(want.cases[i].tokens);
    expectSameAnswer(txt, alone, 1e-3);
    // Again, every prompt in the prefix cache but its last token: all six are admitted to the first step.
    const [txt2, ...again] = await all();
    for (const [i, a] of again.entries()) expect(a.tessera.tokenIds, want.cases[i].id).toEqual(want.cases[i].tokens);
    expectSameAnswer(txt2, alone, 1e-3);
    expect(engine.stats().scheduler.batchSeqs.max).toBeGreaterThanOrEqual(want.cases.length + 1);
  });

  it('a second turn resumed from the cached prefix answers as an engine that prefills it in chunks', async () => {
    const turn = ask(
      [
        qwenTurn('sample'),
        { role: 'assistant', content: first.choices[0].message.content },
        { role: 'user', content: 'And what colours are there?' },
      ],
      6,
    );
    const cached = await engine.chat.completions.create(turn);
    expect(cached.tessera.cachedTokens).toBeGreaterThanOrEqual(given('sample').ids.length - 16);
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

  it('an image encoded while another request decodes, paced (decode priority), changes no token', async () => {
    // No prefix cache: the image request's second run must encode its image again, beside the decoding.
    const paced = await testEngine(gpu(), dir(), {
      kvCacheTokens: 2048,
      maxTokensPerStep: 128,
      decodePriority: { encoderShare: 0.25 },
      prefixCaching: false,
    });
    try {
      const long = ask([{ role: 'user', content: 'Tell me a long story.' }], 300);
      const pic = ask([qwenTurn('sample')], ref('sample').tokens.length);
      const soloLong = await paced.chat.completions.create(long);
      expect(soloLong.tessera.tokenIds.length, 'the text answer must outlast the encode').toBeGreaterThan(100);
      await paced.encoderCache.clear();
      const before = paced.stats();
      const longRun = paced.chat.completions.create(long);
      while (paced.stats().scheduler.numRunning === 0) await new Promise((r) => setTimeout(r, 5));
      const [a, b] = await Promise.all([longRun, paced.chat.completions.create(pic)]);
      expect(b.tessera.tokenIds).toEqual(ref('sample').tokens);
      expectSameAnswer(a, soloLong, 1e-3);
      const s = paced.stats();
      expect(s.encoder.encodes - before.encoder.encodes).toBe(1);
      // The encode ran in grants between the text request's steps.
      expect(s.decodePriority.grantedMs).toBeGreaterThan(0);
    } finally {
      paced.destroy();
    }
  });

  it('samples an MP4 (ffmpeg) as HF samples it at 2 fps; asked again, the clip decodes nothing', async () => {
    const clip = new Uint8Array(readFileSync(resolve('test/fixtures/video/count-4s.mp4')));
    // 20 frames at 5 fps: the frames test/reference/qwen_video_sampling.py gives this family.
    const sampled = SAMPLING.find((c) => c.total === 20 && c.fps === 5)![name.startsWith('qwen3') ? 'qwen3' : 'qwen2'];
    const groups = sampled.filter((_, i) => i % 2 === 0).map((first, g) => ({ first, seconds: (first / 5 + sampled[2 * g + 1]! / 5) / 2 }));
    const ask2 = () =>
      engine.chat.completions.create(
        ask(
          [
            {
              role: 'user',
              content: [
                { type: 'video', video: clip },
                { type: 'text', text: 'What happens?' },
              ],
            },
          ],
          3,
        ),
      );
    const first = await ask2();
    const [v] = first.tessera.videos;
    expect([v.numFrames, v.fps, v.decoder]).toEqual([20, 5, 'ffmpeg+sharp']);
    expect(v.frames.map((f) => f.index)).toEqual(groups.map((g) => g.first));
    for (const [g, f] of v.frames.entries()) expect(f.timestamp).toBeCloseTo(groups[g].seconds, 12);
    const again = await ask2();
    expect(again.tessera.videos[0].source).toBe('clip-cache');
    expect(again.tessera.tokenIds).toEqual(first.tessera.tokenIds);
  });

  it('videoFrames() gives the frame groups a request splices; a request right after decodes and encodes nothing', async () => {
    const clip = new Uint8Array(readFileSync(resolve('test/fixtures/video/count-12s.mp4')));
    const info = await engine.videoFrames(clip, { thumbnailEdge: 80 });
    // 12 s at 2 fps: 24 frames, in groups of two (one temporal patch each).
    expect(info.frames).toHaveLength(12);
    for (const f of info.frames) expect(Math.max(f.thumbnail!.width, f.thumbnail!.height)).toBe(80);
    const before = engine.stats().encoder;
    const r = await engine.chat.completions.create(
      ask(
        [
          {
            role: 'user',
            content: [
              { type: 'video', video: clip },
              { type: 'text', text: 'What happens?' },
            ],
          },
        ],
        2,
      ),
    );
    const after = engine.stats().encoder;
    const [v] = r.tessera.videos;
    expect(v.source).toBe('clip-cache');
    expect(v.frames.map((f) => [f.index, f.timestamp, f.key])).toEqual(info.frames.map((f) => [f.index, f.timestamp, f.key]));
    expect(v.tokens).toBe(info.tokens);
    // The groups the request spliced: the same keys, each its patch grid's merge units (2 x 2) of tokens.
    const groups = r.tessera.media.filter((m) => m.video);
    expect(groups.map((m) => m.key)).toEqual(info.frames.map((f) => f.key));
    expect(groups.reduce((n, m) => n + (m.grid!.t * m.grid!.h * m.grid!.w) / 4, 0)).toBe(info.tokens);
    expect(new Set(groups.map((m) => m.source))).toEqual(new Set(['memory']));
    expect(after.video.framesDecoded - before.video.framesDecoded).toBe(0);
    expect(after.encodes - before.encodes).toBe(0);
  });

  it('a video whose frames differ in size fails alone; nothing it or the image and video beside it prepared stays in the encoder', async () => {
    const prepared = () => (engine.waitState() as { encoder: { prepared: number } }).encoder.prepared;
    expect(prepared()).toBe(0);
    const frame = (path: string) => new Uint8Array(readFileSync(resolve(path)));
    const good = qwenTurn('video');
    const bad = {
      type: 'video' as const,
      video: {
        frames: [
          { image: frame('test/fixtures/images/pan-0.png'), timestamp: 0 },
          { image: frame('test/fixtures/images/tall-120x360.png'), timestamp: 0.5 },
        ],
      },
    };
    const content = [...(good.content as Extract<Message['content'], unknown[]>), { type: 'image' as const, image: IMAGE }, bad];
    await expect(engine.chat.completions.create(ask([{ role: 'user', content }], 2))).rejects.toThrow(
      /video frames\[1\] is 120 x 360 pixels but the video's first frame is 160 x 120/,
    );
    expect(prepared()).toBe(0);
    // Another request (with other media) answers, and the failed one's neighbours did not finish preparing
    // behind its back: still nothing prepared after it.
    const r = await engine.chat.completions.create(ask([qwenTurn('tall')], ref('tall').tokens.length));
    expect(r.tessera.tokenIds).toEqual(ref('tall').tokens);
    expect(prepared()).toBe(0);
  });

  it('refuses audio parts, video pruning and (Qwen2.5-VL) tools by name, and answers the next request', async () => {
    const part = (p: unknown) => ask([{ role: 'user', content: [p, { type: 'text', text: 'hi' }] } as Message], 2);
    await expect(engine.chat.completions.create({ ...ask([qwenTurn('video')], 2), tessera: { videoPruning: 0.5 } })).rejects.toThrow(
      /videoPruning \(EVS\) takes SmolVLM2 checkpoints/,
    );
    await expect(engine.chat.completions.create(part({ type: 'audio', audio: new Uint8Array(8) }))).rejects.toBeInstanceOf(
      AudioNotSupportedError,
    );
    // Qwen2.5-VL's chat template offers no tools (Qwen3-VL's does: test/gpu/tools.test.ts).
    if (name.startsWith('qwen2_5_vl')) {
      const tools = [{ type: 'function' as const, function: { name: 'now' } }];
      await expect(engine.chat.completions.create({ ...ask([qwenTurn('sample')], 2), tools })).rejects.toBeInstanceOf(
        ToolsNotSupportedError,
      );
    }
    const r = await engine.chat.completions.create(ask([qwenTurn('sample')], 2));
    expect(r.tessera.tokenIds).toEqual(ref('sample').tokens.slice(0, 2));
  });
});

describe.each(golden.models.map((m) => m.checkpoint))(
  '%s: a GPU out of memory while encoding (a test backend fails encodes above 30 tokens)',
  (name) => {
    const dir = () => `${ensureTinyModels()}/${name}`;
    let engine: Engine;
    beforeAll(async () => {
      engine = await testEngine(gpu(), dir(), { kvCacheTokens: 1024, maxTokensPerStep: 128, faults: { oomAboveTokens: 30 } });
    });
    afterAll(() => engine?.destroy());

    it('fails by name, then with allowReducedResolution answers once at a quarter of the pixels, under its own cache key', async () => {
      const err = await engine.chat.completions.create(ask([qwenTurn('sample')], 2)).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(EncoderOutOfMemoryError);
      expect((err as Error).message).toMatch(/encoding images of \d+ tokens .*retry once at a lower resolution/);

      const r = await engine.chat.completions.create({ ...ask([qwenTurn('sample')], 2), tessera: { allowReducedResolution: true } });
      expect(r.tessera.degraded).toBeUndefined();
      const full = input.models.find((m) => m.checkpoint === name)!.cases.find((c) => c.id === 'sample')!.grids[0];
      // The retry's grid is the smart resize of the image within a quarter of the full grid's pixels.
      const pre = JSON.parse(readFileSync(resolve(dir(), 'preprocessor_config.json'), 'utf8'));
      const patch: number = pre.patch_size;
      const merge: number = pre.merge_size;
      const minPixels: number = pre.min_pixels ?? pre.size.shortest_edge;
      const { width, height } = await sharp(IMAGE).metadata();
      const budget = Math.floor((full.h * full.w * patch * patch) / 4);
      const [h, w] = smartResize(height!, width!, { factor: patch * merge, minPixels, maxPixels: budget });
      expect(r.tessera.media[0].grid).toEqual({ t: 1, h: h / patch, w: w / patch });
      expect(r.tessera.imageTokens).toBe((h * w) / (patch * merge) ** 2);
      expect(r.tessera.imageTokens).toBeLessThanOrEqual(30);
      expect(r.tessera.media[0].longestEdge).toBe(Math.max(h, w));

      // Its embeddings are cached under their own key: a full-resolution request still needs the full encode.
      const again = await engine.chat.completions.create(ask([qwenTurn('sample')], 2)).catch((e: unknown) => e);
      expect(again).toBeInstanceOf(EncoderOutOfMemoryError);
    });
  },
);
