import * as ort from 'onnxruntime-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { NodeDirSource } from '../../src/io/model-source-node';
import { generate } from '../../src/model/generate';
import type { OrtRuntime } from '../../src/model/ort/ort-api';
import { loadOrtModel, loadOrtVisionEncoder, type OrtLoadedModel } from '../../src/model/ort/load-ort';
import type { OrtVisionEncoder } from '../../src/model/ort/ort-vision';
import { loadProcessorFromDirectory } from '../../src/processor/node';
import type { PreparedPrompt } from '../../src/processor';
import { goldenVariants } from '../helpers/golden-variants';
import { goldenF32, goldenManifest } from '../helpers/goldens';
import { expectClose, SAMPLE_MESSAGES } from '../helpers/parity';
import { ensureTinyModels } from '../helpers/tiny-models';

const CPU: OrtRuntime = { ort, provider: 'cpu' };
const ONNX_MODELS = ['smolvlm-tiny', 'smolvlm-tiny-tied', 'smolvlm-tiny-hd8'];

let dir: string;
beforeAll(() => {
  dir = ensureTinyModels();
});

for (const g of goldenVariants().filter((v) => ONNX_MODELS.includes(v.model))) {
  describe(`${g.model} (${g.about}) on onnxruntime against the PyTorch reference`, () => {
    let model: OrtLoadedModel;
    let vision: OrtVisionEncoder;
    let prepared: PreparedPrompt;
    let stopIds: Set<number>;

    beforeAll(async () => {
      const source = new NodeDirSource(`${dir}/${g.model}`);
      model = await loadOrtModel(CPU, source, { kvCacheTokens: 2048, maxTokensPerStep: 128 });
      vision = await loadOrtVisionEncoder(CPU, source);
      const processor = await loadProcessorFromDirectory(`${dir}/${g.model}`);
      prepared = await processor.prepare(SAMPLE_MESSAGES);
      stopIds = new Set(processor.stopTokenIds);
      return () => {
        model.destroy();
        vision.destroy();
      };
    });

    it('connector output, first-step logits and 20 greedy tokens match', async () => {
      const image = prepared.images[0]!;
      const embeddings = await vision.encode({ pixels: image.pixelValues, numTiles: image.layout.numTiles });
      if (g.connector) expectClose('connector output', embeddings, goldenF32(g.connector));
      let logits: Float32Array | undefined;
      const tokens: number[] = [];
      for await (const t of generate(model.runner, 1, {
        promptIds: prepared.plan.tokenIds,
        placeholders: prepared.plan.placeholders.flatMap((p) => p.runs),
        mediaEmbeddings: embeddings,
        maxNewTokens: 20,
        stopIds,
        chunkSize: 100, // chunk edges cut through image placeholder runs
        onFirstLogits: (l) => (logits = l),
      })) {
        tokens.push(t);
      }
      expectClose('first-step logits', logits!, goldenF32(g.logits));
      expect(tokens).toEqual(goldenManifest().greedy[g.model].tokens);
      expect(model.runner.kv.stats().numFree).toBe(model.runner.kv.stats().numBlocks);
    });
  });
}

describe('several sequences through one runner', () => {
  it('decoding together (batched, padded past) and prefilling beside them gives each its solo tokens', async () => {
    const model = await loadOrtModel(CPU, new NodeDirSource(`${dir}/smolvlm-tiny-hd8`), { kvCacheTokens: 2048, maxTokensPerStep: 64 });
    try {
      const prompts = [5, 17, 40, 3, 64].map((n, i) => Uint32Array.from({ length: n }, (_, j) => (i * 7919 + j * 104729) % 49000));
      const solo = async (p: Uint32Array, seqId: number) => {
        const out: number[] = [];
        for await (const t of generate(model.runner, seqId, {
          promptIds: p,
          placeholders: [],
          maxNewTokens: 12,
          stopIds: new Set(),
          chunkSize: 16,
        }))
          out.push(t);
        return out;
      };
      const alone: number[][] = [];
      for (const [i, p] of prompts.entries()) alone.push(await solo(p, 100 + i));
      // One runner.run per step over every live sequence, as the scheduler drives it: sequence i joins at
      // step 2i, prefills in chunks of 16 while the earlier ones decode (batched, their pasts padded to the
      // longest), then decodes 12 tokens.
      const greedy = { temperature: 0, topK: 0, topP: 1, seed: 0, step: 0 };
      const kv = model.runner.kv;
      const live = prompts.map((p, i) => ({ seqId: 300 + i, ids: Array.from(p), done: 0, out: [] as number[], joins: 2 * i }));
      let mostDecoding = 0;
      for (let step = 0; live.some((s) => s.out.length < 12); step++) {
        const batch = live.filter((s) => s.joins <= step && s.out.length < 12);
        const seqs = batch.map((s) => {
          const n = s.done < prompts[s.seqId - 300]!.length ? Math.min(16, prompts[s.seqId - 300]!.length - s.done) : 1;
          const start = s.done;
          expect(kv.allocate(s.seqId, start + n)).toBe(true);
          const last = start + n === s.ids.length;
          return { seqId: s.seqId, tokenIds: Uint32Array.from(s.ids.slice(start, start + n)), start, ...(last ? { sample: greedy } : {}) };
        });
        mostDecoding = Math.max(mostDecoding, seqs.filter((q) => q.tokenIds.length === 1).length);
        const r = await model.runner.run(seqs);
        let k = 0;
        seqs.forEach((q, j) => {
          const s = batch[j]!;
          s.done += q.tokenIds.length;
          if (q.sample) {
            const t = r.tokens[k++]!;
            s.out.push(t);
            s.ids.push(t);
          }
        });
        expect(model.runner.lastStep.numTokens).toBe(seqs.reduce((a, q) => a + q.tokenIds.length, 0));
      }
      for (const s of live) kv.free(s.seqId);
      const together = live.map((s) => s.out);
      expect(mostDecoding).toBeGreaterThanOrEqual(3);
      expect(together).toEqual(alone);
    } finally {
      model.destroy();
    }
  });
});
