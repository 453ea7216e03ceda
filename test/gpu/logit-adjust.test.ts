// logit-adjust.wgsl (penalties, then a token mask) followed by argmax and the sampler, against their
// references: the adjusted logits exactly, the sampled ids equal for the same seeds. Vocabulary sizes that
// do not fill the mask's last word, greedy and sampled rows, masks that leave one token, and top-k wider
// than what the mask allows (masked tokens tie at the threshold with weight 0 and are never drawn).

import { describe, expect, it } from 'vitest';
import { isAllowed, packLogitAdjust } from '../../src/kernels/logit-adjust';
import { logitAdjustCase } from '../../src/selfcheck/cases-logits';
import { expectCasePasses, useGpu } from './gpu';

const gpu = useGpu();

describe('logit-adjust', () => {
  for (const vocab of [1, 31, 33, 777, 4099]) {
    it(`vocab ${vocab}: every kind of row, sampled`, () => expectCasePasses(gpu(), logitAdjustCase({ rows: 5, vocab })));
  }
  it('SmolVLM vocab 49280: every kind of row, greedy', () =>
    expectCasePasses(gpu(), logitAdjustCase({ rows: 5, vocab: 49280 }, { sampling: { temperature: 0, topK: 0, topP: 1 } })));
  it('SmolVLM vocab 49280: masks under top-k 50 and top-p 0.9 at temperature 0.7', () =>
    expectCasePasses(
      gpu(),
      logitAdjustCase(
        { rows: 4, vocab: 49280 },
        { rows: ['mask', 'both', 'one-allowed', 'penalties'], sampling: { temperature: 0.7, topK: 50, topP: 0.9 } },
      ),
    ));
  it('top-k past the allowed tokens and temperature alone, at small and large temperatures', async () => {
    for (const temperature of [0.2, 1, 3]) {
      for (const sampling of [
        { temperature, topK: 5000, topP: 1 },
        { temperature, topK: 0, topP: 1 },
      ]) {
        await expectCasePasses(
          gpu(),
          logitAdjustCase(
            { rows: 4, vocab: 3000 },
            { rows: ['one-allowed', 'mask', 'one-allowed', 'both'], sampling, seed: 40 + temperature },
          ),
        );
      }
    }
  });
  it('WG 32 and 256', async () => {
    for (const workgroupSize of [32, 256]) await expectCasePasses(gpu(), logitAdjustCase({ rows: 5, vocab: 777 }, { workgroupSize }));
  });

  it('packs masks and penalties in row order, rows without processors pointing nowhere', () => {
    const mask = new Int32Array(2).fill(-1);
    mask[1] = 0b101;
    const p = packLogitAdjust(
      [
        undefined,
        { allowed: mask, penalties: { ids: Uint32Array.of(3, 34), amounts: Float32Array.of(1.5, -2) } },
        { penalties: { ids: Uint32Array.of(7), amounts: Float32Array.of(0.25) } },
      ],
      4,
      40,
    );
    expect([...p.rowAdjust]).toEqual([0xffffffff, 0, 0, 0, 0, 0, 2, 0, 0xffffffff, 2, 1, 0, 0xffffffff, 0, 0, 0]);
    expect([...p.masks]).toEqual([0xffffffff, 5]);
    expect(new Float32Array(p.penalties.buffer)[1]).toBe(1.5);
    expect([p.penalties[0], p.penalties[2], p.penalties[4]]).toEqual([3, 34, 7]);
    expect(isAllowed(mask, 32) && !isAllowed(mask, 33) && isAllowed(mask, 34)).toBe(true);
  });
});
