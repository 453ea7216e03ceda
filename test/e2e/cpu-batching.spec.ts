// The CPU backend's batching contract in Chromium's WebAssembly build (docs/design.md, invariant 9): 32
// requests, greedy and seeded, asked one at a time and then all at once. onnxruntime-web's kernels take other
// paths for a batch of rows, so a batched answer may leave its own at a near-tie only; before that its log
// probabilities agree within the bound (test/helpers/batch-agreement.ts), as test/cpu/http-server.test.ts
// asserts in Node for the same requests through `tessera serve`.

import { expect, test } from '@playwright/test';
import { batchAgreement } from '../helpers/batch-agreement';

test('32 requests at once on the CPU backend in Chromium (WebAssembly) keep the batching contract', async ({ page }) => {
  await page.goto('/parity.html');
  await expect(page.locator('body')).toHaveAttribute('data-ready', 'yes');
  const requests = Array.from({ length: 32 }, (_, i) => ({
    messages: [{ role: 'user', content: `Question number ${100 + i}: what comes next?` }],
    max_tokens: 8 + (i % 5),
    logprobs: true,
    top_logprobs: 2,
    ...(i % 2 === 1 ? { temperature: 0.7, seed: i } : {}),
  }));
  const r = await page.evaluate(([reqs]) => window.tesseraBatch!('/models/smolvlm-tiny/', 'wasm', reqs), [requests] as const);
  expect(r.backend).toBe('wasm');
  expect(r.together).toHaveLength(32);
  const checks = r.alone.map((a, i) => batchAgreement(a, r.together[i]!, i % 2 === 1));
  expect(checks.flatMap((c, i) => c.problems.map((p) => `request ${i}: ${p}`))).toEqual([]);
  const diverged = checks.flatMap((c, i) => (c.divergesAt === undefined ? [] : [`${i}@${c.divergesAt}`]));
  const maxDelta = Math.max(...checks.map((c) => c.maxDelta));
  test.info().annotations.push({
    type: 'batched vs alone',
    description: `max |Δlogprob| ${maxDelta.toExponential(2)}; left their own: ${diverged.join(' ') || 'none'}`,
  });
  // Every greedy answer was scored up to where it ends or leaves its own: the comparison was made.
  for (const [i, a] of r.alone.entries()) expect(a.logprobs.length, `request ${i}`).toBeGreaterThanOrEqual(a.tokenIds.length - 1);
  expect(r.maxBatch).toBeGreaterThan(1);
});
