import * as ort from 'onnxruntime-node';
import { beforeAll, describe, expect, it } from 'vitest';
import { NodeDirSource } from '../../src/io/model-source-node';
import { generate } from '../../src/model/generate';
import { logitsAgreement } from '../helpers/batch-agreement';
import type { OrtRuntime } from '../../src/model/ort/ort-api';
import { readModelConfig } from '../../src/families/read-config';
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
      const config = await readModelConfig(source);
      model = await loadOrtModel(CPU, source, config, { kvCacheTokens: 2048, maxTokensPerStep: 128 });
      vision = await loadOrtVisionEncoder(CPU, source, config);
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
  it('decoding together (batched, padded past) and prefilling beside them gives each what it gives alone, as the CPU backend promises', async () => {
    const source = new NodeDirSource(`${dir}/smolvlm-tiny-hd8`);
    const model = await loadOrtModel(CPU, source, await readModelConfig(source), { kvCacheTokens: 2048, maxTokensPerStep: 64 });
    try {
      const prompts = [5, 17, 40, 3, 64].map((n, i) => Uint32Array.from({ length: n }, (_, j) => (i * 7919 + j * 104729) % 49000));
      const greedy = { temperature: 0, topK: 0, topP: 1, seed: 0, step: 0 };
      const kv = model.runner.kv;
      const vocab = model.runner.text.vocabSize;
      /** One sequence's next step: a prefill chunk of at most 16 tokens, then one token at a time. */
      const nextStep = (s: Live) => {
        const promptLength = prompts[s.index]!.length;
        const n = s.done < promptLength ? Math.min(16, promptLength - s.done) : 1;
        const start = s.done;
        expect(kv.allocate(s.seqId, start + n)).toBe(true);
        const last = start + n === s.ids.length;
        return { seqId: s.seqId, tokenIds: Uint32Array.from(s.ids.slice(start, start + n)), start, ...(last ? { sample: greedy } : {}) };
      };
      /** Runs one step over `batch`; each sampling sequence keeps its token and its logits. */
      const step = async (batch: Live[]) => {
        const seqs = batch.map(nextStep);
        const r = await model.runner.run(seqs, { readLogits: true });
        let k = 0;
        seqs.forEach((q, j) => {
          const s = batch[j]!;
          s.done += q.tokenIds.length;
          if (q.sample) {
            s.logits.push(r.logits!.slice(k * vocab, (k + 1) * vocab));
            const t = r.tokens[k++]!;
            s.out.push(t);
            s.ids.push(t);
          }
        });
        return seqs;
      };
      const alone: Live[] = [];
      for (const [i, p] of prompts.entries()) {
        const s = live(i, 100 + i, p, 0);
        while (s.out.length < 12) await step([s]);
        kv.free(s.seqId);
        alone.push(s);
      }
      // One runner.run per step over every live sequence, as the scheduler drives it: sequence i joins at
      // step 2i, prefills in chunks of 16 while the earlier ones decode (batched, their pasts padded to the
      // longest), then decodes 12 tokens.
      const together = prompts.map((p, i) => live(i, 300 + i, p, 2 * i));
      let mostDecoding = 0;
      for (let n = 0; together.some((s) => s.out.length < 12); n++) {
        const seqs = await step(together.filter((s) => s.joins <= n && s.out.length < 12));
        mostDecoding = Math.max(mostDecoding, seqs.filter((q) => q.tokenIds.length === 1).length);
        expect(model.runner.lastStep.numTokens).toBe(seqs.reduce((a, q) => a + q.tokenIds.length, 0));
      }
      for (const s of together) kv.free(s.seqId);
      expect(mostDecoding).toBeGreaterThanOrEqual(3);
      const problems = together.flatMap((s, i) => logitsAgreement(alone[i]!, s).problems.map((p) => `sequence ${i}: ${p}`));
      expect(problems).toEqual([]);
    } finally {
      model.destroy();
    }
  });
});

interface Live {
  index: number;
  seqId: number;
  ids: number[];
  done: number;
  out: number[];
  logits: Float32Array[];
  joins: number;
}

function live(index: number, seqId: number, prompt: Uint32Array, joins: number): Live {
  return { index, seqId, ids: Array.from(prompt), done: 0, out: [], logits: [], joins };
}
