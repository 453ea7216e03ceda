// Parity in headless Chromium's own WebGPU: every tiny checkpoint on the sample image through the
// processor (browser image decoding), vision tower, connector and paged-KV decode, against the PyTorch
// goldens (same tolerances as test/gpu/parity.test.ts): the original two, the so400m layout (vision
// head_dim 72, patch 14), text head_dim 128, and head_dims 16 / 8; and a Voxtral checkpoint transcribing the
// golden clip (test/reference/voxtral.py's tokens).

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { compareClose, describeComparison } from '../../src/selfcheck/compare';
import { decodeAudioNode } from '../../src/encoder/audio/decode-node';
import { testClip, wavBytes } from '../helpers/audio-clips';
import { goldenVariants } from '../helpers/golden-variants';
import { goldenF32, goldenTokens, goldenU8 } from './goldens';

const TOL = { atol: 1e-4, rtol: 1e-3 };

function expectClose(label: string, got: number[], want: Float32Array) {
  const c = compareClose(got, want, TOL);
  expect(c.pass, describeComparison(label, c, TOL)).toBe(true);
}

for (const g of goldenVariants()) {
  test(`${g.model} (${g.about}) in Chromium matches the PyTorch reference`, async ({ page }) => {
    await page.goto('/parity.html');
    await expect(page.locator('body')).toHaveAttribute('data-ready', 'yes');
    const r = await page.evaluate((model) => window.tesseraParity!(`/models/${model}/`, 20), g.model);
    expect(r.tilesU8.length).toBe(g.numTiles * 3 * g.tileSize * g.tileSize);
    // PNG decoding is exact in every decoder, so the browser path gives HF's pixels too.
    expect(Buffer.from(Uint8Array.from(r.tilesU8)).equals(Buffer.from(goldenU8(g.tiles)))).toBe(true);
    if (g.vision) expectClose('vision tower output', r.towerOutput, goldenF32(g.vision));
    if (g.connector) expectClose('connector output', r.connector, goldenF32(g.connector));
    expectClose('first-step logits', r.logits, goldenF32(g.logits));
    expect(r.tokenIds).toEqual(goldenTokens(g.model));
  });
}

test('voxtral-tiny-odd (80 mel bins, 3 frames per token, head_dim 20, tied, F16) transcribes a 35 s clip in Chromium with the reference tokens', async ({
  page,
}) => {
  const golden = JSON.parse(readFileSync('test/fixtures/goldens/audio/voxtral.json', 'utf8')).cases['voxtral-tiny-odd'];
  await page.goto('/parity.html');
  await expect(page.locator('body')).toHaveAttribute('data-ready', 'yes');
  const r = await page.evaluate(
    ([seconds]) => window.tesseraAudioParity!('/models/voxtral-tiny-odd/', seconds, 20),
    [golden.seconds as number],
  );
  // Two 30-second chunks, encoded together in the encoder Web Worker, then the greedy tokens of test/reference/voxtral.py.
  expect(r).toMatchObject({ chunks: 2, decoder: 'wav', encoderMode: 'workers', sources: ['encoded', 'encoded'] });
  expect(r.tokenIds).toEqual(golden.greedy);
});

test('compressed audio decodes in Chromium to exactly its length and in step with ffmpeg (gapless MP3, AAC priming, Opus pre-skip)', async ({
  page,
}) => {
  await page.goto('/parity.html');
  await expect(page.locator('body')).toHaveAttribute('data-ready', 'yes');
  // 10 s at 44.1 kHz stereo decodes to exactly 10 s (a decoder that keeps an MP3's encoder delay and
  // padding reads 10.04 s: a 30 s file would then take a second 30-second chunk).
  const dir = mkdtempSync(join(tmpdir(), 'tessera-audio-'));
  const wav = join(dir, 'clip.wav');
  writeFileSync(wav, wavBytes(testClip(10, 44100), 44100));
  for (const [file, codec] of [
    ['clip.mp3', ['-c:a', 'libmp3lame', '-b:a', '128k']],
    ['clip.m4a', ['-c:a', 'aac', '-b:a', '128k']],
    ['clip.ogg', ['-c:a', 'libopus', '-b:a', '96k']],
    ['clip.flac', ['-c:a', 'flac']],
  ] as const) {
    const path = join(dir, file);
    execFileSync('ffmpeg', ['-v', 'error', '-y', '-i', wav, '-ac', '2', ...codec, path]);
    const bytes = readFileSync(path);
    const r = await page.evaluate(([b64]) => window.tesseraDecodeAudio!(b64!, 16000), [bytes.toString('base64')]);
    const ours = new Float32Array(Buffer.from(r.pcm, 'base64').buffer.slice(0));
    const ffmpeg = await collect(decodeAudioNode(bytes, 16000));
    expect(ours.length, `${file} (${r.format})`).toBe(10 * 16000);
    expect(ffmpeg.length).toBe(10 * 16000);
    let worst = 0;
    for (let i = 0; i < ours.length; i++) worst = Math.max(worst, Math.abs(ours[i]! - ffmpeg[i]!));
    expect(worst, `${file} (${r.format}): largest difference from ffmpeg's decode`).toBeLessThan(0.01);
  }
  rmSync(dir, { recursive: true, force: true });
});

async function collect(blocks: AsyncIterable<Float32Array>): Promise<Float32Array> {
  const parts: Float32Array[] = [];
  for await (const b of blocks) parts.push(b);
  const out = new Float32Array(parts.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of parts) {
    out.set(b, at);
    at += b.length;
  }
  return out;
}

test('the CPU backend in Chromium (onnxruntime-web, WebAssembly; encoder in a Web Worker) gives the greedy goldens, also beside a streaming request', async ({
  page,
}) => {
  await page.goto('/parity.html');
  await expect(page.locator('body')).toHaveAttribute('data-ready', 'yes');
  for (const model of ['smolvlm-tiny', 'smolvlm-tiny-hd8']) {
    const r = await page.evaluate((m) => window.tesseraCpuParity!(`/models/${m}/`, 20), model);
    expect(r).toMatchObject({ backend: 'wasm', encoderMode: 'workers' });
    expect(r.tokenIds, model).toEqual(goldenTokens(model));
    // Asked again while a long request streams: the same tokens (its image blocks from the prefix cache),
    // and done while the long one still runs (the decode loop lets the page's tasks in between steps).
    expect(r.beside.tokenIds, model).toEqual(goldenTokens(model));
    expect(r.beside.longTokens, model).toBeGreaterThan(100);
    expect(r.beside.longTokensWhenDone, model).toBeLessThan(r.beside.longTokens);
    expect(r.reason).toContain('onnxruntime WebAssembly, 1 thread: the page is not cross-origin isolated');
  }
});

// The dev server sends COEP/CORP on every script and worker (vite.config.ts), as a deployment must: the
// WebAssembly threads and the encoder are Web Workers, which do not start under COEP without them (with
// only the page isolated, the first run waited for its threads for ever).
test('the CPU backend in a cross-origin isolated page runs onnxruntime-web on threads and gives the goldens', async ({ page }) => {
  await page.goto('/parity.html?isolated');
  await expect(page.locator('body')).toHaveAttribute('data-ready', 'yes');
  expect(await page.evaluate(() => globalThis.crossOriginIsolated)).toBe(true);
  const cores = await page.evaluate(() => navigator.hardwareConcurrency);
  const r = await page.evaluate(() => window.tesseraCpuParity!('/models/smolvlm-tiny/', 20));
  expect(r.reason).toContain(`onnxruntime WebAssembly, ${Math.min(4, cores)} thread`);
  expect(r).toMatchObject({ backend: 'wasm', encoderMode: 'workers' });
  expect(r.tokenIds).toEqual(goldenTokens('smolvlm-tiny'));
  expect(r.beside.tokenIds).toEqual(goldenTokens('smolvlm-tiny'));
});

test('weight dtypes in Chromium: f16 storage keeps the greedy tokens; a q4 copy is stored in the Cache API and read back', async ({
  page,
}) => {
  await page.goto('/parity.html');
  await expect(page.locator('body')).toHaveAttribute('data-ready', 'yes');
  // The default dtype keeps this BF16 checkpoint's matrices as bf16 (exact, 2 bytes a weight).
  const base = await page.evaluate(() => window.tesseraParity!('/models/smolvlm-tiny/', 4));
  // f16 storage unpacked in the shaders (this adapter has no shader-f16): the checkpoint is BF16, which f16
  // holds exactly in this range, so the results are the f32 ones.
  const f16 = await page.evaluate(() => window.tesseraParity!('/models/smolvlm-tiny/', 4, { dtype: 'f16' }));
  expect(f16.tokenIds).toEqual(goldenTokens('smolvlm-tiny').slice(0, 4));
  expectClose('f16 first-step logits', f16.logits, goldenF32('tiny-logits-step0.f32.bin'));
  // f16 takes 2 bytes a weight as well: no smaller than the default for a BF16 checkpoint.
  expect(f16.weightBytes / base.weightBytes).toBeGreaterThan(0.95);
  expect(f16.weightBytes / base.weightBytes).toBeLessThan(1.05);
  const first = await page.evaluate(() => window.tesseraParity!('/models/smolvlm-tiny/', 4, { dtype: 'q4', weightCache: true }));
  expect(first.storedCopies).toEqual({ 'model.safetensors': 'written' });
  expect(first.weightBytes / base.weightBytes).toBeLessThan(0.35);
  await page.reload();
  await expect(page.locator('body')).toHaveAttribute('data-ready', 'yes');
  const second = await page.evaluate(() => window.tesseraParity!('/models/smolvlm-tiny/', 4, { dtype: 'q4', weightCache: true }));
  expect(second.storedCopies).toEqual({ 'model.safetensors': 'read' });
  expect(second.logits).toEqual(first.logits);
  expect(second.tokenIds).toEqual(first.tokenIds);
});
