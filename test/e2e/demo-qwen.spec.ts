// The Qwen-VL families on the demo page in headless Chromium: a bundled tiny checkpoint is picked,
// loaded (its tokenizer.json built from vocab.json and merges.txt in the page), and asked about the
// attached sample.png (qwen2_5_vl-tiny) or a picked MP4 (qwen3_vl-tiny). The image is decoded, resized
// within the checkpoint's pixel budget and encoded in the encoder worker, and the answer is the greedy
// tokens of test/reference/qwen_pipeline.py, as in Node (test/gpu/qwen-engine.test.ts), with no console
// error. qwen3_vl-tiny also answers on the CPU backend (onnxruntime-web's WebAssembly) from its ONNX graphs.

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

// The image request on qwen2_5_vl-tiny, the video request below on qwen3_vl-tiny: each page load compiles for seconds.
for (const model of golden.models.filter((m) => m.checkpoint === 'qwen2_5_vl-tiny')) {
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

test('qwen3_vl-tiny: a picked MP4 is sampled at 2 fps as HF samples it (WebCodecs in the worker) and answered', async ({ page }) => {
  const errors = watchConsole(page);
  await page.goto('/?device=webgpu');
  await waitForWebGpuCheck(page);
  await page.locator('#kind-bundled').check();
  await page.locator('#bundled-model').selectOption('qwen3_vl-tiny');
  await load(page);
  await expect(page.locator('#attach-video')).toBeEnabled();
  await expect(page.locator('#video-hint')).toContainText('sampled at 2 frames per second, 768 frames at most');
  await page.getByRole('button', { name: 'Remove sample.png' }).click();
  await page.locator('#attach-video').setInputFiles('test/fixtures/video/count-4s.mp4');
  await page.locator('#max-tokens').fill('3');
  const run = answered(await ask(page, 'What happens in this video?'));
  expect(run.info.tokenIds).toHaveLength(3);
  const [v] = run.info.videos;
  expect([v.numFrames, v.fps, v.decoder]).toEqual([20, 5, 'webcodecs']);
  // Frames 0, 3, 5, 8, 11, 14, 16, 19 (test/reference/qwen_video_sampling.py), in groups of two: each
  // group is listed by its first frame, at the mean of its two frames' times.
  expect(v.frames.map((f) => f.index)).toEqual([0, 5, 11, 16]);
  expect(v.frames.map((f) => f.timestamp.toFixed(2))).toEqual(['0.30', '1.30', '2.50', '3.50']);
  expect(errors).toEqual([]);
});

test("qwen3_vl-tiny on the CPU backend (device 'wasm': onnxruntime-web on its ONNX graphs, DeepStack included) answers the attached image with the reference tokens", async ({
  page,
}) => {
  const errors = watchConsole(page);
  const want = golden.models.find((m) => m.checkpoint === 'qwen3_vl-tiny')!.cases.find((c) => c.id === SAMPLE)!.tokens;
  await page.goto('/?device=wasm');
  await waitForWebGpuCheck(page);
  await page.locator('#kind-bundled').check();
  await page.locator('#bundled-model').selectOption('qwen3_vl-tiny');
  await load(page);
  await expect(page.locator('body')).toHaveAttribute('data-model', 'ready');
  await expect(page.locator('body')).toHaveAttribute('data-backend', 'wasm');
  await page.locator('#max-tokens').fill(String(want.length));
  const run = answered(await ask(page, prompt));
  expect(run.info.tokenIds).toEqual(want);
  expect(errors).toEqual([]);
});
