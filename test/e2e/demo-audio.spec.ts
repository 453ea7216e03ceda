// Audio on the demo page: with a Voxtral checkpoint, a recording from Chromium's fake microphone (a WAV
// played as the capture device) is asked about and transcribed; the attachment shows its duration and
// waveform; the same file asked about again encodes no chunk (the encoder cache). (A checkpoint without an
// audio encoder keeps the audio controls off and says why: demo-video.spec.ts, which loads one anyway.)

import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, test } from '@playwright/test';
import { chromiumLaunchOptions } from '../../scripts/chromium';
import { testClip, wavBytes } from '../helpers/audio-clips';
import { answered, ask, load, shot, waitForWebGpuCheck, watchConsole } from './demo-helpers';
import { writeFileSync } from 'node:fs';

// The fake microphone plays this file (looped) as the capture device; written before the browser starts.
const MIC = resolve('test-results/fake-mic.wav');
mkdirSync('test-results', { recursive: true });
writeFileSync(MIC, wavBytes(testClip(3, 16000), 16000, 's16'));
const CLIP = resolve('test-results/clip-2s.wav');
writeFileSync(CLIP, wavBytes(testClip(2, 16000), 16000, 's16'));
// AC-3 in MP4: a codec Chromium's WebCodecs does not decode.
const AC3 = resolve('test-results/tone-ac3.m4a');
execFileSync('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=frequency=440:duration=1', '-c:a', 'ac3', '-f', 'mp4', AC3]);

const launch = chromiumLaunchOptions();
test.use({
  launchOptions: {
    ...launch,
    args: [
      ...launch.args,
      '--use-fake-ui-for-media-stream',
      '--use-fake-device-for-media-stream',
      `--use-file-for-fake-audio-capture=${MIC}`,
    ],
  },
  permissions: ['microphone'],
});

test('a recording from the microphone is asked about and transcribed; asking again encodes nothing', async ({ page }, testInfo) => {
  const errors = watchConsole(page);
  await page.goto('/');
  await waitForWebGpuCheck(page);
  await expect(page.locator('#record')).toBeDisabled(); // no model yet
  await page.locator('#kind-bundled').check();
  await page.locator('#bundled-model').selectOption('voxtral-tiny');
  await load(page);
  await expect(page.locator('body')).toHaveAttribute('data-model', 'ready');
  await expect(page.locator('#audio-hint')).toContainText('30-second chunks of 375 tokens each');
  // The sample image went: an audio checkpoint has no vision tower.
  await expect(page.locator('#attachments figure')).toHaveCount(0);
  await expect(page.locator('#prompt')).toHaveValue('What is said in this recording?');

  await page.locator('#record').click();
  await expect(page.locator('#record')).toHaveText(/Stop recording \(0:0[1-9]\)/, { timeout: 10_000 });
  await page.waitForTimeout(1500);
  await page.locator('#record').click();
  const tile = page.locator('#attachments figure[data-kind="audio"]');
  await expect(tile).toHaveCount(1);
  await expect(tile.locator('.duration')).toHaveText(/♪ 0:0[1-9]/);
  await expect(tile.locator('svg.waveform rect')).not.toHaveCount(0);
  await shot(page, testInfo, 'demo-audio-recorded');

  await page.locator('#max-tokens').fill('5');
  const run = answered(await ask(page));
  expect(run.info.tokenIds).toHaveLength(5);
  expect(run.info.audios).toHaveLength(1);
  expect(run.info.audios[0]).toMatchObject({ decoder: 'webcodecs', tokens: 375 });
  expect(run.info.audios[0].format).toMatch(/webm/i);
  expect(run.info.audios[0].duration).toBeGreaterThan(1);
  await expect(page.locator('#messages > li.assistant').last().locator('.content')).toHaveText(run.text);
  await shot(page, testInfo, 'demo-audio-answered');

  // Transcription of a picked WAV; then the same file in a question: its one chunk comes from the cache.
  await page.locator('#attach-audio').setInputFiles(CLIP);
  await expect(page.getByRole('img', { name: 'attached audio clip-2s.wav, 0:02' })).toBeVisible();
  await page.locator('#transcribe').check();
  await expect(page.locator('#prompt')).toBeDisabled();
  const t = answered(await ask(page));
  expect(t.info.audios[0]).toMatchObject({ decoder: 'wav', tokens: 375 });
  await expect(page.locator('#messages > li.assistant').last().locator('.meta')).toContainText('Transcription');
  await page.locator('#transcribe').uncheck();
  await page.locator('#attach-audio').setInputFiles(CLIP);
  const again = answered(await ask(page, 'And this?'));
  expect(again.info.media.filter((m) => m.audio).map((m) => m.source)).toContain('memory');
  expect(again.info.media.every((m) => m.source !== 'encoded')).toBe(true);
  await shot(page, testInfo, 'demo-audio-transcribed');

  // A codec this browser cannot decode fails its turn by name; the chat goes on.
  await page.locator('#attach-audio').setInputFiles(AC3);
  const bad = await ask(page, 'And this one?');
  expect(bad && 'error' in bad && bad.name).toBe('AudioDecodeError');
  const card = page.locator('#messages > li.assistant').last().locator('.error[role="alert"]');
  await expect(card.locator('.error-message')).toContainText("codec 'ac3' cannot be decoded by this browser's WebCodecs");
  expect(errors.filter((e) => !/AudioDecodeError|ac3/i.test(e))).toEqual([]);
});
