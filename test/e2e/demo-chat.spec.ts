// Chatting on the demo page: a second question carries the first turn (its image and the assistant's
// answer) OpenAI-style, and the repeated image comes from the encoder's memory cache; Stop reads as
// stopped, not as an error, and the chat goes on; errors show their name, code and message, and the
// failed turn is left out of the history.

import { expect, test, type Page } from '@playwright/test';
import { answered, ask, load, shot, waitForWebGpuCheck } from './demo-helpers';
import { goldenTokens } from './goldens';

const Q1 = 'Can you describe this image?';

async function open(page: Page): Promise<void> {
  await page.goto('/?device=webgpu');
  await waitForWebGpuCheck(page);
  await load(page);
  await expect(page.locator('body')).toHaveAttribute('data-model', 'ready');
}

/** The same request made directly on the page's engine, with explicit messages (sample image as bytes). */
async function direct(page: Page, messages: Array<{ role: 'user' | 'assistant'; text: string; image?: boolean }>, maxTokens: number) {
  return page.evaluate(
    async ({ messages, maxTokens }) => {
      const sample = new Uint8Array(await (await fetch('/sample.png')).arrayBuffer());
      const r = await window.tesseraEngine!.chat.completions.create({
        messages: messages.map((m) =>
          m.image
            ? {
                role: m.role,
                content: [
                  { type: 'image' as const, image: sample },
                  { type: 'text' as const, text: m.text },
                ],
              }
            : { role: m.role, content: m.text },
        ),
        max_tokens: maxTokens,
      });
      return { tokenIds: r.tessera.tokenIds, promptTokens: r.tessera.promptTokens };
    },
    { messages, maxTokens },
  );
}

test('a follow-up question carries the earlier turn, image and answer included; the image comes from memory', async ({
  page,
}, testInfo) => {
  await open(page);
  await expect(page.locator('#attachments figure')).toHaveCount(1); // the sample image, attached by default
  const first = answered(await ask(page, Q1));
  expect(first.info.tokenIds).toEqual(goldenTokens('smolvlm-tiny'));
  expect(first.info.media.map((m) => m.source)).toEqual(['encoded']);
  await expect(page.locator('#attachments figure')).toHaveCount(0); // sent with the first message

  await page.locator('#max-tokens').fill('8');
  const second = answered(await ask(page, 'And what colour is the sky?'));
  expect(second.info.media.map((m) => m.source)).toEqual(['memory']);
  await expect(page.locator('#messages > li')).toHaveCount(4);
  await expect(page.locator('dd[data-stat="cache-memory"]')).toHaveText('1');
  await expect(page.locator('dd[data-stat="image-source"]')).toHaveText('memory');
  // The first turn (image included) comes from the prefix cache: only the new tokens are prefilled.
  expect(second.info.cachedTokens).toBeGreaterThan(first.info.promptTokens / 2);
  await expect(page.locator('dd[data-stat="cached-tokens"]')).toHaveText(`${second.info.cachedTokens} of ${second.info.promptTokens}`);
  await expect(page.locator('dd[data-stat="prefix-hits"]')).toContainText(`${second.info.cachedTokens} tokens`);

  // Exactly the OpenAI-style history: user (image + text), assistant (the first answer), user.
  const withHistory = await direct(
    page,
    [
      { role: 'user', text: Q1, image: true },
      { role: 'assistant', text: first.text },
      { role: 'user', text: 'And what colour is the sky?' },
    ],
    8,
  );
  expect(second.info.promptTokens).toBe(withHistory.promptTokens);
  expect(second.info.tokenIds).toEqual(withHistory.tokenIds);
  const withoutAnswer = await direct(
    page,
    [
      { role: 'user', text: Q1, image: true },
      { role: 'user', text: 'And what colour is the sky?' },
    ],
    8,
  );
  expect(second.info.promptTokens).toBeGreaterThan(withoutAnswer.promptTokens);
  await shot(page, testInfo, 'demo-multi-turn');

  // New chat: an empty conversation, the sample attached again.
  await page.locator('#new-chat').click();
  await expect(page.locator('#messages > li')).toHaveCount(0);
  await expect(page.locator('#attachments figure')).toHaveCount(1);
});

test('Stop reads as stopped, keeps the partial answer, frees the KV cache, and the chat goes on', async ({ page }, testInfo) => {
  await open(page);
  await page.locator('#max-tokens').fill('400');
  await page.locator('#prompt').fill(Q1);
  await page.locator('#run').click();
  const answer = page.locator('#messages > li.assistant').last();
  await expect(answer.locator('.content')).not.toHaveText('');
  await page.locator('#stop').click();
  await expect(answer).toHaveAttribute('data-state', 'stopped');
  await expect(answer.locator('.badge')).toHaveText('Stopped');
  await expect(answer.locator('.error, [role="alert"]')).toHaveCount(0);
  await expect(page.locator('body')).toHaveAttribute('data-chat', 'stopped');
  await expect(page.locator('#chat-status')).toHaveText('Stopped.');
  const run = await page.evaluate(() => window.tesseraRun);
  expect(run && 'stopped' in run && run.stopped).toBe(true);
  const partial = (run as { text: string }).text;
  expect(partial.length).toBeGreaterThan(0);
  await expect(answer.locator('.content')).toHaveText(partial);
  await expect(page.locator('dd[data-stat="kv-blocks"]')).toHaveText(/^0 of \d+$/);
  await shot(page, testInfo, 'demo-stopped');

  // The stopped turn stays in the history, partial answer included.
  await page.locator('#max-tokens').fill('4');
  const next = answered(await ask(page, 'Go on.'));
  const expected = await direct(
    page,
    [
      { role: 'user', text: Q1, image: true },
      { role: 'assistant', text: partial },
      { role: 'user', text: 'Go on.' },
    ],
    4,
  );
  expect(next.info.promptTokens).toBe(expected.promptTokens);
  expect(next.info.tokenIds).toEqual(expected.tokenIds);
});

test('errors show name, code and message; the failed turn stays out of the history; a failed load says why', async ({ page }, testInfo) => {
  await open(page);
  // Replace the default image with a file that is not an image at all.
  await page.getByRole('button', { name: 'Remove sample.png' }).click();
  await page.locator('#attach-file').setInputFiles({ name: 'broken.png', mimeType: 'image/png', buffer: Buffer.from('this is not a PNG') });
  await expect(page.locator('#attachments figure')).toHaveCount(1);
  const failed = await ask(page, 'What is this?');
  expect(failed && 'error' in failed && failed.name).toBe('ImageDecodeError');
  const answer = page.locator('#messages > li.assistant').last();
  await expect(answer).toHaveAttribute('data-state', 'error');
  const card = answer.locator('.error[role="alert"]');
  await expect(card.locator('.error-name')).toHaveText('ImageDecodeError');
  await expect(card.locator('.error-code')).toHaveText('IMAGE_DECODE');
  await expect(card.locator('.error-message')).not.toHaveText('');
  await expect(card.locator('.error-note')).toContainText('left out of the conversation history');
  await expect(page.locator('body')).toHaveAttribute('data-chat', 'error');
  await expect(page.locator('#chat-status')).toHaveText('ImageDecodeError (IMAGE_DECODE)');
  await shot(page, testInfo, 'demo-error-request');

  // The next question is sent without the failed turn.
  await page.locator('#max-tokens').fill('3');
  const next = answered(await ask(page, 'Hello'));
  expect(next.info.promptTokens).toBe((await direct(page, [{ role: 'user', text: 'Hello' }], 3)).promptTokens);

  // A model that is not there: the load fails with a named error, shown in the Model section (config.json
  // is read first: it says which processor the checkpoint needs).
  await page.locator('#hub-model').fill('/models/no-such-model/');
  await load(page);
  await expect(page.locator('body')).toHaveAttribute('data-model', 'error');
  const loadCard = page.locator('#load-error .error[role="alert"]');
  await expect(loadCard.locator('.error-name')).toHaveText('ModelFileError');
  await expect(loadCard.locator('.error-code')).toHaveText('MODEL_FILE');
  await expect(loadCard.locator('.error-message')).toContainText('has no config.json');
  await expect(loadCard.locator('.error-message')).toContainText('http://localhost');
  await expect(loadCard.locator('.error-message')).toContainText('/models/no-such-model/');
  await expect(page.locator('#run')).toBeDisabled();
  await shot(page, testInfo, 'demo-error-load');
});
