// ModelRunner (src/model/runner/): a step of several sequences gives each the token it gets alone; one-token
// sequences that share one sequence's blocks give the logits of that sequence's chunk row by row (what
// teacher forcing relies on); scratch sequences free their blocks whatever happens; a step too wide for the
// runner's limits is refused before it reaches the device.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InternalError, KvCacheFullError } from '../../src/errors';
import { NodeDirSource } from '../../src/io/model-source-node';
import { loadModel } from '../../src/families/load';
import type { LoadedModel } from '../../src/model/load';
import type { RunnerSeq } from '../../src/model/runner/model-runner';
import { expectLogitProcessors } from '../helpers/logit-processors';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

const gpu = useGpu();
let model: LoadedModel;
const GREEDY = { temperature: 0, topK: 0, topP: 1, seed: 0, step: 0 };
const ids = (n: number, k: number) => Uint32Array.from({ length: n }, (_, i) => (i * k + 5) % 1000);

beforeAll(async () => {
  model = await loadModel(gpu(), new NodeDirSource(`${ensureTinyModels()}/smolvlm-tiny`), {
    kvCacheTokens: 1024,
    maxTokensPerStep: 64,
    maxSeqs: 8,
    vision: false,
  });
});
afterAll(() => model?.destroy());

describe('ModelRunner', () => {
  it('reports its limits from the options and the KV cache', () => {
    const { limits, kv, text } = model.runner;
    expect(limits.maxTokensPerStep).toBe(64);
    expect(limits.maxSeqs).toBe(8);
    expect(limits.contextWindow).toBe(Math.min(text.maxPositions, model.lm.maxBlocksPerSeq * kv.blockSize));
  });

  it('gives each sequence of a batched step the token it gets alone', async () => {
    const { runner } = model;
    const alone = async (tokenIds: Uint32Array) =>
      runner.withScratchSequence(
        tokenIds.length,
        async (seqId) => (await runner.run([{ seqId, tokenIds, start: 0, sample: GREEDY }])).tokens[0],
      );
    const a = ids(13, 37);
    const b = ids(5, 91);
    const expected = [await alone(a), await alone(b)];
    const together = await runner.withScratchSequence(a.length, (sa) =>
      runner.withScratchSequence(
        b.length,
        async (sb) =>
          (
            await runner.run([
              { seqId: sa, tokenIds: a, start: 0, sample: GREEDY },
              { seqId: sb, tokenIds: b, start: 0, sample: GREEDY },
            ])
          ).tokens,
      ),
    );
    expect(together).toEqual(expected);
    expect(expected.every((t) => t !== null && t < runner.text.vocabSize)).toBe(true);
  });

  it("one-token sequences sharing one sequence's blocks give its chunk's logits row by row", async () => {
    const { runner } = model;
    const chunk = ids(6, 53);
    const vocab = runner.text.vocabSize;
    // The chunk's rows one at a time, each step sampling its last row: the reference logits.
    const reference = await runner.withScratchSequence(chunk.length, async (seqId) => {
      const rows: Float32Array[] = [];
      for (let p = 0; p < chunk.length; p++)
        rows.push(
          (await runner.run([{ seqId, tokenIds: chunk.subarray(p, p + 1), start: p, sample: GREEDY }], { readLogits: true })).logits!,
        );
      return rows;
    });
    const shared = await runner.withScratchSequence(chunk.length, async (seqId) => {
      const seqs: RunnerSeq[] = Array.from(chunk, (_, p) => ({ seqId, tokenIds: chunk.subarray(p, p + 1), start: p, sample: GREEDY }));
      return (await runner.run(seqs, { readLogits: true })).logits!;
    });
    for (let p = 0; p < chunk.length; p++) {
      const row = shared.subarray(p * vocab, (p + 1) * vocab);
      let maxDiff = 0;
      for (let i = 0; i < vocab; i++) maxDiff = Math.max(maxDiff, Math.abs(row[i] - reference[p][i]));
      expect(maxDiff, `row ${p}`).toBeLessThan(1e-4);
    }
  });

  it("applies each sampling row's penalties and token mask before argmax and the sampler", () => expectLogitProcessors(model.runner));

  it('frees a scratch sequence when its use throws, and refuses one larger than the cache', async () => {
    const { runner } = model;
    const free = runner.kv.stats().numFree;
    await expect(runner.withScratchSequence(40, () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(runner.kv.stats().numFree).toBe(free);
    await expect(runner.withScratchSequence(1 << 20, async () => 0)).rejects.toBeInstanceOf(KvCacheFullError);
    expect(runner.kv.stats().numFree).toBe(free);
  });

  it('refuses a step over more sequences than maxSeqs', async () => {
    const { runner } = model;
    await runner.withScratchSequence(9, async (seqId) => {
      const seqs = Array.from({ length: 9 }, (_, p) => ({ seqId, tokenIds: Uint32Array.of(1), start: p }));
      await expect(runner.run(seqs)).rejects.toBeInstanceOf(InternalError);
    });
  });
});
