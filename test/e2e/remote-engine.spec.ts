// The remote engine in Chromium against tessera serve over real HTTP on loopback (the built command, on the
// CPU backend, with --enable-mm-embeds and this origin allowed): the page encodes the sample image with its
// own copy of the tiny checkpoint and sends only embeddings; the answers are the tokens the server gives for
// the image itself; the second question sends the same uuid alone; in raw mode the image travels, with that
// uuid. The built command is made by this suite's global setup.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { expect, test } from '@playwright/test';
import { type ServeProcess, startServeProcess, tinyServeArgs } from '../helpers/serve-process';

const ROOT = resolve(import.meta.dirname, '../..');
let server: ServeProcess | undefined;
let url = '';

test.beforeAll(async ({ baseURL }) => {
  const origin = new URL(baseURL!).origin;
  const model = resolve(ROOT, 'public/models/smolvlm-tiny');
  const args = [...tinyServeArgs(model), '--enable-mm-embeds', '--allowed-origins', origin];
  server = await startServeProcess(args);
  url = server.url;
});
test.afterAll(() => {
  server?.child.kill('SIGTERM');
});

/** The server's own answer about the sample image sent as an image (what a local engine on this checkpoint gives). */
async function serverTokens(question: string): Promise<number[]> {
  const image = `data:image/png;base64,${readFileSync(resolve(ROOT, 'public/sample.png')).toString('base64')}`;
  const r = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      model: 'tiny',
      max_tokens: 12,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: image } },
            { type: 'text', text: question },
          ],
        },
      ],
    }),
  });
  return ((await r.json()) as { tessera: { tokenIds: number[] } }).tessera.tokenIds;
}

test('the remote engine in Chromium sends only embeddings to tessera serve and gets the tokens of the image itself; the second ask sends the uuid alone', async ({
  page,
}) => {
  await page.goto('/remote.html');
  await expect(page.locator('body')).toHaveAttribute('data-ready', 'yes');
  const r = await page.evaluate(([base]) => window.tesseraRemote!(`${base}/v1`, 'tiny', '/models/smolvlm-tiny/', 'wasm', 'embeds'), [
    url,
  ] as const);
  expect(r.answers[0].tokenIds).toEqual(await serverTokens('Can you describe this image?'));
  expect(r.answers[1].tokenIds).toEqual(await serverTokens('What colour is it?'));
  expect(r.streamed).toBe(r.answers[0].text);
  expect(r.bodies).toHaveLength(3);
  for (const b of r.bodies) {
    expect(b.hasImageBytes).toBe(false);
    expect(b.parts.map((p) => p.type)).toEqual(['image_embeds']);
  }
  const uuid = r.bodies[0].parts[0].uuid;
  expect(uuid).toMatch(/^[0-9a-f]{64}$/);
  expect(r.bodies.map((b) => b.parts[0].uuid)).toEqual([uuid, uuid, uuid]);
  expect(r.bodies.map((b) => b.parts[0].hasValues)).toEqual([true, false, false]);
  expect(r.bodies[1].bytes).toBeLessThan(r.bodies[0].bytes / 10);
  expect(r.stats).toMatchObject({ mode: 'embeds', fallback: null, imageBytesSent: 0, parts: { embeds: 3, byUuid: 2, raw: 0 } });

  const raw = await page.evaluate(([base]) => window.tesseraRemote!(`${base}/v1`, 'tiny', '/models/smolvlm-tiny/', 'wasm', 'raw'), [
    url,
  ] as const);
  expect(raw.answers[0].tokenIds).toEqual(r.answers[0].tokenIds);
  expect(raw.bodies.every((b) => b.hasImageBytes && b.parts[0].type === 'image_url' && b.parts[0].uuid === uuid)).toBe(true);
});
