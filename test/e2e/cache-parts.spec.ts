// A checkpoint file larger than the 256 MiB Chromium allows one Cache API entry (src/io/cache-parts.ts) is
// stored by the first load, in parts, and the second load reads it from browser storage with the same
// bytes and no download: UrlSource in headless Chromium, on a 300 MB file the demo's dev server serves.

import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { expect, test } from '@playwright/test';

const BYTES = 300_000_000;
const FOLDER = `models/cache-parts-e2e-${process.pid}`;

/** The file's byte at offset i (what the page checks). */
const byteAt = (i: number) => (i * 7 + (i >>> 16)) & 255;

test('a 300 MB file is stored in Cache API parts and read back from them', async ({ page }) => {
  mkdirSync(`public/${FOLDER}`, { recursive: true });
  const fd = openSync(`public/${FOLDER}/big.bin`, 'w');
  try {
    const block = new Uint8Array(1 << 22);
    for (let o = 0; o < BYTES; o += block.length) {
      const n = Math.min(block.length, BYTES - o);
      for (let i = 0; i < n; i++) block[i] = byteAt(o + i);
      writeSync(fd, block, 0, n);
    }
  } finally {
    closeSync(fd);
  }
  const warnings: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'warning' || m.type() === 'error') warnings.push(m.text());
  });
  try {
    await page.goto('/');
    const got = await page.evaluate(
      async ({ folder, repo }) => {
        // Through the dev server, as the demo's own modules are.
        const { UrlSource } = await import(/* @vite-ignore */ `/@fs${repo}/src/io/model-source.ts`);
        const byteAt = (i: number) => (i * 7 + (i >>> 16)) & 255;
        await caches.delete('tessera-weights-v1');
        const fetched: string[] = [];
        const fetchImpl = (input: RequestInfo | URL, init?: RequestInit) => {
          fetched.push(String(input));
          return fetch(input, init);
        };
        const source = new UrlSource(`/${folder}/`, { files: ['big.bin'], fetchImpl });
        /** Bytes read and the first offset whose byte is wrong (-1: none). */
        const check = async (stream: AsyncIterable<Uint8Array>) => {
          let o = 0;
          let wrong = -1;
          for await (const chunk of stream) {
            for (let i = 0; i < chunk.length; i++) if (wrong < 0 && chunk[i] !== byteAt(o + i)) wrong = o + i;
            o += chunk.length;
          }
          return { read: o, wrong };
        };
        const first = (await source.openBytes('big.bin'))!;
        const a = { ...(await check(first.stream)), fromCache: first.fromCache };
        const downloads = fetched.length;
        const second = (await source.openBytes('big.bin'))!;
        const b = { ...(await check(second.stream)), fromCache: second.fromCache };
        // Across the boundary of the first two 64 MiB parts.
        const at = 64 * 2 ** 20 - 5;
        const range = await source.readRange('big.bin', at, at + 10);
        const cache = await caches.open('tessera-weights-v1');
        const entries = (await cache.keys()).length;
        const stored = await source.isStored('big.bin');
        await caches.delete('tessera-weights-v1');
        return {
          a,
          b,
          downloads,
          after: fetched.length,
          stored,
          range: Array.from(range!.bytes),
          expected: Array.from({ length: 10 }, (_, i) => byteAt(at + i)),
          entries,
        };
      },
      { folder: FOLDER, repo: process.cwd() },
    );
    expect(got.a).toEqual({ read: BYTES, wrong: -1, fromCache: false });
    expect(got.b).toEqual({ read: BYTES, wrong: -1, fromCache: true });
    expect(got.downloads).toBe(1);
    expect(got.after).toBe(1); // the second load and the range read downloaded nothing
    expect(got.range).toEqual(got.expected);
    expect(got.stored).toBe(true);
    expect(got.entries).toBe(Math.ceil(BYTES / 2 ** 26) + 1); // 5 parts and the index
    expect(warnings).toEqual([]);
  } finally {
    rmSync(`public/${FOLDER}`, { recursive: true, force: true });
  }
});
