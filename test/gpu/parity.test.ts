// Parity with the independent PyTorch reference (test/reference/): the tiny random-weight checkpoints
// on public/sample.png, through Tessera's own processor, vision encoder and language model, on Dawn.
// Tolerances: the reference is float64; f32 noise measured there is below 1e-5 (manifest.json
// f32_vs_f64_max_abs_diff), GPU reduction order and exp() differ a little more, so tensors must agree
// within atol 1e-4 + rtol 1e-3 and greedy tokens exactly.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { generate } from '../../src/model/generate';
import { loadModel } from '../../src/families/load';
import type { LoadedModel } from '../../src/model/load';
import { NodeDirSource } from '../../src/io/model-source-node';
import { loadProcessorFromDirectory } from '../../src/processor/node';
import type { Idefics3Processor, PreparedPrompt } from '../../src/processor';
import { goldenVariants, goldenInputIdsOf } from '../helpers/golden-variants';
import { goldenF32, goldenManifest, goldenU8 } from '../helpers/goldens';
import { expectClose, SAMPLE_MESSAGES } from '../helpers/parity';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

const gpu = useGpu();

let dir: string;
beforeAll(() => {
  dir = ensureTinyModels();
});

describe('goldens match the checkpoints they were made from', () => {
  it('make:tiny still writes byte-identical weights', () => {
    const golden = goldenManifest().checkpoints;
    for (const [model, files] of Object.entries(golden)) {
      for (const [path, sha] of Object.entries(files)) {
        const bytes = readFileSync(resolve(dir, '..', '..', path));
        const actual = createHash('sha256').update(bytes).digest('hex');
        expect(actual, `${model}: ${path} changed; regenerate goldens (npm run goldens)`).toBe(sha);
      }
    }
  });
});

// Every tiny checkpoint: the original two, and the head- and patch-size variants (so400m layout with
// vision head_dim 72 and patch 14, text head_dim 128, head_dims 16 / 8).
for (const g of goldenVariants()) {
  describe(`${g.model} (${g.about}) end to end against the PyTorch reference`, () => {
    let model: LoadedModel;
    let processor: Idefics3Processor;
    let prepared: PreparedPrompt;

    beforeAll(async () => {
      model = await loadModel(gpu(), new NodeDirSource(`${dir}/${g.model}`), { kvCacheTokens: 512, maxTokensPerStep: 128 });
      processor = await loadProcessorFromDirectory(`${dir}/${g.model}`);
      prepared = await processor.prepare(SAMPLE_MESSAGES);
      return () => model.destroy();
    });

    it('processor: token ids equal the reference input and pixels equal the PIL tiles', () => {
      expect(Array.from(prepared.plan.tokenIds)).toEqual(goldenInputIdsOf(g.input));
      expect(Buffer.from(prepared.images[0].tilesU8).equals(Buffer.from(goldenU8(g.tiles)))).toBe(true);
    });

    it('vision tower, connector, first-step logits and 20 greedy tokens match', async () => {
      const image = prepared.images[0];
      const vision = await model.vision!.encode(
        { pixels: image.pixelValues, numTiles: image.layout.numTiles },
        { captureTowerOutput: true },
      );
      try {
        if (g.vision) expectClose('vision tower output', vision.towerOutput!, goldenF32(g.vision));
        if (g.connector) expectClose('connector output', await gpu().readF32(vision.embeddings), goldenF32(g.connector));
        let logits: Float32Array | undefined;
        const tokens: number[] = [];
        for await (const t of generate(model.runner, 1, {
          promptIds: prepared.plan.tokenIds,
          placeholders: prepared.plan.placeholders.flatMap((p) => p.runs),
          mediaEmbeddings: await gpu().readF32(vision.embeddings),
          maxNewTokens: 20,
          stopIds: new Set(processor.stopTokenIds),
          chunkSize: 100, // prompts of 161 / 252 tokens in 2-3 chunks: chunk edges cut through image placeholder runs
          onFirstLogits: (l) => (logits = l),
        })) {
          tokens.push(t);
        }
        expectClose('first-step logits', logits!, goldenF32(g.logits));
        expect(tokens).toEqual(goldenManifest().greedy[g.model].tokens);
        expect(model.kv.stats().numFree).toBe(model.kv.stats().numBlocks);
      } finally {
        gpu().release(vision.embeddings);
      }
    });

    // The fused decode plan (GPUs' default; this device's is 'separate'): each decode step's layers with
    // their norms fused into the products (decode-qkv, decode-gate-up, decode-head). The prompt's chunks run
    // the separate kernels either way, so the first token is the same; the 5 decode steps after it are the
    // check (each costs SwiftShader ~0.5 s in the fused kernels' barriers, so not all 19).
    it('decoding with the fused plan gives the first 6 greedy tokens in fewer dispatches per step', async () => {
      const fused = await loadModel(gpu(), new NodeDirSource(`${dir}/${g.model}`), {
        kvCacheTokens: 512,
        maxTokensPerStep: 128,
        vision: false,
        decodePlan: 'fused',
      });
      const image = prepared.images[0];
      const vision = await model.vision!.encode({ pixels: image.pixelValues, numTiles: image.layout.numTiles });
      try {
        expect(fused.lm.decodePlan).toBe('fused');
        const tokens: number[] = [];
        for await (const t of generate(fused.runner, 1, {
          promptIds: prepared.plan.tokenIds,
          placeholders: prepared.plan.placeholders.flatMap((p) => p.runs),
          mediaEmbeddings: await gpu().readF32(vision.embeddings),
          maxNewTokens: 6,
          stopIds: new Set(processor.stopTokenIds),
          chunkSize: 100,
        })) {
          tokens.push(t);
        }
        expect(tokens).toEqual(goldenManifest().greedy[g.model].tokens.slice(0, 6));
        // A decode step: the embedding, then per layer decode-qkv, decode-attention-out, decode-gate-up and
        // the down projection, then decode-head and argmax: 4 per layer + 3.
        const layers = fused.config.text.numLayers;
        const step = fused.lm.lastStep;
        expect(step.numTokens).toBe(1);
        expect(step.numDispatches).toBe(4 * layers + 3);
        expect(step.numDispatches).toBeLessThan(model.lm.lastStep.numDispatches);
      } finally {
        gpu().release(vision.embeddings);
        fused.destroy();
      }
    });
  });
}
