// The Qwen-VL families on the demo page in headless Chromium: each bundled tiny checkpoint is picked,
// loaded (its tokenizer.json built from vocab.json and merges.txt in the page), and asked about the
// attached sample.png. The image is decoded, resized within the checkpoint's pixel budget and encoded in the
// encoder worker, and the answer is the greedy tokens of test/reference/qwen_pipeline.py, as in Node
// (test/gpu/qwen-engine.test.ts), with no console error.

import { readFileSync } from 'node:fs';
import { expect, test } from '@playwright/test';
import { answered, ask, load, shot, waitForWebGpuCheck, watchConsole } from './demo-helpers';

const read = (name: string) => JSON.parse(readFileSync(`test/fixtures/goldens/${name}`, 'utf8'));
const input = read('qwen-pipeline-input.json') as {
  cases: Array<{ id: string; content: Array<{ image?: string; text?: string }> }>;
  models: Array<{ checkpoint: string; cases: Array<{ id: string; ids: number[] }> }>;
};
const golden = read('qwen-pipeline.json') as { models: Array<{ checkpoint: string; cases: Array<{ id: string; tokens: number[] }> }> };
/** The request the demo sends as it opens: sample.png attached, then the text. */
const SAMPLE = 'sample';
const prompt = input.cases.find((c) => c.id === SAMPLE)!.content.find((p) => p.text)!.text!;

for (const model of golden.models) {
  const want = { checkpoint: model.checkpoint, tokens: model.cases.find((c) => c.id === SAMPLE)!.tokens };
  test(`${want.checkpoint}: the attached image is asked about and answered with the reference tokens`, async ({ page }, testInfo) => {
    const errors = watchConsole(page);
    await page.goto('/?device=webgpu');
    await waitForWebGpuCheck(page);
    await page.locator('#kind-bundled').check();
    await page.locator('#bundled-model').selectOption(want.checkpoint);
    await load(page);
    await expect(page.locator('body')).toHaveAttribute('data-model', 'ready');
    await page.locator('#max-tokens').fill(String(want.tokens.length));
    const run = answered(await ask(page, prompt));
    expect(run.info.promptTokens).toBe(
      input.models.find((m) => m.checkpoint === want.checkpoint)!.cases.find((c) => c.id === SAMPLE)!.ids.length,
    );
    expect(run.info.tokenIds).toEqual(want.tokens);
    expect(run.info.media).toHaveLength(1);
    expect(run.info.media[0].grid?.t).toBe(1);
    await expect(page.locator('#messages > li.assistant').last().locator('.content')).toHaveText(run.text);
    expect(errors).toEqual([]);
    await shot(page, testInfo, `demo-${want.checkpoint}`);
  });
}
