// engine.profile() on the tiny checkpoint in Node: every kernel kind that ran is in the report with as many
// dispatches as the plans hold, shares add up, times are measured and the timing method is named; timing a
// step dispatch by dispatch gives bit-identical results, and requests answer the same after a profile.
// Then each tiny Qwen-VL checkpoint: the whole image's pass (the grid a request gets), a prefill chunk with
// M-RoPE positions, a decode step, and the reference tokens after it.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine';
import type { ProfilePhase, ProfileReport } from '../../src/engine/types';
import { EngineBusyError } from '../../src/errors';
import { DispatchTimer } from '../../src/kernels/dispatch-timer';
import { chooseVitAttentionPlan, headsPerScoreBlock } from '../../src/kernels/vit-attention';
import { NodeDirSource } from '../../src/io/model-source-node';
import type { ModelConfig } from '../../src/model/config';
import { loadModel } from '../../src/families/load';
import type { LoadedModel } from '../../src/model/load';
import { processImage } from '../../src/processor/image-processor';
import { decodeImageNode } from '../../src/processor/node';
import { loadProcessorConfig } from '../../src/processor/processor-config';
import { testEngine } from '../helpers/engine';
import { goldenManifest, qwenPipelineGoldens } from '../helpers/goldens';
import { qwenTurn } from '../helpers/qwen-turn';
import { ensureTinyModels } from '../helpers/tiny-models';
import { useGpu } from './gpu';

const gpu = useGpu();
const SAMPLE = readFileSync(resolve(import.meta.dirname, '../../public/sample.png'));
const ask = (max_tokens: number) => ({
  messages: [
    {
      role: 'user' as const,
      content: [
        { type: 'image' as const, image: SAMPLE },
        { type: 'text' as const, text: 'Can you describe this image?' },
      ],
    },
  ],
  max_tokens,
});
let engine: Engine;
let report: ProfileReport;

beforeAll(async () => {
  const dir = ensureTinyModels();
  engine = await testEngine(gpu(), `${dir}/smolvlm-tiny`, { kvCacheTokens: 2048, maxTokensPerStep: 128 });
  report = await engine.profile({ image: SAMPLE });
});
afterAll(() => engine?.destroy());

const phase = (name: ProfilePhase['name']) => report.phases.find((p) => p.name === name)!;

/**
 * Dispatches of one layer's ViT attention over `batch` images (src/kernels/vit-attention.ts): one for the
 * streaming kernel; for attention run as matmuls, per image a key mask, then per block of heads a V
 * transpose, the head-major Q and K copy, QKᵀ, the softmax and P·V.
 */
function attentionDispatches(config: ModelConfig, batch: number): number {
  if (chooseVitAttentionPlan(gpu()) === 'stream') return 1;
  const v = config.vision!;
  const block = headsPerScoreBlock(gpu(), { batch, tokens: v.patchesPerSide ** 2, heads: v.numHeads, headDim: v.headDim });
  return batch * (1 + 5 * Math.ceil(v.numHeads / block));
}

/** Dispatches of the vision plan for `batch` images: per layer 2 norms, 4 matmuls and the attention; plus 7. */
function visionDispatches(config: ModelConfig, batch: number): number {
  return config.vision!.numLayers * (6 + attentionDispatches(config, batch)) + 7;
}

/** Dispatches per kind, matmuls of any plan counted as 'matmul'. */
function counts(p: ProfilePhase): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of p.rows) {
    const kind = r.kind.startsWith('matmul:') ? 'matmul' : r.kind;
    out[kind] = (out[kind] ?? 0) + r.dispatches;
  }
  return out;
}

describe('engine.profile', () => {
  it('names the timing method, the device and the phases', () => {
    expect(report.timing).toBe(gpu().hasFeature('timestamp-query') ? 'timestamp-query' : 'submit-and-wait');
    expect(report.adapter.length).toBeGreaterThan(0);
    expect(report.kernelVariant).toBe(gpu().kernelVariant);
    expect(report.dtype).toBe('f32');
    expect(report.phases.map((p) => p.name)).toEqual(['vision-tile', 'prefill-chunk', 'decode-step']);
  });

  it('counts every dispatch of the vision plan, by kind (layers L: 6 dispatches each and the attention, plus 7)', () => {
    const config = engine.model.config;
    const L = config.vision!.numLayers;
    expect(counts(phase('vision-tile'))).toEqual({
      'patch-embed': 1, // im2col; its matmul is counted with the matmuls
      matmul: 1 + 4 * L + 1, // patch embedding, qkv / o / fc1 / fc2 per layer (residual adds in their epilogues), connector
      'embedding-gather': 1,
      'residual-add': 1, // the position embeddings
      'layer-norm': 2 * L + 1,
      'vit-attention': L * attentionDispatches(config, 1),
      'pixel-shuffle': 1,
    });
    expect(phase('vision-tile').dispatches).toBe(visionDispatches(config, 1));
  });

  it('counts every dispatch of the prefill chunk and the decode step, by kind', () => {
    const L = engine.model.config.text.numLayers;
    // The residual adds are the o_proj and down_proj matmuls' epilogues; paged attention's split plan is
    // two dispatches (the runs of keys, then their combination).
    const layer = { 'rms-norm': 2 * L, matmul: 4 * L, rope: L, 'kv-write': L, 'paged-attention': 2 * L, swiglu: L };
    // 252 prompt tokens, 128 per step: the first chunk splices image rows and does not sample.
    expect(counts(phase('prefill-chunk'))).toEqual({ ...layer, 'embedding-gather': 1, splice: 1 });
    // Decode: no splice; the head gathers the row, norms it, projects to the vocabulary and takes the argmax.
    expect(counts(phase('decode-step'))).toEqual({ ...layer, 'rms-norm': 2 * L + 1, matmul: 4 * L + 1, 'embedding-gather': 2, argmax: 1 });
    // The step the engine reports last is the profile's decode step: the same number of dispatches.
    expect(phase('decode-step').dispatches).toBe(engine.stats().decodeStep.numDispatches);
    expect(phase('prefill-chunk').description).toMatch(
      /^128 of the prompt's 252 tokens \(128 rows after padding to the step bucket\), \d+ image rows spliced$/,
    );
  });

  it('measures time, shares that sum to 100% and a throughput for every costed kind', () => {
    for (const p of report.phases) {
      expect(p.totalMs, p.name).toBeGreaterThan(0);
      expect(p.rows.reduce((a, r) => a + r.ms, 0)).toBeCloseTo(p.totalMs, 9);
      expect(p.rows.reduce((a, r) => a + r.share, 0)).toBeCloseTo(1, 9);
      expect(p.rows.reduce((a, r) => a + r.dispatches, 0)).toBe(p.dispatches);
      expect([...p.rows].sort((a, b) => b.ms - a.ms)).toEqual(p.rows);
      for (const r of p.rows) {
        expect(r.ms, `${p.name} ${r.kind}`).toBeGreaterThanOrEqual(0);
        if (r.ms === 0) continue; // shorter than the timestamp step
        if (r.kind.startsWith('matmul:') || r.kind.endsWith('attention')) expect(r.gflops, `${p.name} ${r.kind}`).toBeGreaterThan(0);
        expect(r.gbps, `${p.name} ${r.kind}`).toBeGreaterThan(0);
      }
    }
    // The big kinds take measurable time in any timing method.
    expect(phase('vision-tile').rows.find((r) => r.kind.startsWith('matmul:'))!.ms).toBeGreaterThan(0);
    expect(phase('decode-step').rows.find((r) => r.kind.startsWith('matmul:'))!.ms).toBeGreaterThan(0);
  });

  it('leaves the KV cache as it was, and requests answer as before', async () => {
    const s = engine.stats();
    expect(s.kv.numFreeBlocks).toBe(s.kv.numBlocks);
    const want = goldenManifest().greedy['smolvlm-tiny'].tokens.slice(0, 4);
    expect((await engine.chat.completions.create(ask(4))).tessera.tokenIds).toEqual(want);
    await engine.profile({ image: SAMPLE, prompt: 'What is this?' });
    expect((await engine.chat.completions.create(ask(4))).tessera.tokenIds).toEqual(want);
  });

  it('times dispatches one by one when asked to, and says so', async () => {
    const r = await engine.profile({ image: SAMPLE, timing: 'submit-and-wait' });
    expect(r.timing).toBe('submit-and-wait');
    expect(r.timestampQuantumNs).toBeUndefined();
    for (const p of r.phases) expect(p.rows.every((row) => row.ms > 0)).toBe(true);
    expect(r.phases.map((p) => p.dispatches)).toEqual(report.phases.map((p) => p.dispatches));
  });

  it('refuses to run beside a request, and a request that arrives meanwhile waits for it', async () => {
    const pending = engine.chat.completions.create(ask(8));
    for (let i = 0; i < 200 && engine.stats().scheduler.numRunning + engine.stats().scheduler.numWaiting === 0; i++)
      await new Promise((r) => setTimeout(r, 10));
    await expect(engine.profile({ image: SAMPLE })).rejects.toBeInstanceOf(EngineBusyError);
    await pending;
    const profiling = engine.profile({ prompt: 'Hello' });
    const answer = engine.chat.completions.create(ask(2));
    const text = await profiling;
    expect(text.phases.map((p) => p.name)).toEqual(['prefill-chunk', 'decode-step']);
    expect((await answer).tessera.tokenIds).toEqual(goldenManifest().greedy['smolvlm-tiny'].tokens.slice(0, 2));
  });
});

describe('timed steps', () => {
  let model: LoadedModel;
  beforeAll(async () => {
    model = await loadModel(gpu(), new NodeDirSource(`${ensureTinyModels()}/smolvlm-tiny`), {
      kvCacheTokens: 256,
      maxTokensPerStep: 32,
      visionBatch: 2,
    });
  });
  afterAll(() => model?.destroy());

  it('give bit-identical vision embeddings and logits to untimed ones', async () => {
    const g = gpu();
    const vision = model.vision!;
    const source = new NodeDirSource(`${ensureTinyModels()}/smolvlm-tiny`);
    const config = await loadProcessorConfig(source);
    const image = processImage(await decodeImageNode(new Uint8Array(SAMPLE)), config.image, config.imageSeqLen);
    const input = { pixels: image.pixelValues.subarray(0, (image.pixelValues.length / image.layout.numTiles) * 3), numTiles: 3 };
    const read = async (timer?: DispatchTimer) => {
      const out = await vision.encode(input, { timer });
      try {
        return (await g.readF32(out.embeddings)).slice();
      } finally {
        g.release(out.embeddings);
      }
    };
    const timer = new DispatchTimer(g);
    expect(await read(timer)).toEqual(await read());
    expect(timer.timings.length).toBe(2 * visionDispatches(model.config, 2)); // two batches (3 tiles, 2 per batch)

    const { runner } = model;
    const T = 20;
    await runner.withScratchSequence(T, async (seqId) => {
      const step = [
        {
          seqId,
          tokenIds: Uint32Array.from({ length: T }, (_, i) => (i * 37) % 1000),
          start: 0,
          sample: { temperature: 0.8, topK: 5, topP: 0.9, seed: 3, step: 0 },
        },
      ];
      const plain = await runner.run(step, { readLogits: true });
      const timed = await runner.run(step, { readLogits: true, timer });
      expect(timed.tokens).toEqual(plain.tokens);
      expect(timed.logits).toEqual(plain.logits);
      expect(timer.timings.some((t) => t.label === 'sample')).toBe(true);
    });
  });
});

describe.each(qwenPipelineGoldens().golden.models.map((m) => [m.checkpoint, m] as const))('engine.profile on %s', (name, want) => {
  let qwen: Engine;
  let r: ProfileReport;
  const IMAGE = readFileSync(resolve(import.meta.dirname, '../../public/sample.png'));
  const askImage = (max_tokens: number) => ({ ...ask(max_tokens), messages: [qwenTurn('sample')] });
  beforeAll(async () => {
    qwen = await testEngine(gpu(), `${ensureTinyModels()}/${name}`, { kvCacheTokens: 1024, maxTokensPerStep: 128 });
    r = await qwen.profile({ image: IMAGE });
  });
  afterAll(() => qwen?.destroy());
  const of = (n: ProfilePhase['name']) => r.phases.find((p) => p.name === n)!;

  it("times the whole image's pass (its grid, DeepStack levels included), a prefill chunk with M-RoPE positions and a decode step", async () => {
    expect(r.phases.map((p) => p.name)).toEqual(['vision-image', 'prefill-chunk', 'decode-step']);
    // The step the engine reports last is the profile's decode step: the same number of dispatches.
    expect(of('decode-step').dispatches).toBe(qwen.stats().decodeStep.numDispatches);
    // The grid the profile names is the one a request about the same image gets.
    const asked = await qwen.chat.completions.create({
      ...ask(1),
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', image: IMAGE },
            { type: 'text', text: 'Can you describe this image?' },
          ],
        },
      ],
    });
    const { t, h, w } = asked.tessera.media[0].grid!;
    expect(of('vision-image').description).toContain(`grid ${t} x ${h} x ${w}`);
    expect(of('vision-image').description).toContain(`${(t * h * w) / 4} embeddings`);
    // Matmuls: the patch embedding, 4 per layer, 2 in each DeepStack merger and 2 in the final one.
    const v = qwen.model.config.qwenVision!;
    const taps = v.kind === 'qwen3_vl' ? v.deepstackTaps.length : 0;
    expect(counts(of('vision-image')).matmul).toBe(1 + 4 * v.numLayers + 2 * taps + 2);
    expect(of('prefill-chunk').description).toMatch(/image rows spliced, M-RoPE positions/);
    // The image's rows, and each DeepStack level's at its decoder layer.
    expect(counts(of('prefill-chunk')).splice).toBe(1 + taps);
    for (const p of r.phases) expect(p.totalMs, p.name).toBeGreaterThan(0);
  });

  it('leaves the KV cache as it was, and a request answers the reference tokens', async () => {
    const s = qwen.stats();
    expect(s.kv.numFreeBlocks).toBe(s.kv.numBlocks);
    const ref = want.cases.find((c) => c.id === 'sample')!.tokens;
    expect((await qwen.chat.completions.create(askImage(ref.length))).tessera.tokenIds).toEqual(ref);
  });
});
