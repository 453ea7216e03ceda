// Video in headless Chromium (test/e2e/pages/video-harness): clips demuxed by mediabunny and decoded with WebCodecs
// inside the encoder Web Worker (MP4/H.264, WebM/VP9 and VP8), exactly the frames SmolVLM2 samples (each test
// frame shows its index; the thumbnails are read back), the whole-clip cache (a repeat decodes and encodes
// nothing), bad inputs as named errors with the engine answering afterwards, and a 2-hour clip of which only
// the sampled frames (and the short runs from key frames to them) are decoded, with few frames open at once.

import { expect, test, type Page } from '@playwright/test';

const FOUR = [0, 6, 12, 19];

async function open(page: Page, options: { mode?: 'workers' | 'in-process'; countDecodes?: boolean } = {}) {
  await page.goto('/video-harness.html');
  await expect(page.locator('body')).toHaveAttribute('data-ready', 'yes');
  return page.evaluate((o) => window.videoHarness.create(o), options);
}

test('MP4 (H.264) and WebM (VP9, VP8) decoded with WebCodecs in the encoder worker: the sampled frames, answered', async ({ page }) => {
  expect(await open(page)).toBe('workers');
  for (const name of ['count-4s.mp4', 'count-4s-vp9.webm', 'count-4s-vp8.webm']) {
    const r = await page.evaluate((n) => window.videoHarness.ask(n), name);
    expect(r.error, name).toBeUndefined();
    const v = r.videos![0];
    expect(v.decoder).toBe('webcodecs');
    expect(v.source).toBe('decoded');
    expect([v.numFrames, v.fps, v.duration]).toEqual([20, 5, 4]);
    expect(v.frames.map((f) => f.index)).toEqual(FOUR);
    expect(
      v.frames.map((f) => f.shown),
      name,
    ).toEqual(FOUR);
    expect(v.frames.map((f) => f.label)).toEqual(['00:00', '00:01', '00:02', '00:03']);
    expect(r.tokenIds).toHaveLength(3);
  }
  // Longer than max_frames (8): 1 s skipped at each end; shorter than one sampling interval: one frame.
  const long = await page.evaluate(() => window.videoHarness.ask('count-12s.mp4'));
  expect(long.videos![0].frames.map((f) => f.shown)).toEqual([2, 4, 7, 10, 13, 16, 19, 22]);
  const half = await page.evaluate(() => window.videoHarness.ask('count-half.mp4'));
  expect(half.videos![0].frames.map((f) => f.shown)).toEqual([0]);
  expect((await page.evaluate(() => window.videoHarness.stats())).encoder.mode).toBe('workers');
});

test('the second ask about the same clip (even as a File) decodes 0 frames and encodes 0 frames', async ({ page }) => {
  await open(page);
  const first = await page.evaluate(() => window.videoHarness.ask('count-4s.mp4', { maxTokens: 4 }));
  const before = await page.evaluate(() => window.videoHarness.stats());
  const again = await page.evaluate(() => window.videoHarness.ask('count-4s.mp4', { maxTokens: 4, blob: true }));
  const after = await page.evaluate(() => window.videoHarness.stats());
  expect(again.tokenIds).toEqual(first.tokenIds);
  expect(again.videos![0].source).toBe('clip-cache');
  expect(after.encoder.video.framesDecoded - before.encoder.video.framesDecoded).toBe(0);
  expect(after.encoder.encodes - before.encoder.encodes).toBe(0);
  expect(again.media!.map((m) => m.source)).toEqual(['memory', 'memory', 'memory', 'memory']);
});

test('bad clips fail alone with named errors; the engine answers the next request', async ({ page }) => {
  await open(page);
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['count-4s-hevc.mp4', {}, 'VideoCodecUnsupportedError'],
    ['count-4s.mp4', { bytes: 1400 }, 'VideoDecodeError'],
    ['count-4s-faststart.mp4', { bytes: 1400 }, 'VideoDecodeError'],
    ['audio-only.m4a', {}, 'VideoTrackMissingError'],
    ['zero-seconds.mp4', {}, 'VideoEmptyError'],
  ];
  for (const [name, options, error] of cases) {
    const r = await page.evaluate(([n, o]) => window.videoHarness.ask(n as string, o as never), [name, options] as const);
    expect(r.error?.name, `${name} ${JSON.stringify(options)}: ${r.error?.message}`).toBe(error);
    const ok = await page.evaluate(() => window.videoHarness.ask('count-4s-vp9.webm', { maxTokens: 2 }));
    expect(ok.error).toBeUndefined();
    const s = await page.evaluate(() => window.videoHarness.stats());
    expect(s.kv.numFreeBlocks).toBe(s.kv.numBlocks);
  }
});

test('a 2-hour clip: only the sampled frames are kept, decoding seeks to them, few frames are open at once', async ({ page }) => {
  await open(page, { mode: 'in-process', countDecodes: true });
  const r = await page.evaluate(() => window.videoHarness.ask('two-hours.mp4'));
  expect(r.error).toBeUndefined();
  const v = r.videos![0];
  expect([v.numFrames, v.duration]).toEqual([7200, 7200]);
  const want = [1, 1029, 2057, 3085, 4114, 5142, 6170, 7199];
  expect(v.frames.map((f) => f.index)).toEqual(want);
  expect(v.frames.map((f) => f.shown)).toEqual(want);
  const d = await page.evaluate(() => window.videoHarness.decoding());
  const s = await page.evaluate(() => window.videoHarness.stats());
  console.log(`two-hours.mp4: ${d.outputs} frames decoded of 7200 (key frame every 30), at most ${d.maxOpen} open at once`);
  expect(s.encoder.video.framesDecoded).toBe(8);
  expect(d.outputs).toBeGreaterThanOrEqual(8);
  expect(d.outputs).toBeLessThanOrEqual(8 * 30); // from the key frame before each sampled frame, never the whole clip
  expect(d.maxOpen).toBeLessThanOrEqual(8);
});
