// response_format in Chromium: XGrammar's WebAssembly loads in the page (through Vite, as an app bundles
// it), and JSON mode and two JSON schemas on the tiny random-weight checkpoint give answers that parse and
// validate, one at a time and 8 at once, on WebGPU (the mask in logit-adjust.wgsl) and on the CPU backend
// (onnxruntime-web). The cases and the validator are test/helpers/json-formats.ts's, as in Node.

import { expect, test } from '@playwright/test';
import { jsonProblems, jsonRequests } from '../helpers/json-formats';

for (const device of ['webgpu', 'wasm'] as const) {
  test(`JSON mode and two schemas in Chromium on ${device}: every answer parses and validates, alone and 8 at once`, async ({ page }) => {
    await page.goto('/parity.html');
    await expect(page.locator('body')).toHaveAttribute('data-ready', 'yes');
    const requests = jsonRequests(8);
    const r = await page.evaluate(([d, reqs]) => window.tesseraJson!('/models/smolvlm-tiny/', d, reqs), [device, requests] as const);
    expect(r.backend).toBe(device);
    for (const [i, a] of [...r.alone, ...r.together].entries()) {
      const req = requests[i % requests.length]!;
      expect(jsonProblems(req, a.text), `request ${i % 8}${i >= 8 ? ' (together)' : ''}`).toEqual([]);
      expect(a.finish).toBe('stop');
    }
    // Each row has its own grammar: batched, every answer is the one it gives alone.
    expect(r.together).toEqual(r.alone);
    expect(r.maxBatch).toBeGreaterThanOrEqual(8);
  });
}
