// response_format in Chromium: XGrammar's WebAssembly loads in the page (through Vite, as an app bundles
// it), and JSON mode and two JSON schemas on the tiny random-weight checkpoint give answers that parse and
// validate, alone and 8 at once, on WebGPU (the mask in logit-adjust.wgsl) and on the CPU backend
// (onnxruntime-web). The cases and the validator are test/helpers/json-formats.ts's, as in Node.

import { expect, test } from '@playwright/test';
import { batchAgreement } from '../helpers/batch-agreement';
import { jsonProblems, jsonRequests } from '../helpers/json-formats';

for (const device of ['webgpu', 'wasm'] as const) {
  test(`JSON mode and two schemas in Chromium on ${device}: every answer parses and validates, alone and 8 at once`, async ({ page }) => {
    await page.goto('/parity.html');
    await expect(page.locator('body')).toHaveAttribute('data-ready', 'yes');
    const requests = jsonRequests(8).map((r) => ({ ...r, logprobs: true, top_logprobs: 2 }));
    // Alone: all 8 on WebAssembly; on WebGPU (SwiftShader, slower here) one request of each case.
    const aloneCount = device === 'wasm' ? 8 : 3;
    const r = await page.evaluate(([d, reqs, n]) => window.tesseraBatch!('/models/smolvlm-tiny/', d, reqs, n), [
      device,
      requests,
      aloneCount,
    ] as const);
    expect(r.backend).toBe(device);
    for (const [label, answers] of [
      ['together', r.together],
      ['alone', r.alone],
    ] as const) {
      for (const [i, a] of answers.entries()) {
        expect(jsonProblems(requests[i]!, a.text), `request ${i} (${label})`).toEqual([]);
        expect(a.finish).toBe('stop');
      }
    }
    expect(r.together).toHaveLength(8);
    // Each row has its own grammar. Batched, every answer is the one it gives alone: exactly on WebGPU, and
    // as the CPU backend promises on WebAssembly (test/helpers/batch-agreement.ts: onnxruntime-web's kernels
    // differ for a batch of rows by a few 1e-6, so a near-tie may go the other way).
    if (device === 'webgpu') expect(r.together.slice(0, aloneCount).map((a) => a.tokenIds)).toEqual(r.alone.map((a) => a.tokenIds));
    const problems = r.alone.flatMap((a, i) =>
      batchAgreement(a, r.together[i]!, requests[i]!.temperature !== undefined).problems.map((p) => `request ${i}: ${p}`),
    );
    expect(problems).toEqual([]);
    expect(r.maxBatch).toBeGreaterThanOrEqual(8);
  });
}
