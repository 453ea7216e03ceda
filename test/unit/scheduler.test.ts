// The scheduler with integers only and a fake model runner (test/unit/scheduler-harness.ts), one behaviour
// per test: budgets, the doorstep clamp, the encoder budget, preemption and resume, prefix caching keyed by
// media, lazy LRU eviction, and cancellation in every state.

import { describe, expect, it } from 'vitest';
import { ContextLengthError, KvCacheTooSmallError } from '../../src/errors';
import { BlockPool } from '../../src/kv/block-pool';
import { createBlockHasher } from '../../src/kv/block-hash';
import { KvManager } from '../../src/kv/kv-manager';
import { Scheduler } from '../../src/scheduler/scheduler';
import { drain, harness, prompt, soloTokens } from './scheduler-harness';

describe('Scheduler: token budget', () => {
  it('chunks prefill to the token budget and fills a step with the next request', async () => {
    const h = await harness({ numBlocks: 64, blockSize: 16, maxTokensPerStep: 64 });
    const a = h.scheduler.add({ id: 1, promptIds: prompt(100, 1), maxTokens: 3 });
    const b = h.scheduler.add({ id: 2, promptIds: prompt(50, 2), maxTokens: 3 });
    let s = h.step().plan;
    expect(s.seqs.map((x) => [x.req.id, x.start, x.numTokens, x.sample])).toEqual([[1, 0, 64, false]]);
    s = h.step().plan;
    expect(s.seqs.map((x) => [x.req.id, x.start, x.numTokens, x.sample])).toEqual([
      [1, 64, 36, true],
      [2, 0, 28, false],
    ]);
    s = h.step().plan;
    // A decodes first (1 row), then B's prefill continues with what is left.
    expect(s.seqs.map((x) => [x.req.id, x.start, x.numTokens, x.sample])).toEqual([
      [1, 100, 1, true],
      [2, 28, 22, true],
    ]);
    expect(s.numTokens).toBe(23);
    drain(h);
    expect(a.outputIds).toEqual(soloTokens(a.promptIds, 3));
    expect(b.outputIds).toEqual(soloTokens(b.promptIds, 3));
    expect(h.pool.numFree).toBe(64);
    h.pool.checkInvariants();
  });

  it('gives every decoding sequence its token before any prefill chunk', async () => {
    const h = await harness({ numBlocks: 64, blockSize: 16, maxTokensPerStep: 8, maxRunning: 8 });
    for (let i = 0; i < 3; i++) h.scheduler.add({ id: i, promptIds: prompt(2, i), maxTokens: 20 });
    h.step(); // three 2-token prompts prefill together
    h.scheduler.add({ id: 9, promptIds: prompt(40, 9), maxTokens: 2 });
    const s = h.step().plan;
    expect(s.seqs.map((x) => [x.req.id, x.numTokens])).toEqual([
      [0, 1],
      [1, 1],
      [2, 1],
      [9, 5],
    ]);
  });

  it('runs at most maxRunning sequences; the rest wait their turn', async () => {
    const h = await harness({ numBlocks: 64, blockSize: 16, maxTokensPerStep: 64, maxRunning: 2 });
    for (let i = 0; i < 4; i++) h.scheduler.add({ id: i, promptIds: prompt(4, i), maxTokens: 2 });
    const s = h.step().plan;
    expect(s.seqs.map((x) => x.req.id)).toEqual([0, 1]);
    expect(h.scheduler.stats()).toMatchObject({ numRunning: 2, numWaiting: 2 });
    drain(h);
    expect(h.pool.numFree).toBe(64);
  });

  it('names what limits the context window and the option that raises it', async () => {
    const byCache = await harness({
      numBlocks: 8,
      blockSize: 16,
      contextWindow: 96,
      contextLimits: { modelPositions: 2048, kvCacheTokens: 96 },
    });
    expect(() => byCache.scheduler.add({ id: 1, promptIds: prompt(90, 1), maxTokens: 10 })).toThrowError(
      "the prompt has 90 tokens and 10 more were asked for, but the context window is 96 tokens (the engine option kvCacheTokens, 96, is below the model's limit of 2048: raise kvCacheTokens up to 2048, or shorten the prompt",
    );
    const byModel = await harness({
      numBlocks: 8,
      blockSize: 16,
      contextWindow: 96,
      contextLimits: { modelPositions: 96, kvCacheTokens: 4096 },
    });
    const e = (() => {
      try {
        byModel.scheduler.add({ id: 1, promptIds: prompt(90, 1), maxTokens: 10 });
      } catch (caught) {
        return caught as ContextLengthError;
      }
    })();
    expect(e).toBeInstanceOf(ContextLengthError);
    expect(e!.message).toContain("(the model's limit, max_position_embeddings in its config.json: shorten the prompt");
    expect([e!.modelPositions, e!.kvCacheTokens, e!.contextWindow]).toEqual([96, 4096, 96]);
  });

  it('refuses, alone, a request the whole cache could never hold, and one past the context window', async () => {
    const h = await harness({ numBlocks: 4, blockSize: 16, contextWindow: 100 });
    const ok = h.scheduler.add({ id: 1, promptIds: prompt(10, 1), maxTokens: 5 });
    expect(() => h.scheduler.add({ id: 2, promptIds: prompt(60, 2), maxTokens: 10 })).toThrowError(KvCacheTooSmallError);
    expect(() => h.scheduler.add({ id: 2, promptIds: prompt(60, 2), maxTokens: 10 })).toThrowError(
      /needs up to 70 tokens .* whole cache holds 64/,
    );
    expect(() => h.scheduler.add({ id: 3, promptIds: prompt(40, 3), maxTokens: 61 })).toThrowError(ContextLengthError);
    drain(h);
    expect(ok.outputIds).toEqual(soloTokens(ok.promptIds, 5));
  });

  it('stops at a stop token and at max_tokens', async () => {
    const h = await harness({ numBlocks: 64, blockSize: 16 });
    const p = prompt(5, 3);
    const solo = soloTokens(p, 6);
    const a = h.scheduler.add({ id: 1, promptIds: p, maxTokens: 6, stopIds: new Set([solo[2]]) });
    const b = h.scheduler.add({ id: 2, promptIds: p, maxTokens: 4 });
    drain(h);
    expect(a.outputIds).toEqual(solo.slice(0, 3));
    expect(a.finishCause).toBe('stop');
    expect(b.outputIds).toEqual(solo.slice(0, 4));
    expect(b.finishCause).toBe('length');
  });
});

describe('Scheduler: media and the encoder budget', () => {
  it('stops a chunk at the doorstep of an image that is not ready, and goes through it once ready', async () => {
    const h = await harness({ numBlocks: 64, blockSize: 16, maxTokensPerStep: 64 });
    const r = h.scheduler.add({
      id: 1,
      promptIds: prompt(50, 1),
      maxTokens: 2,
      media: [{ key: 'img', start: 10, end: 30, numEmbeddings: 20 }],
    });
    let s = h.step({ settleEncodes: false }).plan;
    expect(s.seqs.map((x) => [x.start, x.numTokens])).toEqual([[0, 10]]);
    expect(s.encode.map((e) => e.item.key)).toEqual(['img']);
    expect(s.numDoorstepStalls).toBe(1);
    s = h.step({ settleEncodes: false }).plan; // still encoding: nothing to compute
    expect(s.seqs).toEqual([]);
    expect(s.encode).toEqual([]);
    h.scheduler.encodeSettled(r, r.media[0], true);
    s = h.step().plan;
    expect(s.seqs.map((x) => [x.start, x.numTokens, x.sample])).toEqual([[10, 40, true]]);
    expect(h.scheduler.stats().numDoorstepStalls).toBe(2);
  });

  it('starts items of different requests together while they fit the budget (one encoder batch), whole items only', async () => {
    const h = await harness({ numBlocks: 64, blockSize: 16, maxTokensPerStep: 64, encoderBudget: 64 });
    const media = (k: string) => [{ key: k, start: 2, end: 22, numEmbeddings: 20 }];
    const a = h.scheduler.add({ id: 1, promptIds: prompt(30, 1), maxTokens: 1, media: media('a') });
    const b = h.scheduler.add({ id: 2, promptIds: prompt(30, 2), maxTokens: 1, media: media('b') });
    const c = h.scheduler.add({ id: 3, promptIds: prompt(30, 3), maxTokens: 1, media: media('c') });
    const d = h.scheduler.add({ id: 4, promptIds: prompt(30, 4), maxTokens: 1, media: media('d') });
    const s = h.step({ settleEncodes: false }).plan;
    expect(s.encode.map((e) => e.item.key)).toEqual(['a', 'b', 'c']); // 60 of 64; 'd' would make 80
    expect(h.scheduler.stats().encodingEmbeddings).toBe(60);
    expect(h.step({ settleEncodes: false }).plan.encode).toEqual([]);
    h.scheduler.encodeSettled(a, a.media[0], true);
    expect(h.step({ settleEncodes: false }).plan.encode.map((e) => e.item.key)).toEqual(['d']);
    for (const r of [b, c, d]) h.scheduler.encodeSettled(r, r.media[0], true);
    drain(h);
    expect(h.scheduler.stats().encodingEmbeddings).toBe(0);
  });

  it("counts an item's encode cost against the budget (a pruned video encodes more than it fills)", async () => {
    const h = await harness({ numBlocks: 64, blockSize: 16, maxTokensPerStep: 64, encoderBudget: 64 });
    // 20 placeholder tokens, but 48 embeddings to encode (all frames of a video before EVS keeps 20).
    const a = h.scheduler.add({
      id: 1,
      promptIds: prompt(30, 1),
      maxTokens: 1,
      media: [{ key: 'pruned', start: 2, end: 22, numEmbeddings: 20, encodeCost: 48 }],
    });
    h.scheduler.add({ id: 2, promptIds: prompt(30, 2), maxTokens: 1, media: [{ key: 'image', start: 2, end: 22, numEmbeddings: 20 }] });
    expect(h.step({ settleEncodes: false }).plan.encode.map((e) => e.item.key)).toEqual(['pruned']); // 48 + 20 > 64
    expect(h.scheduler.stats().encodingEmbeddings).toBe(48);
    h.scheduler.encodeSettled(a, a.media[0], true);
    expect(h.scheduler.stats().encodingEmbeddings).toBe(0);
  });

  it('runs an item larger than the whole encoder budget alone', async () => {
    const h = await harness({ numBlocks: 64, blockSize: 16, encoderBudget: 16 });
    h.scheduler.add({ id: 1, promptIds: prompt(60, 1), maxTokens: 1, media: [{ key: 'big', start: 5, end: 45, numEmbeddings: 40 }] });
    h.scheduler.add({ id: 2, promptIds: prompt(30, 2), maxTokens: 1, media: [{ key: 'small', start: 5, end: 15, numEmbeddings: 10 }] });
    const s = h.step({ settleEncodes: false }).plan;
    expect(s.encode.map((e) => e.item.key)).toEqual(['big']);
  });

  it('does not encode an item whose tokens all come from the prefix cache', async () => {
    const h = await harness({ numBlocks: 64, blockSize: 4, maxTokensPerStep: 64 });
    const p = prompt(40, 5);
    const media = [{ key: 'img', start: 4, end: 20, numEmbeddings: 16 }];
    h.scheduler.add({ id: 1, promptIds: p, maxTokens: 1, media });
    drain(h);
    h.scheduler.add({ id: 2, promptIds: p, maxTokens: 1, media });
    const s = h.step({ settleEncodes: false }).plan;
    expect(s.encode).toEqual([]);
    expect(s.seqs.map((x) => [x.start, x.numTokens])).toEqual([[36, 4]]);
  });
});

describe('Scheduler: KV blocks and preemption', () => {
  it('takes blocks as sequences grow, not up front', async () => {
    const h = await harness({ numBlocks: 64, blockSize: 4 });
    h.scheduler.add({ id: 1, promptIds: prompt(6, 1), maxTokens: 30 });
    h.step();
    expect(h.pool.numFree).toBe(62); // 6 tokens + room for the 7th computed next step = 2 blocks
    for (let i = 0; i < 3; i++) h.step();
    expect(h.pool.numFree).toBe(62 - 1); // 9 tokens computed after 3 decodes -> 3 blocks
  });

  it('preempts the most recently admitted sequence when the pool runs dry; it resumes with the same tokens', async () => {
    const h = await harness({ numBlocks: 10, blockSize: 4, maxTokensPerStep: 64 });
    const reqs = [1, 2, 3].map((id) => h.scheduler.add({ id, promptIds: prompt(6, id), maxTokens: 10 }));
    let preempted: number[] = [];
    let steps = 0;
    while (h.scheduler.hasWork() && steps++ < 500) {
      const { plan } = h.step();
      preempted = preempted.concat(plan.preempted.map((r) => r.id));
      h.pool.checkInvariants();
    }
    expect(preempted.length).toBeGreaterThan(0);
    expect(preempted[0]).toBe(3); // the last admitted goes first
    for (const r of reqs) expect(r.outputIds).toEqual(soloTokens(r.promptIds, 10));
    expect(h.scheduler.stats().numPreemptions).toBe(preempted.length);
    expect(h.pool.numFree).toBe(10);
  });
});

describe('Scheduler: prefix caching keyed by media', () => {
  it('chains block hashes through the parent, tokens and media keys', async () => {
    const hasher = await createBlockHasher();
    const toks = [1, 2, 3, 4];
    const a = hasher.hash(undefined, toks, [{ mediaKey: 'x', offset: 0 }]);
    expect(hasher.hash(undefined, toks, [{ mediaKey: 'x', offset: 0 }])).toBe(a);
    expect(hasher.hash(undefined, toks, [{ mediaKey: 'y', offset: 0 }])).not.toBe(a);
    expect(hasher.hash(undefined, toks, [{ mediaKey: 'x', offset: -1 }])).not.toBe(a);
    expect(hasher.hash(undefined, toks, [])).not.toBe(a);
    expect(hasher.hash(a, toks, [])).not.toBe(hasher.hash(undefined, toks, []));
    expect(hasher.hash(undefined, [1, 2, 3, 5], [{ mediaKey: 'x', offset: 0 }])).not.toBe(a);
  });

  it('reuses the longest cached prefix of a finished request and computes only the rest', async () => {
    const h = await harness({ numBlocks: 64, blockSize: 4, maxTokensPerStep: 64 });
    const p = prompt(30, 7);
    const a = h.scheduler.add({ id: 1, promptIds: p, maxTokens: 4 });
    drain(h);
    const rowsBefore = h.model.numRows;
    const b = h.scheduler.add({ id: 2, promptIds: p, maxTokens: 4 });
    const s = h.step().plan;
    expect(s.seqs.map((x) => [x.start, x.numTokens])).toEqual([[28, 2]]);
    expect(b.numCachedTokens).toBe(28);
    drain(h);
    expect(b.outputIds).toEqual(a.outputIds);
    expect(h.model.numRows - rowsBefore).toBe(2 + 3);
    expect(h.scheduler.stats()).toMatchObject({ prefixHitTokens: 28, prefixQueryTokens: 60 });
  });

  it('never shares blocks across different images in the same placeholder tokens', async () => {
    const h = await harness({ numBlocks: 64, blockSize: 4, maxTokensPerStep: 64 });
    const p = prompt(30, 8);
    h.scheduler.add({ id: 1, promptIds: p, maxTokens: 2, media: [{ key: 'cat', start: 8, end: 20, numEmbeddings: 12 }] });
    drain(h);
    const b = h.scheduler.add({ id: 2, promptIds: p, maxTokens: 2, media: [{ key: 'dog', start: 8, end: 20, numEmbeddings: 12 }] });
    drain(h); // the fake model checks every slot read holds 'dog' rows, never 'cat' ones
    expect(b.numCachedTokens).toBe(8); // the text before the image only
  });

  it('a second chat turn that repeats the first (answer included) prefills only the new tokens', async () => {
    const h = await harness({ numBlocks: 64, blockSize: 4, maxTokensPerStep: 64 });
    const media = [{ key: 'img', start: 3, end: 19, numEmbeddings: 16 }];
    const turn1 = prompt(25, 9);
    const a = h.scheduler.add({ id: 1, promptIds: turn1, maxTokens: 8, media });
    drain(h);
    const turn2 = Uint32Array.from([...turn1, ...a.outputIds, 77, 78, 79]);
    const b = h.scheduler.add({ id: 2, promptIds: turn2, maxTokens: 3, media });
    const s = h.step({ settleEncodes: false }).plan;
    expect(s.encode).toEqual([]); // the image rows come from the KV cache
    expect(b.numCachedTokens).toBe(32); // 25 + 8 - 1 = 32 tokens of turn 1 hold KV: 8 full blocks
    expect(s.seqs[0].numTokens).toBe(turn2.length - 32);
    drain(h);
  });

  it('evicts lazily: unhashed blocks first, then the least recently used prefix', async () => {
    const h = await harness({ numBlocks: 8, blockSize: 4, maxTokensPerStep: 64 });
    const pa = prompt(9, 1);
    const pb = prompt(9, 2);
    h.scheduler.add({ id: 1, promptIds: pa, maxTokens: 1 }); // 2 full hashed blocks + 1 partial
    drain(h);
    h.scheduler.add({ id: 2, promptIds: pb, maxTokens: 1 });
    drain(h);
    expect(h.pool.stats()).toMatchObject({ numFree: 8, numCached: 4, evictions: 0 });
    // 6 blocks needed: the 4 never-hashed blocks go first, then A's older prefix (2 blocks), B's survives.
    h.scheduler.add({ id: 3, promptIds: prompt(21, 3), maxTokens: 1 });
    drain(h);
    expect(h.pool.stats().evictions).toBe(2);
    const b2 = h.scheduler.add({ id: 4, promptIds: pb, maxTokens: 1 });
    h.step();
    expect(b2.numCachedTokens).toBe(8);
    const a2 = h.scheduler.add({ id: 5, promptIds: pa, maxTokens: 1 });
    h.step();
    expect(a2.numCachedTokens).toBe(0);
  });
});

describe('Scheduler: cancellation', () => {
  for (const when of ['waiting', 'encoding', 'prefilling', 'decoding', 'preempted'] as const) {
    it(`an abort while ${when} frees its blocks at once and leaves the others untouched`, async () => {
      const h = await harness({ numBlocks: when === 'preempted' ? 8 : 64, blockSize: 4, maxTokensPerStep: 16 });
      const other = h.scheduler.add({ id: 1, promptIds: prompt(6, 1), maxTokens: 12 });
      const media = when === 'encoding' ? [{ key: 'm', start: 4, end: 12, numEmbeddings: 8 }] : [];
      const victim = h.scheduler.add({
        id: 2,
        promptIds: prompt(when === 'prefilling' ? 40 : when === 'encoding' ? 16 : 6, 2),
        maxTokens: 12,
        media,
      });
      const until: Record<typeof when, () => boolean> = {
        waiting: () => true,
        encoding: () => victim.media[0].state === 'encoding',
        prefilling: () => victim.status === 'running' && victim.numComputed > 0 && victim.numComputed < victim.promptLength,
        decoding: () => victim.outputIds.length > 2,
        preempted: () => victim.status === 'preempted',
      };
      let guard = 0;
      while (!until[when]() && guard++ < 200) h.step({ settleEncodes: false });
      expect(until[when]()).toBe(true);
      const startedEncode = victim.media[0]?.state === 'encoding';
      h.scheduler.finish(victim, 'abort');
      expect(victim.status).toBe('finished');
      expect(h.kv.has(2)).toBe(false);
      if (startedEncode) h.scheduler.encodeSettled(victim, victim.media[0], true); // settles after the abort
      drain(h);
      expect(other.outputIds).toEqual(soloTokens(other.promptIds, 12));
      expect(h.pool.numFree).toBe(h.pool.numBlocks);
      expect(h.scheduler.stats()).toMatchObject({ numWaiting: 0, numRunning: 0, encodingEmbeddings: 0 });
      h.pool.checkInvariants();
    });
  }
});

describe('Scheduler: prefix caching off', () => {
  it('computes every prompt token again', async () => {
    const kv = new KvManager(new BlockPool(64, 4));
    const s = new Scheduler(
      { maxTokensPerStep: 64, encoderBudget: 100, maxRunning: 4, contextWindow: 1000 },
      kv,
      await createBlockHasher(),
      false,
    );
    const p = prompt(30, 7);
    s.add({ id: 1, promptIds: p, maxTokens: 2 });
    while (s.hasWork()) s.update(s.schedule(), new Map([[1, 5]]));
    s.add({ id: 2, promptIds: p, maxTokens: 2 });
    expect(s.schedule().seqs.map((x) => [x.start, x.numTokens])).toEqual([[0, 30]]);
    expect(s.stats().prefixHitTokens).toBe(0);
  });
});
