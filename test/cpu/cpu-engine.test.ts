// The engine on the CPU backend in Node (createEngine({ device: 'cpu' }): onnxruntime-node over the tiny
// checkpoint's ONNX graphs, the vision encoder in-process and in an encoder worker thread): the greedy
// goldens, the encoder cache, 16 concurrent mixed requests as each gives alone (continuous batching, within
// what the CPU backend promises: test/helpers/batch-agreement.ts), cancellation, an encode timeout, bad input, and what the CPU backend refuses by name.

import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCliArgs } from '../../src/cli/args';
import { run, type RunOptions } from '../../src/cli/run';
import { createEngine } from '../../src/engine/create-node';
import type { Engine } from '../../src/engine/engine';
import type { ChatCompletionRequest, VideoFrames } from '../../src/engine/types';
import { BackendUnsupportedError, EncodeTimeoutError, ImageDecodeError, OnnxFilesMissingError } from '../../src/errors';
import { batchAgreement, type ScoredAnswer, scored } from '../helpers/batch-agreement';
import { goldenManifest } from '../helpers/goldens';
import { clip, requireFfmpeg, videoGolden } from '../helpers/video';
import { mixedWorkload, specRequest } from '../helpers/mixed-workload';
import { ensureTinyModels } from '../helpers/tiny-models';

const SAMPLE = new Uint8Array(readFileSync(resolve(import.meta.dirname, '../../public/sample.png')));
const TOKENS = goldenManifest().greedy['smolvlm-tiny'].tokens;

function ask(image: Uint8Array | undefined, text = 'Can you describe this image?', extra: Partial<ChatCompletionRequest> = {}) {
  return {
    messages: [
      { role: 'user' as const, content: [...(image ? [{ type: 'image' as const, image }] : []), { type: 'text' as const, text }] },
    ],
    max_tokens: 20,
    ...extra,
    stream: false as const,
  };
}

async function flat(w: number, h: number, r: number): Promise<Uint8Array> {
  return new Uint8Array(
    await sharp({ create: { width: w, height: h, channels: 3, background: { r, g: 90, b: 160 } } })
      .png()
      .toBuffer(),
  );
}

let dir: string;
let engine: Engine;
beforeAll(async () => {
  dir = ensureTinyModels();
  engine = await createEngine({
    model: `${dir}/smolvlm-tiny`,
    device: 'cpu',
    encoder: { mode: 'in-process' },
    kvCacheTokens: 8192,
    maxSeqs: 16,
  });
});
afterAll(() => engine?.destroy());

function expectIdle(e: Engine): void {
  const s = e.stats();
  expect(s.kv.numFreeBlocks).toBe(s.kv.numBlocks);
  expect(s.scheduler).toMatchObject({ numWaiting: 0, numRunning: 0, encodingEmbeddings: 0 });
}

describe("device: 'cpu'", () => {
  it('answers with the greedy goldens and says it runs on the CPU; the same image again comes from the encoder cache', async () => {
    expect(engine.stats().device.backend).toBe('cpu');
    expect(engine.stats().device.reason).toContain('asked for');
    const a = await engine.chat.completions.create(ask(SAMPLE));
    expect(a.tessera.tokenIds).toEqual(TOKENS);
    expect(a.tessera.media.map((m) => m.source)).toEqual(['encoded']);
    const b = await engine.chat.completions.create(ask(SAMPLE, 'And again?', { max_tokens: 3 }));
    expect(b.tessera.media.map((m) => m.source)).toEqual(['memory']);
    expect(b.tessera.media[0]!.key).toBe(a.tessera.media[0]!.key);
    const s = engine.stats();
    // The second prompt starts with the first one's image blocks (prefix caching); no GPU memory is used.
    expect(s.scheduler.prefixHitTokens).toBeGreaterThan(0);
    expect(s.gpuMemory.peakBytes).toBe(0);
    expect(s.weightBytes).toBeGreaterThan(0);
    expectIdle(engine);
  });

  it('prefix caching: a prompt on the blocks of a request that left, or of one still decoding, gives the same tokens', async () => {
    const hits = () => engine.stats().scheduler.prefixHitTokens;
    // The first ask's blocks outlive it (their K/V copied out as it left).
    await engine.chat.completions.create(ask(SAMPLE));
    let before = hits();
    const again = await engine.chat.completions.create(ask(SAMPLE));
    expect(again.tessera.tokenIds).toEqual(TOKENS);
    expect(hits() - before).toBeGreaterThanOrEqual(engine.stats().kv.blockSize);
    // A second ask that starts while the first still decodes takes the first's blocks from its K/V (an
    // image no earlier request had, so no copies of its blocks exist yet).
    const fresh = await flat(300, 200, 40);
    const first = await engine.chat.completions.create({ ...ask(fresh), stream: true });
    let firstTokens: number[] = [];
    let chunks = 0;
    let second: Promise<number[]> | undefined;
    before = hits();
    for await (const chunk of first) {
      if (chunk.tessera) firstTokens = chunk.tessera.tokenIds;
      if (!second && ++chunks >= 2) second = engine.chat.completions.create(ask(fresh)).then((r) => r.tessera.tokenIds);
    }
    expect(firstTokens.length).toBeGreaterThan(2);
    expect(await second).toEqual(firstTokens);
    expect(hits() - before).toBeGreaterThanOrEqual(engine.stats().kv.blockSize);
    expectIdle(engine);
  });

  it('16 concurrent mixed requests (images, text, greedy and seeded) give what each gives alone, as batching on the CPU promises', async () => {
    const images = [SAMPLE, await flat(200, 150, 10), await flat(600, 200, 80), await flat(90, 300, 150), await flat(1000, 900, 220)];
    const specs = mixedWorkload(16);
    const reqs = specs.map((s) => ({
      ...specRequest(s, s.image === undefined ? undefined : images[s.image]),
      logprobs: true,
      top_logprobs: 2,
      stream: false as const,
    }));
    const solo: number[][] = [];
    const soloScored: ScoredAnswer[] = [];
    for (const r of reqs) {
      const answer = await engine.chat.completions.create(r);
      solo.push(answer.tessera.tokenIds);
      soloScored.push(scored(answer));
    }
    const before = engine.stats().scheduler.numSteps;
    const together = await Promise.all(reqs.map((r) => engine.chat.completions.create(r)));
    const problems = together.flatMap((r, i) =>
      batchAgreement(soloScored[i]!, scored(r), specs[i]!.temperature !== undefined).problems.map((p) => `request ${i}: ${p}`),
    );
    expect(problems).toEqual([]);
    const s = engine.stats();
    expect(s.scheduler.batchSeqs.max).toBeGreaterThanOrEqual(8);
    expect(s.scheduler.prefixHitTokens).toBeGreaterThan(0);
    expect(s.scheduler.numSteps - before).toBeLessThan(solo.reduce((a, t) => a + t.length, 0) / 2);
    expectIdle(engine);
  });

  it('a request cancelled while it streams leaves; the one beside it is unchanged', async () => {
    const story = ask(undefined, 'Tell me a story.', { max_tokens: 12, logprobs: true, top_logprobs: 2 });
    const solo = scored(await engine.chat.completions.create(story));
    const abort = new AbortController();
    const victim = await engine.chat.completions.create({
      ...ask(SAMPLE, 'Describe it.', { max_tokens: 30 }),
      stream: true,
      signal: abort.signal,
    });
    // The stream ends quietly where it was stopped (as the openai client's streams do).
    const run = (async () => {
      let n = 0;
      for await (const c of victim) if (c.choices[0]!.delta.content && ++n === 2) abort.abort(new Error('user pressed stop'));
      return n;
    })();
    const other = await engine.chat.completions.create(story);
    expect(await run).toBeLessThan(30);
    expect(batchAgreement(solo, scored(other), false).problems).toEqual([]);
    expectIdle(engine);
  });

  it('an encode past its timeout fails that request; bad bytes are ImageDecodeError; the engine answers after both', async () => {
    const late = await engine.chat.completions
      .create(ask(await flat(5, 6, 7), 'hi', { tessera: { encodeTimeoutMs: 1 } }))
      .catch((e: unknown) => e);
    expect(late).toBeInstanceOf(EncodeTimeoutError);
    const bad = await engine.chat.completions.create(ask(new TextEncoder().encode('definitely not a PNG'), 'hi')).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(ImageDecodeError);
    const ok = await engine.chat.completions.create(ask(SAMPLE, 'Can you describe this image?', { max_tokens: 4 }));
    expect(ok.tessera.tokenIds).toEqual(TOKENS.slice(0, 4));
    expectIdle(engine);
  });

  it('video (SmolVLM2): the 4-frame clip gives the PyTorch reference tokens; an MP4 asked twice encodes its frames once', async () => {
    requireFfmpeg();
    const video = await createEngine({
      model: `${dir}/smolvlm2-video-tiny`,
      device: 'cpu',
      encoder: { mode: 'in-process' },
      kvCacheTokens: 4096,
    });
    try {
      const g = videoGolden();
      const frames: VideoFrames = { frames: g.frames.map((image, k) => ({ image, timestamp: g.timestamps[k] })), duration: g.duration };
      const r = await video.chat.completions.create({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'video', video: frames },
              { type: 'text', text: g.prompt },
            ],
          },
        ],
        max_tokens: 20,
      });
      expect(r.tessera.tokenIds).toEqual(g.tokens);
      expect(r.usage.prompt_tokens).toBe(g.inputIds.length);
      const mp4 = () => ({
        messages: [
          {
            role: 'user' as const,
            content: [
              { type: 'video' as const, video: clip('count-4s.mp4') },
              { type: 'text' as const, text: 'What happens?' },
            ],
          },
        ],
        max_tokens: 8,
      });
      const first = await video.chat.completions.create(mp4());
      const again = await video.chat.completions.create(mp4());
      expect(first.tessera.media.every((m) => m.source === 'encoded')).toBe(true);
      expect(again.tessera.media.every((m) => m.source === 'memory')).toBe(true);
      expect(again.tessera.tokenIds).toEqual(first.tessera.tokenIds);
    } finally {
      video.destroy();
    }
  });

  it('profiles and the GPU context are refused by name', async () => {
    await expect(engine.profile({ image: SAMPLE })).rejects.toBeInstanceOf(BackendUnsupportedError);
    expect(() => engine.gpu).toThrow(BackendUnsupportedError);
  });
});

describe('choosing', () => {
  it('tessera run --device cpu answers with the tiny model and says where it runs', async () => {
    const args = parseCliArgs([
      'run',
      '--model',
      `${dir}/smolvlm-tiny`,
      '--image',
      'public/sample.png',
      '--prompt',
      'Can you describe this image?',
      '--max-tokens',
      '5',
      '--device',
      'cpu',
    ]);
    let out = '';
    let err = '';
    const { command: _c, verbose: _v, ...rest } = args as RunOptions & { command: 'run'; verbose: boolean };
    const code = await run({ ...rest, out: (t) => (out += t), err: (t) => (err += t) });
    expect(code).toBe(0);
    expect(err).toMatch(/^device: cpu \(the CPU backend \(onnxruntime CPU\), asked for\)$/m);
    expect(out.trim().length).toBeGreaterThan(0);
  });

  it("'auto' on this machine: the CPU backend when the only adapter is a software one, WebGPU on a hardware one", async () => {
    const e = await createEngine({ model: `${dir}/smolvlm-tiny-hd8`, encoder: { mode: 'in-process' } });
    try {
      const d = e.stats().device;
      if (d.backend === 'cpu') expect(d.reason).toMatch(/software one|no WebGPU/);
      else expect(d.reason).toContain('hardware adapter');
      const r = await e.chat.completions.create(ask(SAMPLE, 'Can you describe this image?', { max_tokens: 20 }));
      expect(r.tessera.tokenIds).toEqual(goldenManifest().greedy['smolvlm-tiny-hd8'].tokens);
    } finally {
      e.destroy();
    }
  });

  it("dtype 'f16' on the CPU backend is refused by name (its graphs take float16 K/V)", async () => {
    const err = await createEngine({ model: `${dir}/smolvlm-tiny`, device: 'cpu', dtype: 'f16', encoder: { mode: 'in-process' } }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(BackendUnsupportedError);
    expect((err as Error).message).toContain("use dtype 'f32', 'q8' or 'q4'");
  });

  it("device 'cpu' on a checkpoint without ONNX graphs is OnnxFilesMissingError listing the files and how to make them", async () => {
    expect(existsSync(`${dir}/smolvlm-tiny-so400m/onnx`)).toBe(false);
    const err = await createEngine({ model: `${dir}/smolvlm-tiny-so400m`, device: 'cpu', encoder: { mode: 'in-process' } }).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(OnnxFilesMissingError);
    expect((err as Error).message).toContain('onnx/embed_tokens.onnx');
    expect((err as Error).message).toContain('Optimum');
  });
});
