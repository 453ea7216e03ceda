// A remote engine's local encoder on WebGPU with a URL checkpoint (startNodeMediaEncoder): it reads the
// vision tower and connector of model.safetensors by range requests, never the language model's bytes, and
// its embeddings of the sample image are the PyTorch reference's (the connector golden, as parity.test.ts
// checks a whole-file load; test/unit/partial-safetensors.test.ts checks the tensors byte for byte).

import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNodeMediaEncoder } from '../../src/engine/create-node';
import { imageEmbeddingsOf } from '../../src/encoder/image-embeddings';
import { goldenVariants } from '../helpers/golden-variants';
import { goldenF32 } from '../helpers/goldens';
import { expectClose } from '../helpers/parity';
import { type RangeServer, startRangeServer } from '../helpers/range-server';
import { ensureTinyModels } from '../helpers/tiny-models';

const SAMPLE = new Uint8Array(readFileSync(resolve(import.meta.dirname, '../../public/sample.png')));
let server: RangeServer;

beforeAll(async () => {
  server = await startRangeServer(ensureTinyModels());
});
afterAll(() => server?.close());

describe("the remote engine's encoder over HTTP", () => {
  it('reads only the encoder tensors by range requests, and encodes the sample as the PyTorch reference does', async () => {
    const options = { device: 'webgpu' as const, encoder: { mode: 'in-process' as const }, weightCacheDir: false as const };
    const remote = await startNodeMediaEncoder({ ...options, model: `${server.url}smolvlm-tiny/` });
    let viaRanges: Float32Array;
    try {
      viaRanges = Float32Array.from((await imageEmbeddingsOf(remote.media, SAMPLE, 1)).data);
    } finally {
      remote.destroy();
    }
    const weights = server.served.filter((s) => s.path.endsWith('model.safetensors'));
    const size = statSync(`${ensureTinyModels()}/smolvlm-tiny/model.safetensors`).size;
    expect(weights.length).toBeGreaterThan(2);
    expect(weights.every((s) => s.range !== undefined)).toBe(true);
    expect(weights.reduce((a, s) => a + s.bytes, 0)).toBeLessThan(size * 0.8);

    const g = goldenVariants().find((v) => v.model === 'smolvlm-tiny')!;
    expectClose('connector output via range reads', viaRanges, goldenF32(g.connector!));
  });
});
