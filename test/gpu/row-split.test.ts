// Weights larger than one binding (src/model/weights/row-split.ts): with the device's binding limit forced
// below a tiny checkpoint's token embedding, its embedding and LM head load in parts of rows, and the engine
// answers exactly as with the whole weights: the same tokens and the same log probabilities, bit for bit
// (each part computes its columns as the whole matmul does). Also through a stored quantized copy, written
// and read back in parts; and the pure part arithmetic.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine';
import { DeviceLimitError } from '../../src/errors';
import { isPacked, packedSizeBytes } from '../../src/kernels/weight-format';
import type { ModelWeights } from '../../src/model/weights';
import { rowPieces, rowsPerPart, type RowSplitWeight } from '../../src/model/weights/row-split';
import type { StoredEntry } from '../../src/model/weights/stored-copy';
import { askAboutSample } from '../helpers/ask-sample';
import { testEngine } from '../helpers/engine';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

const gpu = useGpu();

/** A WebGPU engine's weights. */
function weightsOf(engine: Engine): ModelWeights {
  const m = engine.model;
  if (m.backend !== 'webgpu') throw new Error(`${m.backend}: not a WebGPU engine`);
  return m.weights;
}

/** The GPU bytes of an engine's token embedding as loaded (data and scales). */
function embedBytes(engine: Engine): number {
  const w = weightsOf(engine).matrix('text.embed');
  const [N, K] = w.shape;
  return isPacked(w) ? packedSizeBytes(w.format, N, K) : N * K * 4;
}

describe('parts of rows', () => {
  it('rowsPerPart: none when the weight fits; else the most whole rows per binding; a row too large is named', () => {
    expect(rowsPerPart('w', 'f32', [100, 16], 100 * 16 * 4)).toBeUndefined();
    expect(rowsPerPart('w', 'f32', [100, 16], 1024)).toBe(15); // (1024 - 16) / 64
    // q4: a row of 64 is 2 groups of 4 words of data, and 2 words of scales
    expect(rowsPerPart('w', 'q4', [1000, 64], 8192)).toBe(Math.floor((8192 - 16) / 32));
    expect(() => rowsPerPart('w', 'f32', [10, 1024], 2048)).toThrow(DeviceLimitError);
  });

  it("rowPieces: an entry's rows cut at the parts' edges (f32 entries count elements)", () => {
    const target = {
      rowSplit: true,
      key: 'w',
      shape: [10, 4],
      format: 'f32',
      parts: [0, 4, 8].map((first) => ({ first, rows: Math.min(4, 10 - first), weight: undefined as never })),
    } as RowSplitWeight;
    // A fused target's second tensor: rows 3..9 of the weight, as elements 12..39.
    const entry: StoredEntry = { name: 't', target: 'w', format: 'f32', rowOffset: 12, rows: 28, K: 1, dataBytes: 112, scaleBytes: 0 };
    const pieces = rowPieces(target, entry).map((p) => [p.entry.rowOffset, p.entry.rows, p.from, p.entry.dataBytes]);
    expect(pieces).toEqual([
      [12, 4, 0, 16],
      [0, 16, 4, 64],
      [0, 8, 20, 32],
    ]);
  });
});

describe.each([
  ['smolvlm-tiny', 'f32'], // BF16 tensors kept as bf16; untied head
  ['smolvlm-tiny', 'q4'],
  ['qwen3_vl-tiny', 'f32'], // F16 tensors widened to f32; untied head; vocabulary 151936
  ['qwen2_5_vl-tiny', 'q8'], // the head tied to the embedding: one split weight read by both
] as const)('%s (%s) on a device that binds less than its embedding', (name, dtype) => {
  const dir = () => `${ensureTinyModels()}/${name}`;
  const options = { dtype, kvCacheTokens: 512, maxTokensPerStep: 64, maxSeqs: 2 } as const;
  let whole: Engine;
  let split: Engine;
  let limit: number;
  beforeAll(async () => {
    whole = await testEngine(gpu(), dir(), options);
    limit = Math.ceil(embedBytes(whole) / 3) + 64;
    split = await testEngine(gpu().withBindingLimit(limit), dir(), options);
  });
  afterAll(() => {
    whole?.destroy();
    split?.destroy();
  });

  it('loads the embedding and the head in parts within the limit, and answers bit for bit as the whole weights', async () => {
    const embed = weightsOf(split).rowParts('text.embed');
    expect(embed.length).toBeGreaterThanOrEqual(3);
    expect(weightsOf(split).rowParts('text.lm_head').length).toBeGreaterThanOrEqual(3);
    expect(embed.map((p) => p.first + p.rows).at(-1)).toBe(weightsOf(whole).matrix('text.embed').shape[0]);
    const [a, b] = [await askAboutSample(whole), await askAboutSample(split)];
    expect(b.tessera.tokenIds).toEqual(a.tessera.tokenIds);
    expect(b.choices[0].logprobs!.content!.map((l) => l.logprob)).toEqual(a.choices[0].logprobs!.content!.map((l) => l.logprob));
    expect(split.stats().gpuMemory.peakBytes).toBeGreaterThan(0);
  });
});

it('a weight over the limit that its kernels read whole is refused at load, by name, with what to do', async () => {
  // smolvlm-tiny's largest matrix besides the embedding and head: gate_up [2 * 512, 192], bf16 here.
  const dir = `${ensureTinyModels()}/smolvlm-tiny`;
  const e = testEngine(gpu().withBindingLimit(64 * 1024), dir, { kvCacheTokens: 64, maxTokensPerStep: 16, maxSeqs: 1 });
  const err = await e.then(
    (x) => {
      x.destroy();
      return undefined;
    },
    (x: unknown) => x,
  );
  expect(err).toBeInstanceOf(DeviceLimitError);
  expect((err as Error).message).toMatch(
    /^weight \S+ \(\w+\): needs maxStorageBufferBindingSize \(bytes of one buffer\) = \d+ but this device allows 65536; load it in a smaller dtype/,
  );
});

describe('a stored quantized copy of weights in parts', () => {
  let cache: string;
  beforeAll(() => {
    cache = mkdtempSync(join(tmpdir(), 'tessera-row-split-'));
  });
  afterAll(() => rmSync(cache, { recursive: true, force: true }));

  it('is written from the parts and read back into them: the same answer as quantizing at load', async () => {
    const dir = `${ensureTinyModels()}/smolvlm-tiny`;
    const options = { dtype: 'q4', kvCacheTokens: 512, maxTokensPerStep: 64, maxSeqs: 2 } as const;
    const whole = await testEngine(gpu(), dir, options);
    const limited = gpu().withBindingLimit(Math.ceil(embedBytes(whole) / 3) + 64);
    const want = await askAboutSample(whole);
    whole.destroy();
    for (const status of ['written', 'read']) {
      const e = await testEngine(limited, dir, { ...options, weightCacheDir: cache });
      try {
        expect(Object.values(weightsOf(e).storedCopies)).toEqual([status]);
        expect(weightsOf(e).rowParts('text.embed').length).toBeGreaterThanOrEqual(3);
        expect((await askAboutSample(e)).tessera.tokenIds).toEqual(want.tessera.tokenIds);
      } finally {
        e.destroy();
      }
    }
  });
});
