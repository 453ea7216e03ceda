// Video on the demo page: with a SmolVLM2 checkpoint a picked MP4 is asked about, and the answer shows the
// frames the model saw with their timestamps (the engine's own thumbnails: each test frame shows its index,
// read back from the drawn canvases). A checkpoint without video settings keeps the picker off, and a video
// sent to it anyway fails its turn with VideoNotSupportedError.

import { expect, test, type Page } from '@playwright/test';
import { frameIndexOf } from '../helpers/count-frames';
import { answered, ask, load, shot, waitForWebGpuCheck, watchConsole } from './demo-helpers';

const CLIP = 'test/fixtures/video/count-4s.mp4';

async function loadModel(page: Page, id: string): Promise<void> {
  await page.locator('#kind-bundled').check();
  await page.locator('#bundled-model').selectOption(id);
  await load(page);
  await expect(page.locator('body')).toHaveAttribute('data-model', 'ready');
}

/** The pixels of each drawn frame thumbnail of the last answer, read back to the count frame they show. */
async function framesShown(page: Page): Promise<number[]> {
  const canvases = page.locator('#messages > li.assistant').last().locator('.video-strip .frame canvas');
  const images = await canvases.evaluateAll((list) =>
    (list as HTMLCanvasElement[]).map((c) => ({
      w: c.width,
      h: c.height,
      data: Array.from(c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data),
    })),
  );
  return images.map((i) => frameIndexOf(i.data, i.w, i.h, 4));
}

test('a picked MP4 is asked about; the answer shows the sampled frames with their timestamps', async ({ page }, testInfo) => {
  const errors = watchConsole(page);
  await page.goto('/');
  await waitForWebGpuCheck(page);
  await expect(page.locator('#attach-video')).toBeDisabled(); // no model yet
  await loadModel(page, 'smolvlm2-video-tiny');
  await expect(page.locator('#attach-video')).toBeEnabled();
  await expect(page.locator('#video-hint')).toContainText('sampled at 1 frame per second, 8 frames at most', { timeout: 10_000 });

  await page.getByRole('button', { name: 'Remove sample.png' }).click();
  await page.locator('#attach-video').setInputFiles(CLIP);
  await expect(page.locator('#attachments figure[data-kind="video"]')).toHaveCount(1);
  await expect(page.getByRole('img', { name: 'attached video count-4s.mp4' })).toBeVisible();
  await page.locator('#max-tokens').fill('6');
  const run = answered(await ask(page, 'What happens in this video?'));
  expect(run.info.tokenIds).toHaveLength(6);
  const answer = page.locator('#messages > li.assistant').last();
  await expect(answer).toHaveAttribute('data-state', 'done');
  await expect(answer.locator('.content')).toHaveText(run.text);

  // The response's sampled frames, and exactly those on the page: count, timestamps, pixels.
  expect(run.info.videos).toHaveLength(1);
  const v = run.info.videos[0];
  expect([v.numFrames, v.fps, v.duration, v.decoder]).toEqual([20, 5, 4, 'webcodecs']);
  expect(v.frames.map((f) => f.index)).toEqual([0, 6, 12, 19]);
  const frames = answer.locator('.video-strip .frame');
  await expect(frames).toHaveCount(v.frames.length);
  await expect(frames.locator('time')).toHaveText(v.frames.map((f) => f.label));
  expect(v.frames.map((f) => f.label)).toEqual(['00:00', '00:01', '00:02', '00:03']);
  expect(await frames.evaluateAll((l) => l.map((e) => Number((e as HTMLElement).dataset.timestamp)))).toEqual(
    v.frames.map((f) => f.timestamp),
  );
  expect(await framesShown(page)).toEqual(v.frames.map((f) => f.index));
  await expect(answer.locator('.video-strip figcaption')).toContainText('count-4s.mp4: the model saw 4 of 20 frames');
  // Prompt tokens: the frames' image tokens plus text.
  expect(run.info.media.filter((m) => m.video)).toHaveLength(4);

  await shot(page, testInfo, 'demo-video');
  expect(errors).toEqual([]);
});

test('a checkpoint without video settings: the picker is off, and a video sent anyway fails with VideoNotSupportedError', async ({
  page,
}, testInfo) => {
  const errors = watchConsole(page);
  await page.goto('/');
  await waitForWebGpuCheck(page);
  await loadModel(page, 'smolvlm-tiny');
  await expect(page.locator('#attach-video')).toBeDisabled();
  await expect(page.locator('#video-hint')).toContainText('No video with this checkpoint');
  // No audio encoder either: the audio controls are off too, and say why.
  await expect(page.locator('#attach-audio')).toBeDisabled();
  await expect(page.locator('#record')).toBeDisabled();
  await expect(page.locator('#transcribe')).toBeDisabled();
  await expect(page.locator('#audio-hint')).toHaveText(
    'No audio with this checkpoint: it has no audio encoder. Load a Voxtral checkpoint for audio.',
  );

  // A video attached under SmolVLM2 stays in the tray when smolvlm-tiny is loaded again.
  await loadModel(page, 'smolvlm2-video-tiny');
  await page.locator('#attach-video').setInputFiles(CLIP);
  await loadModel(page, 'smolvlm-tiny');
  await expect(page.locator('#attach-video')).toBeDisabled();
  await expect(page.locator('#attachments figure[data-kind="video"]')).toHaveCount(1);
  const failed = await ask(page, 'What happens in this video?');
  expect(failed && 'error' in failed && failed.name).toBe('VideoNotSupportedError');
  const card = page.locator('#messages > li.assistant').last().locator('.error[role="alert"]');
  await expect(card.locator('.error-name')).toHaveText('VideoNotSupportedError');
  await expect(card.locator('.error-code')).toHaveText('VIDEO_NOT_SUPPORTED');
  await expect(card.locator('.error-message')).toContainText('has no video settings');
  await expect(page.locator('#messages .video-strip')).toHaveCount(0);
  await shot(page, testInfo, 'demo-video-unsupported');
  expect(errors).toEqual([]);
});
