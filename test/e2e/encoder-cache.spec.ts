// Encoder workers and the content-addressed encoder cache in headless Chromium (test/e2e/pages/encoder-harness):
// reloads hit IndexedDB, two tabs share one encode, bad stored entries are re-encoded, a store that
// refuses writes still answers, concurrent requests deduplicate, and a killed worker fails only its
// request.

import { expect, test, type Page } from '@playwright/test';
import { goldenTokens } from './goldens';

const SAMPLE_TOKENS = goldenTokens('smolvlm-tiny').slice(0, 4);

async function open(page: Page, options: { poolSize?: number; store?: 'idb' | 'quota' } = {}) {
  await page.goto('/encoder-harness.html');
  await expect(page.locator('body')).toHaveAttribute('data-ready', 'yes');
  const mode = await page.evaluate((o) => window.harness.create(o), options);
  expect(mode).toBe('workers');
}

test.beforeEach(async ({ page }) => {
  await page.goto('/encoder-harness.html');
  await page.evaluate(() => window.harness.clearCache());
});

test('a reload answers from IndexedDB without running the encoder, with identical tokens', async ({ page }) => {
  await open(page);
  const first = await page.evaluate(() => window.harness.ask(0));
  expect(first.error).toBeUndefined();
  expect(first.tokenIds).toEqual(SAMPLE_TOKENS);
  expect(first.media![0].source).toBe('encoded');

  await page.reload();
  await open(page);
  const second = await page.evaluate(() => window.harness.ask(0));
  expect(second.tokenIds).toEqual(first.tokenIds);
  expect(second.media![0].source).toBe('persistent');
  const stats = await page.evaluate(() => window.harness.stats());
  expect(stats.encoder.encodes).toBe(0);
  expect(stats.encoder.persistentHits).toBe(1);
  expect(stats.lifecycle.encoding).toBe(0);
});

test('two tabs asking about the same image at the same moment encode it once', async ({ context }) => {
  const [a, b] = [await context.newPage(), await context.newPage()];
  await Promise.all([open(a), open(b)]);
  const [ra, rb] = await Promise.all([a.evaluate(() => window.harness.ask(0)), b.evaluate(() => window.harness.ask(0))]);
  expect(ra.tokenIds).toEqual(SAMPLE_TOKENS);
  expect(rb.tokenIds).toEqual(SAMPLE_TOKENS);
  const [sa, sb] = await Promise.all([a.evaluate(() => window.harness.stats()), b.evaluate(() => window.harness.stats())]);
  expect(sa.encoder.encodes + sb.encoder.encodes).toBe(1);
  expect([ra.media![0].source, rb.media![0].source].sort()).toEqual(['encoded', 'persistent']);
});

test('a corrupted entry and an entry from another model are detected and re-encoded', async ({ page }) => {
  await open(page);
  const first = await page.evaluate(() => window.harness.ask(0));
  const key = first.media![0].key;
  const second = await page.evaluate(() => window.harness.ask(1));
  const otherKey = second.media![0].key;

  await page.reload();
  await open(page);
  expect(await page.evaluate((k) => window.harness.corrupt(k), key)).toBe(true);
  expect(await page.evaluate((k) => window.harness.makeForeign(k), otherKey)).toBe(true);
  const again = await page.evaluate(() => window.harness.ask(0));
  const otherAgain = await page.evaluate(() => window.harness.ask(1));
  expect(again.tokenIds).toEqual(SAMPLE_TOKENS);
  expect(again.media![0].source).toBe('encoded');
  expect(otherAgain.tokenIds).toEqual(second.tokenIds);
  expect(otherAgain.media![0].source).toBe('encoded');
  const stats = await page.evaluate(() => window.harness.stats());
  expect(stats.encoder.persistentCorrupt).toBe(1);
  expect(stats.encoder.persistentForeign).toBe(1);
  expect(stats.encoder.encodes).toBe(2);
});

test('a store that throws on write (quota) still answers, from memory only', async ({ page }) => {
  const warnings: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'warning') warnings.push(m.text());
  });
  await open(page, { store: 'quota' });
  const r = await page.evaluate(() => window.harness.ask(0));
  expect(r.error).toBeUndefined();
  expect(r.tokenIds).toEqual(SAMPLE_TOKENS);
  const again = await page.evaluate(() => window.harness.ask(0));
  expect(again.media![0].source).toBe('memory');
  const stats = await page.evaluate(() => window.harness.stats());
  expect(stats.encoder.persistentDegraded).toBe(true);
  expect(warnings.filter((w) => w.includes('tessera')).length).toBe(1);
});

test('8 concurrent requests over 3 distinct images encode 3 times, and every reference is released', async ({ page }) => {
  await open(page);
  const results = await page.evaluate(() => Promise.all([0, 1, 2, 0, 1, 2, 0, 1].map((i) => window.harness.ask(i, 2))));
  expect(results.every((r) => !r.error)).toBe(true);
  const stats = await page.evaluate(() => window.harness.stats());
  expect(stats.encoder.encodes).toBe(3);
  // The other 5 came from the first encode of their image: memory, joining it in flight, or (when the
  // first one was already stored when they looked) the persistent tier; or they needed no embeddings at
  // all: admitted after an earlier request of the same image had prefilled, they found its tokens in the
  // prefix cache, so the encoder cache was never asked (a clean clone met this: 2 of the 5).
  const reused = stats.encoder.memoryHits + stats.encoder.inflightJoins + stats.encoder.persistentHits;
  expect(reused).toBeLessThanOrEqual(5);
  if (reused < 5) expect(stats.scheduler.prefixHitTokens).toBeGreaterThan(0);
  const keys = [...new Set(results.map((r) => r.media![0].key))];
  expect(keys.length).toBe(3);
  for (const key of keys) expect(await page.evaluate((k) => window.harness.refCount(k), key)).toBe(0);
  expect(stats.kv.numFreeBlocks).toBe(stats.kv.numBlocks);
  expect(stats.lifecycle.released).toBe(8);
});

test('a worker killed mid-encode fails only that request, and the next request succeeds', async ({ page }) => {
  await open(page);
  const [failed] = await page.evaluate(() => Promise.all([window.harness.ask(0), window.harness.killWorkerDuringEncode()]));
  expect(failed.error?.name).toBe('EncoderWorkerCrashedError');
  expect(failed.error?.message).toMatch(/encoder worker 0 stopped \(terminated\)/);
  const next = await page.evaluate(() => window.harness.ask(0));
  expect(next.error).toBeUndefined();
  expect(next.tokenIds).toEqual(SAMPLE_TOKENS);
});

test('32 concurrent mixed requests give exactly the tokens each gives alone, and leave nothing held', async ({ page }) => {
  await open(page);
  const r = await page.evaluate(() => window.harness.mixed(32));
  expect(r.together).toEqual(r.solo);
  expect(r.stats.scheduler.batchSeqs.max).toBeGreaterThan(1);
  expect(r.stats.kv.numFreeBlocks).toBe(r.stats.kv.numBlocks);
  expect(r.stats.scheduler).toMatchObject({ numWaiting: 0, numRunning: 0, encodingEmbeddings: 0 });
  expect(r.refCounts.every((c) => c === 0)).toBe(true);
});
