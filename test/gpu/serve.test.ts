// Continuous batching on the tiny checkpoint in Node: many requests at once give exactly the tokens each
// gives alone (images, text-only, greedy and seeded, different lengths); a forced preemption and a
// cancellation inside a busy batch leave the other answers unchanged; the second turn of a chat about an
// image reuses the first turn's KV blocks (prefix cache) instead of prefilling the image again. After each
// test every KV block is free and every encoder-cache reference is zero.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { Engine } from '../../src/engine/engine';
import type { ChatCompletionRequest } from '../../src/engine/types';
import { RequestAbortedError } from '../../src/errors';
import { testEngine } from '../helpers/engine';
import { mixedWorkload, specRequest, type MixedSpec } from '../helpers/mixed-workload';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';
import type { Idefics3Processor } from '../../src/processor/processor';

// Dozens of requests on a CPU-emulated GPU: minutes, not the default two (more on a loaded machine).
vi.setConfig({ testTimeout: 900_000, hookTimeout: 300_000 });

const gpu = useGpu();
let dir: string;
const images = new Map<number, Uint8Array>();

async function image(i: number): Promise<Uint8Array> {
  let b = images.get(i);
  if (!b) {
    if (i === 0) b = readFileSync(resolve(import.meta.dirname, '../../public/sample.png'));
    else {
      const [w, h] = [
        [200, 150],
        [600, 200],
        [90, 300],
        [1000, 900],
      ][(i - 1) % 4];
      b = await sharp({ create: { width: w, height: h, channels: 3, background: { r: (i * 67) % 256, g: 120, b: (i * 31) % 256 } } })
        .png()
        .toBuffer();
    }
    images.set(i, b);
  }
  return b;
}

async function request(spec: MixedSpec, extra: Partial<ChatCompletionRequest> = {}): Promise<ChatCompletionRequest & { stream?: false }> {
  return { ...specRequest(spec, spec.image === undefined ? undefined : await image(spec.image)), ...extra, stream: false };
}

function expectIdle(engine: Engine): void {
  const s = engine.stats();
  expect(s.kv.numFreeBlocks).toBe(s.kv.numBlocks);
  expect(s.scheduler).toMatchObject({ numWaiting: 0, numRunning: 0, encodingEmbeddings: 0 });
}

beforeAll(() => {
  dir = `${ensureTinyModels()}/smolvlm-tiny`;
});

describe('continuous batching', () => {
  let engine: Engine;
  const keys = new Set<string>();
  beforeAll(async () => {
    engine = await testEngine(gpu(), dir, { kvCacheTokens: 16384, maxTokensPerStep: 256, maxSeqs: 16 });
  });
  afterAll(() => engine?.destroy());

  it('32 concurrent mixed requests give exactly the tokens each gives alone', async () => {
    const specs = mixedWorkload(32);
    const solo: number[][] = [];
    for (const spec of specs) {
      const r = await engine.chat.completions.create(await request(spec));
      solo.push(r.tessera.tokenIds);
      for (const m of r.tessera.media) keys.add(m.key);
    }
    const stepsBefore = engine.stats().scheduler.numSteps;
    const reqs = await Promise.all(specs.map((s) => request(s)));
    const together = await Promise.all(reqs.map((r) => engine.chat.completions.create(r)));
    expect(together.map((r) => r.tessera.tokenIds)).toEqual(solo);
    const s = engine.stats();
    // They really ran together: 16 sequences (maxSeqs) shared steps, in far fewer steps than alone.
    expect(s.scheduler.batchSeqs.max).toBe(16);
    expect(s.scheduler.numSteps - stepsBefore).toBeLessThan(solo.reduce((a, t) => a + t.length, 0) / 3);
    expectIdle(engine);
    for (const k of keys) expect(engine.media.refCount(k)).toBe(0);
  });

  it('a request cancelled inside a busy batch leaves at the next step; the others are unchanged', async () => {
    const specs = mixedWorkload(8).map((s) => ({ ...s, maxTokens: 12 }));
    const solo: number[][] = [];
    for (const spec of specs) solo.push((await engine.chat.completions.create(await request(spec))).tessera.tokenIds);
    const abort = new AbortController();
    const victim = await engine.chat.completions.create({ ...(await request(specs[2], { signal: abort.signal })), stream: true });
    // The stream ends quietly where it was stopped (as the openai client's streams do).
    const victimRun = (async () => {
      let n = 0;
      for await (const c of victim) {
        if (c.choices[0].delta.content && ++n === 2) abort.abort(new Error('user pressed stop'));
      }
      return n;
    })();
    const others = await Promise.all(
      specs.map(async (s, i) => (i === 2 ? undefined : (await engine.chat.completions.create(await request(s))).tessera.tokenIds)),
    );
    expect(await victimRun).toBeLessThan(12);
    others.forEach((t, i) => {
      if (i !== 2) expect(t).toEqual(solo[i]);
    });
    expectIdle(engine);
  });

  it('a request aborted while it waits for a running slot leaves at once', async () => {
    const small = await testEngine(gpu(), dir, { kvCacheTokens: 2048, maxTokensPerStep: 64, maxSeqs: 2 });
    try {
      const long = (i: number) => request({ text: `Tell me story ${i}.`, maxTokens: 40 });
      const running = [small.chat.completions.create(await long(1)), small.chat.completions.create(await long(2))];
      while (small.stats().scheduler.numRunning < 2) await new Promise((r) => setTimeout(r, 5));
      const abort = new AbortController();
      const waiting = small.chat.completions.create({ ...(await long(3)), signal: abort.signal }).catch((e: unknown) => e);
      while (small.stats().scheduler.numWaiting < 1) await new Promise((r) => setTimeout(r, 5));
      const t0 = performance.now();
      abort.abort(new Error('not needed any more'));
      const err = await waiting;
      expect(err).toBeInstanceOf(RequestAbortedError);
      expect(performance.now() - t0).toBeLessThan(100); // not after the running ones finish
      expect(small.stats().scheduler.numWaiting).toBe(0);
      for (const r of await Promise.all(running)) expect(r.tessera.tokenIds.length).toBe(40);
      expectIdle(small);
    } finally {
      small.destroy();
    }
  });

  it('the second turn of a chat about the same image reuses the first turn from the prefix cache', async () => {
    const img = await image(0);
    const turn1: ChatCompletionRequest['messages'] = [
      {
        role: 'user',
        content: [
          { type: 'image', image: img },
          { type: 'text', text: 'What is this?' },
        ],
      },
    ];
    const a = await engine.chat.completions.create({ messages: turn1, max_tokens: 6 });
    const before = engine.stats();
    const turn2: ChatCompletionRequest['messages'] = [
      ...turn1,
      { role: 'assistant', content: a.choices[0].message.content },
      { role: 'user', content: 'And what colour is it?' },
    ];
    const b = await engine.chat.completions.create({ messages: turn2, max_tokens: 4 });
    const after = engine.stats();
    // Every image row of turn 2 sits in the cached prefix: none was prefilled again, nothing encoded.
    const plan = (
      await (engine.processor as Idefics3Processor).prepare([
        {
          role: 'user',
          content: [
            { type: 'image', image: img },
            { type: 'text', text: 'What is this?' },
          ],
        },
      ])
    ).plan;
    const imageEnd = plan.placeholders[0].runs.at(-1)!.offset + plan.placeholders[0].runs.at(-1)!.length;
    expect(b.tessera.cachedTokens).toBeGreaterThanOrEqual(imageEnd);
    expect(after.scheduler.prefixHitTokens - before.scheduler.prefixHitTokens).toBe(b.tessera.cachedTokens);
    expect(after.encoder.encodes).toBe(before.encoder.encodes);
    expect(b.tessera.media[0].source).toBe('memory');
    expectIdle(engine);
  });
});

describe('KV cache growth', () => {
  it('a pool that starts at one block grows under load and gives the tokens of a pool sized up front', async () => {
    const specs = mixedWorkload(6).map((s) => ({ ...s, maxTokens: 20 }));
    const run = async (engine: Engine) =>
      Promise.all(specs.map(async (s) => (await engine.chat.completions.create(await request(s))).tessera.tokenIds));
    const fixed = await testEngine(gpu(), dir, { kvCacheTokens: 2048, kvCacheInitialTokens: 2048, maxTokensPerStep: 128, maxSeqs: 8 });
    let expected: number[][];
    try {
      expect(fixed.stats().kv.numBlocks).toBe(128);
      expected = await run(fixed);
    } finally {
      fixed.destroy();
    }
    const growing = await testEngine(gpu(), dir, { kvCacheTokens: 2048, kvCacheInitialTokens: 16, maxTokensPerStep: 128, maxSeqs: 8 });
    try {
      const before = growing.stats();
      expect(before.kv.numBlocks).toBeLessThanOrEqual(2); // 1, or 2 when the warm-up's batched steps needed them
      expect(await run(growing)).toEqual(expected);
      const after = growing.stats();
      expect(after.kv.numBlocks).toBeGreaterThan(before.kv.numBlocks);
      expect(after.kvCacheBytes).toBeGreaterThan(before.kvCacheBytes);
      expect(after.gpuMemory.byArea['kv-cache']).toBe(after.kvCacheBytes);
      expectIdle(growing);
    } finally {
      growing.destroy();
    }
  });
});

describe('decode priority', () => {
  // The free-running encoder (decodePriority: false) is what every other engine test exercises.
  for (const decodePriority of [{ encoderShare: 0.25 }] as const) {
    it(`decoding while another request's image encodes, paced (share ${decodePriority.encoderShare}), changes no token`, async () => {
      // No prefix cache: the second run of the image request must encode its image again (with the cache,
      // its image rows come from the first run's KV blocks and nothing is encoded beside the decoding).
      const engine = await testEngine(gpu(), dir, { kvCacheTokens: 4096, maxTokensPerStep: 128, decodePriority, prefixCaching: false });
      try {
        // Long enough that the image request's preprocessing and encode start while it still decodes, on
        // any machine speed (40 tokens were over before the encode began on a fast CI runner).
        const long = await request({ text: 'Tell me a long story.', maxTokens: 300 });
        const pic = await request({ image: 4, text: 'What is this?', maxTokens: 4 });
        const soloLong = (await engine.chat.completions.create(long)).tessera.tokenIds;
        const soloPic = (await engine.chat.completions.create(pic)).tessera.tokenIds;
        expect(soloLong.length).toBeGreaterThan(150);
        await engine.encoderCache.clear();
        const before = engine.stats();
        // The long answer starts first; the image request arrives while it decodes and must be encoded.
        const longRun = engine.chat.completions.create(long).then((r) => r.tessera.tokenIds);
        while (engine.stats().scheduler.numRunning === 0) await new Promise((r) => setTimeout(r, 5));
        const [tokens, picTokens] = await Promise.all([longRun, engine.chat.completions.create(pic).then((r) => r.tessera.tokenIds)]);
        expect(tokens).toEqual(soloLong);
        expect(picTokens).toEqual(soloPic);
        const s = engine.stats();
        expect(s.encoder.encodes - before.encoder.encodes).toBe(1);
        expect(s.decodePriority.encoderShare).toBe(decodePriority ? 0.25 : 0);
        // Alone, the image request's encode ran free (nothing decoded beside it); here it ran in grants.
        expect(before.decodePriority.grantedMs).toBe(0);
        if (decodePriority) expect(s.decodePriority.grantedMs).toBeGreaterThan(0);
        else expect(s.decodePriority.grantedMs).toBe(0);
        expectIdle(engine);
      } finally {
        engine.destroy();
      }
    });
  }
});

describe('preemption', () => {
  let engine: Engine;
  beforeAll(async () => {
    // Room for one request at a time and a bit: the others get preempted as sequences grow.
    engine = await testEngine(gpu(), dir, { kvCacheTokens: 768, blockSize: 16, maxTokensPerStep: 128, maxSeqs: 8 });
  });
  afterAll(() => engine?.destroy());

  it('a pool too small for every running sequence preempts the newest; every answer is unchanged', async () => {
    const specs = mixedWorkload(6).map((s) => ({ ...s, maxTokens: 24 }));
    const solo: number[][] = [];
    for (const spec of specs) solo.push((await engine.chat.completions.create(await request(spec))).tessera.tokenIds);
    const together = await Promise.all(specs.map(async (s) => (await engine.chat.completions.create(await request(s))).tessera.tokenIds));
    expect(together).toEqual(solo);
    expect(engine.stats().scheduler.numPreemptions).toBeGreaterThan(0);
    expectIdle(engine);
  });
});
