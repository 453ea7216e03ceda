// Media encoding policies in Node: cross-request batching, per-item timeouts, a reduced-resolution retry
// after a (simulated) GPU out-of-memory, opt-in text-only fallback, cancellation releasing cache
// references at once, the persistent tier on files, and the same engine on worker_threads (the built,
// minified dist/encoder-worker.js) including a worker killed mid-encode, the caller's image memory never
// detached by the transfer, and errors keeping their class across the worker (so `instanceof` and
// allowReducedResolution work in worker mode).

import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fsStore } from '../../src/cache/fs-store';
import type { EncoderWorkerPool } from '../../src/encoder/worker-pool';
import type { Engine } from '../../src/engine/engine';
import type { ChatCompletionRequest } from '../../src/engine/types';
import {
  EncodeTimeoutError,
  EncoderOutOfMemoryError,
  EncoderWorkerCrashedError,
  ImageDecodeError,
  RequestAbortedError,
  TesseraError,
} from '../../src/errors';
import { FAULTY_WORKER, testEngine } from '../helpers/engine';
import { goldenManifest } from '../helpers/goldens';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

const gpu = useGpu();
const SAMPLE = readFileSync(resolve(import.meta.dirname, '../../public/sample.png'));
const TOKENS = goldenManifest().greedy['smolvlm-tiny'].tokens;
let dir: string;

function ask(image: Uint8Array, extra: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest & { stream?: false } {
  return {
    messages: [
      {
        role: 'user',
        content: [
          { type: 'image', image },
          { type: 'text', text: 'Can you describe this image?' },
        ],
      },
    ],
    max_tokens: 2,
    ...extra,
    stream: false,
  };
}

function flat(r: number, g: number, b: number, width = 300, height = 200): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background: { r, g, b } } })
    .png()
    .toBuffer();
}

beforeAll(() => {
  dir = `${ensureTinyModels()}/smolvlm-tiny`;
});

describe('in-process encoder', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await testEngine(gpu(), dir, { kvCacheTokens: 2048, maxTokensPerStep: 128, encoder: { maxBatchTiles: 40 } });
  });
  afterAll(() => engine?.destroy());

  it('batches the tiles of encodes that arrive together (two requests) into one forward pass', async () => {
    // In-process encoding shares the engine's device: its memory is in gpuMemory, with nothing apart.
    expect(engine.stats().encoder.gpuMemory).toBeUndefined();
    const [pa, pb] = await Promise.all([engine.media.prepare(await flat(200, 30, 30)), engine.media.prepare(await flat(30, 200, 30))]);
    const [a, b] = await Promise.all([engine.media.embeddings(pa, 101), engine.media.embeddings(pb, 102)]);
    engine.media.release(101);
    engine.media.release(102);
    expect([a.source, b.source]).toEqual(['encoded', 'encoded']);
    expect(engine.stats().encoder.batchedEncodes).toBe(2);
    expect(a.data.length).toBe(pa.numTokens * engine.media.info.hiddenSize);
  });

  it('an encode past its timeout fails that request with the number; the next request works', async () => {
    const err = await engine.chat.completions
      .create(ask(await flat(1, 2, 3), { tessera: { encodeTimeoutMs: 1 } }))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EncodeTimeoutError);
    expect((err as Error).message).toContain('longer than 1 ms');
    const ok = await engine.chat.completions.create(ask(SAMPLE));
    expect(ok.tessera.tokenIds).toEqual(TOKENS.slice(0, 2));
  });

  it("cancellation during an encode releases the request's cache references at once", async () => {
    const abort = new AbortController();
    const image = await flat(90, 90, 200, 500, 300);
    const pending = engine.chat.completions.create(ask(image, { signal: abort.signal }));
    while (engine.stats().lifecycle.encoding === engine.stats().lifecycle.ready) await new Promise((r) => setTimeout(r, 2));
    abort.abort();
    const err = await pending.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RequestAbortedError);
    const key = (await engine.media.prepare(image)).key;
    expect(engine.media.refCount(key)).toBe(0);
    expect(engine.stats().kv.numFreeBlocks).toBe(engine.stats().kv.numBlocks);
  });
});

describe('GPU out of memory while encoding (a test backend fails encodes above 5 tiles)', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await testEngine(gpu(), dir, { kvCacheTokens: 2048, maxTokensPerStep: 128, faults: { oomAboveTiles: 5 } });
  });
  afterAll(() => engine?.destroy());

  it('fails with a named error when the caller allows nothing else', async () => {
    const err = await engine.chat.completions.create(ask(SAMPLE)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EncoderOutOfMemoryError);
    expect((err as Error).message).toContain('encoding 13 image tiles');
  });

  it('retries once at a reduced resolution when allowed', async () => {
    const r = await engine.chat.completions.create(ask(SAMPLE, { tessera: { allowReducedResolution: true } }));
    expect(r.tessera.media[0].longestEdge).toBe(256);
    expect(r.tessera.numTiles).toBe(5);
    expect(r.tessera.imageTokens).toBe(5 * 16);
    expect(r.tessera.degraded).toBeUndefined();
  });

  it('answers text-only, flagged, when the caller opts in', async () => {
    const r = await engine.chat.completions.create(ask(SAMPLE, { tessera: { textOnlyFallback: true } }));
    expect(r.tessera.degraded).toBe('text-only');
    expect(r.tessera.imageTokens).toBe(0);
    expect(r.tessera.tokenIds.length).toBe(2);
  });
});

describe('persistent tier on files (Node)', () => {
  it('a new engine answers from the files without encoding', async () => {
    const cacheDir = mkdtempSync(join(tmpdir(), 'tessera-cache-'));
    try {
      const first = await testEngine(gpu(), dir, { kvCacheTokens: 1024, maxTokensPerStep: 128, store: fsStore(cacheDir) });
      const a = await first.chat.completions.create(ask(SAMPLE));
      expect((await first.encoderCache.inspect()).entries.length).toBe(1);
      first.destroy();
      const second = await testEngine(gpu(), dir, { kvCacheTokens: 1024, maxTokensPerStep: 128, store: fsStore(cacheDir) });
      const b = await second.chat.completions.create(ask(SAMPLE));
      expect(b.tessera.media[0].source).toBe('persistent');
      expect(b.tessera.tokenIds).toEqual(a.tessera.tokenIds);
      expect(second.stats().encoder.encodes).toBe(0);
      await second.encoderCache.clear();
      expect((await second.encoderCache.inspect()).entries.length).toBe(0);
      second.destroy();
    } finally {
      rmSync(cacheDir, { recursive: true, force: true });
    }
  });
});

describe('encoder in worker threads', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await testEngine(gpu(), dir, { kvCacheTokens: 2048, maxTokensPerStep: 128, workers: true });
  });
  afterAll(() => engine?.destroy());

  it('answers with the reference tokens', async () => {
    expect(engine.stats().encoder.mode).toBe('workers');
    const r = await engine.chat.completions.create(ask(SAMPLE, { max_tokens: 4 }));
    expect(r.tessera.tokenIds).toEqual(TOKENS.slice(0, 4));
    expect(r.tessera.media[0].source).toBe('encoded');
  });

  it("reports the worker's own GPU memory apart from the engine's device (the tower's weights and its scratch)", async () => {
    const s = engine.stats();
    const worker = s.encoder.gpuMemory!;
    // The tower's weights and scratch live on the worker's device (the engine's device here is this file's
    // shared test context, which other engines' pooled buffers also count in); in-process, on the same device,
    // there is nothing apart to report (the in-process describe above).
    expect(worker.bytesLive).toBeGreaterThan(0);
    expect(worker.peakBytes).toBeGreaterThanOrEqual(worker.bytesLive);
    // Each encode updates it: another image's encode leaves a report that is the worker's device's again.
    await engine.chat.completions.create(ask(await flat(40, 90, 160, 900, 700), { max_tokens: 1 }));
    const after = engine.stats().encoder.gpuMemory!;
    expect(after.peakBytes).toBeGreaterThanOrEqual(worker.peakBytes);
    expect(after.bytesLive).toBeGreaterThan(0);
  });

  it('a worker killed mid-encode fails that request; the restarted worker serves the next', async () => {
    const pending = engine.chat.completions.create(ask(await flat(10, 10, 10)));
    while (engine.stats().lifecycle.encoding === engine.stats().lifecycle.ready) await new Promise((r) => setTimeout(r, 2));
    (engine.media.backend as EncoderWorkerPool).killWorker(0);
    const err = await pending.catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EncoderWorkerCrashedError);
    const r = await engine.chat.completions.create(ask(await flat(10, 10, 11)));
    expect(r.tessera.media[0].source).toBe('encoded');
    expect((engine.media.backend as EncoderWorkerPool).stats().restarts).toBe(1);
  });
});

describe('encoder worker (built dist/encoder-worker.js)', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await testEngine(gpu(), dir, { kvCacheTokens: 2048, maxTokensPerStep: 128, workers: true });
  });
  afterAll(() => engine?.destroy());

  it("never detaches the caller's memory: a Node Buffer and a small view into a large ArrayBuffer stay whole", async () => {
    const buffer = Buffer.from(SAMPLE);
    const big = new ArrayBuffer(200_000);
    const view = new Uint8Array(big, 1000, SAMPLE.byteLength);
    view.set(SAMPLE);
    const r = await engine.chat.completions.create({
      ...ask(buffer),
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', image: buffer },
            { type: 'image', image: view },
            { type: 'text', text: 'Compare them.' },
          ],
        },
      ],
    });
    expect(r.tessera.media.map((m) => m.source)).toEqual(['encoded', 'inflight']);
    expect(buffer.byteLength).toBe(SAMPLE.byteLength);
    expect(Buffer.compare(buffer, SAMPLE)).toBe(0);
    expect(big.byteLength).toBe(200_000);
    expect(view.byteLength).toBe(SAMPLE.byteLength);
    expect(Buffer.compare(Buffer.from(view), SAMPLE)).toBe(0);
    // And the same bytes answer as the reference does (the copies sent were the caller's bytes).
    const again = await engine.chat.completions.create(ask(buffer));
    expect(again.tessera.tokenIds).toEqual(TOKENS.slice(0, 2));
    expect(again.tessera.media[0].source).toBe('memory');
  });

  it('an error thrown in the worker keeps its class and fields (instanceof works)', async () => {
    const err = await engine.chat.completions.create(ask(new TextEncoder().encode('definitely not a PNG'))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ImageDecodeError);
    expect(err).toBeInstanceOf(TesseraError);
    expect((err as ImageDecodeError).code).toBe('IMAGE_DECODE');
    expect((err as Error).name).toBe('ImageDecodeError');
    expect((err as Error).message).toContain('20 bytes could not be decoded as an image');
  });
});

describe('encoder worker that runs out of GPU memory above 5 tiles (test worker entry, built like the real one)', () => {
  let engine: Engine;
  beforeAll(async () => {
    engine = await testEngine(gpu(), dir, {
      kvCacheTokens: 2048,
      maxTokensPerStep: 128,
      workers: true,
      workerScript: FAULTY_WORKER,
      faults: { oomAboveTiles: 5 },
    });
  });
  afterAll(() => engine?.destroy());

  it('EncoderOutOfMemoryError crosses the worker as itself, and allowReducedResolution retries', async () => {
    const err = await engine.chat.completions.create(ask(SAMPLE)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EncoderOutOfMemoryError);
    expect((err as EncoderOutOfMemoryError).numTiles).toBe(13);
    const r = await engine.chat.completions.create(ask(SAMPLE, { tessera: { allowReducedResolution: true } }));
    expect(r.tessera.media[0].longestEdge).toBe(256);
    expect(r.tessera.numTiles).toBe(5);
  });
});
