// The Qwen-VL exports cut for a WebGPU adapter (what bench:model's transformers.js peer loads at real
// widths): initializers in external-data files of bounded size, the embedding and head in row parts, the
// vision tower's attention in groups of heads. Each graph, on onnxruntime-node, answers what the tiny
// checkpoints' whole export (make-tiny-onnx.ts, held to the float64 references by qwen-onnx-export.test)
// answers on the same inputs; and the CPU backend, loading the cut export (each graph's weights in several
// data files), answers a request with the tokens it gives on the whole one.

import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import * as ort from 'onnxruntime-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GraphBuilder } from '../../scripts/onnx/onnx-graph';
import { qwenDecoderGraph, qwenEmbedTokensGraph, rowParts } from '../../scripts/onnx/qwen-onnx';
import { qwenVisionEncoderGraph } from '../../scripts/onnx/qwen-vision-onnx';
import { writeOnnx } from '../../scripts/onnx/write-onnx';
import { checkpointReader } from '../../scripts/make-tiny-onnx';
import { createEngine } from '../../src/engine/create-node';
import { NodeDirSource } from '../../src/io/model-source-node';
import { weightFilesOf } from '../../src/storage/download-plan';
import { qwenTurn } from '../helpers/qwen-turn';
import { ensureTinyModels } from '../helpers/tiny-models';

const goldens = resolve(import.meta.dirname, '../fixtures/goldens');
const vision = JSON.parse(readFileSync(join(goldens, 'qwen-vision.json'), 'utf8')) as {
  models: Array<{
    checkpoint: string;
    cases: Array<{ grid: { t: number; h: number; w: number }; patches: { offset: number; length: number } }>;
  }>;
};
const patchRows = new Float32Array(Uint8Array.from(readFileSync(join(goldens, 'qwen-vision-patches.f32.bin'))).buffer);

/** 7 MiB: the 151936 × 64 float32 table (37.1 MiB) in 6 parts; data files of at most 16 MiB. */
const MAX_WEIGHT = 7 * 2 ** 20;
const MAX_FILE = 16 * 2 ** 20;

const maxDiff = (a: Float32Array, b: Float32Array) => {
  expect(a.length).toBe(b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst;
};

describe('GraphBuilder.encodeExternal', () => {
  it('refuses a tensor larger than a data file, naming it and both sizes', () => {
    const g = new GraphBuilder('big');
    const x = g.input('x', 'float', [1, 512]);
    g.output(g.op('MatMul', [x, g.weight('w', new Float32Array(512 * 512), [512, 512])]), 'y', 'float', [1, 512]);
    expect(() => g.encodeExternal('big.onnx', { maxFileBytes: 2 ** 19 })).toThrow(/initializer w is 1048576 bytes, over the 524288-byte/);
  });
});

describe.each(['qwen2_5_vl-tiny', 'qwen3_vl-tiny'])('%s cut for WebGPU', (name) => {
  let dir: string;
  let out: string;
  let config: Record<string, any>;
  const whole: Record<string, ort.InferenceSession> = {};
  const cut: Record<string, ort.InferenceSession> = {};
  const written: Record<string, Record<string, number>> = {};

  beforeAll(async () => {
    dir = join(ensureTinyModels(), name);
    config = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    out = mkdtempSync(join(tmpdir(), 'tessera-qwen-cut-'));
    // The checkpoint's files (config, tokenizer, processor; the safetensors too: the engine reads the
    // config beside them), with the cut graphs in onnx/.
    for (const f of readdirSync(dir)) if (statSync(join(dir, f)).isFile()) copyFileSync(join(dir, f), join(out, f));
    const { read } = checkpointReader(dir);
    const graphs: Array<[string, GraphBuilder]> = [
      ['vision_encoder', qwenVisionEncoderGraph(config, read, { headGroups: config.vision_config.num_heads })],
      ['embed_tokens', qwenEmbedTokensGraph(config, read, { maxWeightBytes: MAX_WEIGHT })],
      ['decoder_model_merged', qwenDecoderGraph(config, read, { maxWeightBytes: MAX_WEIGHT })],
    ];
    for (const [graph, g] of graphs) {
      written[graph] = writeOnnx(join(out, 'onnx'), `${graph}.onnx`, g, { external: true, maxFileBytes: MAX_FILE }).bytes;
      cut[graph] = await ort.InferenceSession.create(join(out, 'onnx', `${graph}.onnx`));
      whole[graph] = await ort.InferenceSession.create(join(dir, 'onnx', `${graph}.onnx`));
    }
  }, 60_000);
  afterAll(async () => {
    await Promise.all([...Object.values(whole), ...Object.values(cut)].map((s) => s.release()));
    if (out) rmSync(out, { recursive: true, force: true });
  });

  it('writes the weights to data files of at most 16 MiB under the names transformers.js asks for', () => {
    const files = readdirSync(join(out, 'onnx')).sort();
    expect(files).toContain('decoder_model_merged.onnx_data');
    expect(files).toContain('decoder_model_merged.onnx_data_1');
    expect(files).toContain('embed_tokens.onnx_data_1');
    for (const [graph, sizes] of Object.entries(written)) {
      for (const [file, bytes] of Object.entries(sizes)) {
        expect(statSync(join(out, 'onnx', file)).size, file).toBe(bytes);
        expect(bytes, file).toBeLessThanOrEqual(MAX_FILE);
      }
      // The graph itself holds only the small constants.
      expect(sizes[`${graph}.onnx`]).toBeLessThan(2 ** 20);
    }
  });

  it('the CPU backend loads the cut export (several data files a graph) and answers as on the whole one', async () => {
    // What a download of the checkpoint for the CPU backend fetches: every data file of each graph.
    const planned = await weightFilesOf(new NodeDirSource(out), 'cpu', 'f32');
    for (const graph of Object.keys(written))
      for (const file of Object.keys(written[graph]!)) expect(planned, file).toContain(`onnx/${file}`);
    const request = { messages: [qwenTurn('sample')], max_tokens: 6 };
    const answers: number[][] = [];
    for (const model of [dir, out]) {
      const engine = await createEngine({ model, device: 'cpu', encoder: { mode: 'in-process' }, kvCacheTokens: 1024 });
      try {
        expect(engine.stats().device.backend).toBe('cpu');
        answers.push((await engine.chat.completions.create(request)).tessera.tokenIds);
      } finally {
        engine.destroy();
      }
    }
    // The cut moves logits by float32 rounding only; the sample request's top two logits are at least
    // 0.0077 apart at every step (qwen-cpu.test), so no machine's rounding can change a token.
    expect(answers[1]).toEqual(answers[0]);
    expect(answers[0]!.length).toBe(6);
  });

  it('vision_encoder with attention head by head gives the whole graph features', async () => {
    const c = vision.models.find((m) => m.checkpoint === name)!.cases[0]!;
    const rows = c.grid.t * c.grid.h * c.grid.w;
    const feeds = {
      pixel_values: new ort.Tensor('float32', patchRows.slice(c.patches.offset, c.patches.offset + c.patches.length), [
        rows,
        c.patches.length / rows,
      ]),
      image_grid_thw: new ort.Tensor('int64', BigInt64Array.from([c.grid.t, c.grid.h, c.grid.w].map(BigInt)), [1, 3]),
    };
    const [a, b] = [await whole.vision_encoder!.run(feeds), await cut.vision_encoder!.run(feeds)];
    // Another CPU's kernels may sum a head or a part in another order: a few float32 ulps, far below 1e-4
    // (a wrong cut is off by whole units).
    expect(maxDiff(a.image_features!.data as Float32Array, b.image_features!.data as Float32Array)).toBeLessThan(1e-4);
    if (a.deepstack_features)
      expect(maxDiff(a.deepstack_features.data as Float32Array, b.deepstack_features!.data as Float32Array)).toBeLessThan(1e-4);
  });

  it('embed_tokens in row parts gives the same rows, at the parts edges too', async () => {
    const parts = rowParts(151936, 64, MAX_WEIGHT);
    expect(parts.length).toBe(6);
    const perPart = parts[0]![1];
    const ids = [0, 1, perPart - 1, perPart, perPart + 1, 2 * perPart, 151655, 151935];
    const feeds = { input_ids: new ort.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [2, 4]) };
    const [a, b] = [await whole.embed_tokens!.run(feeds), await cut.embed_tokens!.run(feeds)];
    expect(b.inputs_embeds!.dims).toEqual([2, 4, 64]);
    expect(b.inputs_embeds!.data).toEqual(a.inputs_embeds!.data);
  });

  it('decoder_model_merged with the head in parts gives the same logits and cache', async () => {
    const t = config.text_config ?? config;
    const [layers, kvHeads, d] = [t.num_hidden_layers, t.num_key_value_heads, t.hidden_size];
    const hd = t.head_dim ?? d / t.num_attention_heads;
    const S = 5;
    const feeds: Record<string, ort.Tensor> = {
      inputs_embeds: new ort.Tensor(
        'float32',
        Float32Array.from({ length: S * d }, (_, i) => Math.sin(i * 0.37)),
        [1, S, d],
      ),
      attention_mask: new ort.Tensor('int64', new BigInt64Array(S).fill(1n), [1, S]),
      position_ids: new ort.Tensor(
        'int64',
        BigInt64Array.from({ length: 3 * S }, (_, i) => BigInt((i % S) + Math.floor(i / S))),
        [3, 1, S],
      ),
      num_logits_to_keep: new ort.Tensor('int64', BigInt64Array.from([0n]), []),
    };
    for (let i = 0; i < layers; i++)
      for (const k of ['key', 'value'])
        feeds[`past_key_values.${i}.${k}`] = new ort.Tensor('float32', new Float32Array(0), [1, kvHeads, 0, hd]);
    const levels = (config.vision_config.deepstack_visual_indexes ?? []).length;
    if (levels > 0)
      feeds.deepstack_visual_embeds = new ort.Tensor(
        'float32',
        Float32Array.from({ length: levels * S * d }, (_, i) => Math.cos(i)),
        [levels, 1, S, d],
      );
    const [a, b] = [await whole.decoder_model_merged!.run(feeds), await cut.decoder_model_merged!.run(feeds)];
    expect(b.logits!.dims).toEqual([1, S, 151936]);
    expect(maxDiff(a.logits!.data as Float32Array, b.logits!.data as Float32Array)).toBeLessThan(1e-4);
    expect(b['present.0.key']!.data).toEqual(a['present.0.key']!.data);
  });

  it('deepstack: false leaves the DeepStack input out (transformers.js 4.3.1 layout)', async () => {
    const { read } = checkpointReader(dir);
    const plain = join(out, 'plain');
    writeOnnx(plain, 'decoder_model_merged.onnx', qwenDecoderGraph(config, read, { deepstack: false }), { external: true });
    const s = await ort.InferenceSession.create(join(plain, 'decoder_model_merged.onnx'));
    try {
      expect(s.inputNames.includes('deepstack_visual_embeds')).toBe(false);
      expect(s.inputNames).toEqual(whole.decoder_model_merged!.inputNames.filter((n) => n !== 'deepstack_visual_embeds'));
    } finally {
      await s.release();
    }
  });
});
