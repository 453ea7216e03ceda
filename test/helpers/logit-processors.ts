// A ModelRunner's logit processors (penalties and a token mask per sampling row) against the reference:
// one step of three sequences with processors, the same step without, and the processed logits must be
// the plain ones through adjustLogitsReference, the tokens argmax / sampleReference of the processed
// logits. Shared by the WebGPU runner's and the CPU runner's tests.

import { expect } from 'vitest';
import { argmaxReference } from '../../src/kernels/argmax-reference';
import { adjustLogitsReference, isAllowed, maskWords, type LogitAdjust } from '../../src/kernels/logit-adjust-reference';
import { sampleReference } from '../../src/kernels/sample-reference';
import type { ModelRunner, RunnerSeq, SamplingParams } from '../../src/model/runner/model-runner';

const GREEDY: SamplingParams = { temperature: 0, topK: 0, topP: 1, seed: 0, step: 0 };

export async function expectLogitProcessors(runner: ModelRunner): Promise<void> {
  const vocab = runner.text.vocabSize;
  const prompt = (n: number, k: number) => Uint32Array.from({ length: n }, (_, i) => (i * k + 7) % Math.min(vocab, 1000));
  const a = prompt(5, 31);
  const b = prompt(7, 17);
  const c = prompt(4, 13);
  const plainRun = async (ids: Uint32Array) =>
    runner.withScratchSequence(
      ids.length,
      async (seqId) => (await runner.run([{ seqId, tokenIds: ids, start: 0, sample: GREEDY }], { readLogits: true })).logits!,
    );
  // The plain logits of each sequence's last row (alone; a batched step gives the same within 1e-4).
  const plain = [await plainRun(a), await plainRun(b), await plainRun(c)];
  // B: penalties on its greedy token (pushing it down) and on others; C: a mask of 40 tokens (its greedy
  // one excluded) with penalties on some of them, sampled.
  const greedyB = argmaxReference(plain[1]!, { rows: 1, cols: vocab })[0]!;
  const greedyC = argmaxReference(plain[2]!, { rows: 1, cols: vocab })[0]!;
  const allowed = new Int32Array(maskWords(vocab));
  const allowedIds = Array.from({ length: 40 }, (_, i) => (i * 97 + 3) % vocab).filter((id) => id !== greedyC);
  for (const id of allowedIds) allowed[id >>> 5]! |= 1 << (id & 31);
  const adjust: Array<LogitAdjust | undefined> = [
    undefined,
    { penalties: { ids: Uint32Array.of(greedyB, 1, 2, 3), amounts: Float32Array.of(50, -0.5, 1.25, 2) } },
    { allowed, penalties: { ids: Uint32Array.of(allowedIds[0]!, allowedIds[1]!, greedyC), amounts: Float32Array.of(0.75, -1, 3) } },
  ];
  const sampleC: SamplingParams = { temperature: 0.9, topK: 20, topP: 0.95, seed: 11, step: 2 };
  const out = await runner.withScratchSequence(a.length, (sa) =>
    runner.withScratchSequence(b.length, (sb) =>
      runner.withScratchSequence(c.length, async (sc) => {
        const seqs: RunnerSeq[] = [
          { seqId: sa, tokenIds: a, start: 0, sample: GREEDY, adjust: adjust[0] },
          { seqId: sb, tokenIds: b, start: 0, sample: GREEDY, adjust: adjust[1] },
          { seqId: sc, tokenIds: c, start: 0, sample: sampleC, adjust: adjust[2] },
        ];
        return runner.run(seqs, { readLogits: true });
      }),
    ),
  );
  const want = new Float32Array(3 * vocab);
  for (const [r, row] of plain.entries()) want.set(row, r * vocab);
  adjustLogitsReference(want, vocab, adjust);
  let maxDiff = 0;
  for (let i = 0; i < want.length; i++) maxDiff = Math.max(maxDiff, Math.abs(out.logits![i]! - want[i]!));
  expect(maxDiff).toBeLessThan(1e-4);
  const greedy = argmaxReference(out.logits!, { rows: 3, cols: vocab });
  expect(out.tokens[0]).toBe(greedy[0]);
  expect(out.tokens[1]).toBe(greedy[1]);
  expect(out.tokens[1]).not.toBe(greedyB);
  const sampled = sampleReference(out.logits!, { rows: 3, vocab }, [GREEDY, GREEDY, sampleC], greedy);
  expect(out.tokens[2]).toBe(sampled[2]);
  expect(isAllowed(allowed, out.tokens[2]!)).toBe(true);
}
