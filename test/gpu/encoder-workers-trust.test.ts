// Encoder workers as the package runs them (the built, minified dist/encoder-worker.js): the caller's image
// memory is never detached by the transfer to a worker, and errors thrown in a worker arrive as the same
// named classes, so `instanceof` and the failure policies (allowReducedResolution) work in worker mode.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine';
import type { ChatCompletionRequest } from '../../src/engine/types';
import { EncoderOutOfMemoryError, ImageDecodeError, TesseraError } from '../../src/errors';
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
    messages: [{ role: 'user', content: [{ type: 'image', image }, { type: 'text', text: 'Can you describe this image?' }] }],
    max_tokens: 2,
    ...extra,
    stream: false,
  };
}

beforeAll(() => {
  dir = `${ensureTinyModels()}/smolvlm-tiny`;
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
          content: [{ type: 'image', image: buffer }, { type: 'image', image: view }, { type: 'text', text: 'Compare them.' }],
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
    engine = await testEngine(gpu(), dir, { kvCacheTokens: 2048, maxTokensPerStep: 128, workers: true, workerScript: FAULTY_WORKER, faults: { oomAboveTiles: 5 } });
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
