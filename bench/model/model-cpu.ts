// The `cpu` column of `npm run bench:model` in Node: our engine on the CPU backend (createEngine({ device:
// 'cpu' }): onnxruntime-node over the bench checkpoint's ONNX export, the encoder in-process; measured as
// model-cpu-ours.ts says) against onnxruntime-node driven directly on the same three files, the way a
// hand-written loop would: vision encoder, embed_tokens, the decoder on the whole prompt, then one token at
// a time with present -> past (bench/harness/ort-greedy.ts, the loop the export checks use). Both are loaded
// together and alternate request by request; the figures are medians. Both use onnxruntime's default
// threads (every core). Our overhead is what the engine adds around the same graphs: preprocessing, the
// scheduler, the step layout, sampling, streaming. Raw onnxruntime's TTFT is vision + embed + prefill +
// first token.
// Goals: tile and decode >= 0.9x raw onnxruntime; 16 at once >= 2x one at a time.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { createEngine } from '../../src/engine/create-node';
import type { Engine } from '../../src/engine/engine';
import { greedyDecode } from '../harness/ort-greedy';
import { describeSide, medianSide, oursConcurrent, oursRequest } from './model-cpu-ours';
import { BENCH_IMAGE, type BenchInput } from './model-request';
import type { CpuFigures, CpuSide } from './model-result';

export interface CpuRunOptions {
  modelDir: string;
  repoRoot: string;
  maxNewTokens: number;
  /** Measured requests on each side after the first (dropped); the figures are their medians. */
  reps: number;
  log: (line: string) => void;
}

/** onnxruntime-node on the export's three files, one greedy request at a time. */
interface RawOrt {
  loadMs: number;
  request(): Promise<CpuSide>;
  release(): Promise<void>;
}

async function loadRawOrt(o: CpuRunOptions): Promise<RawOrt> {
  const dir = join(o.modelDir, 'onnx');
  const input = JSON.parse(readFileSync(join(o.modelDir, 'bench-input/input.json'), 'utf8')) as BenchInput;
  const pxBytes = readFileSync(join(o.modelDir, 'bench-input/pixel_values.f32'));
  const pixels = new Float32Array(pxBytes.buffer.slice(pxBytes.byteOffset, pxBytes.byteOffset + pxBytes.byteLength));
  const config = JSON.parse(readFileSync(join(o.modelDir, 'config.json'), 'utf8'));
  const t = config.text_config;
  const hidden: number = t.hidden_size;
  const imageToken: number = config.image_token_id;
  const t0 = performance.now();
  const options = { executionProviders: ['cpu'], graphOptimizationLevel: 'all' as const };
  const vision = await ort.InferenceSession.create(join(dir, 'vision_encoder.onnx'), options);
  const embed = await ort.InferenceSession.create(join(dir, 'embed_tokens.onnx'), options);
  const decoder = await ort.InferenceSession.create(join(dir, 'decoder_model_merged.onnx'), options);
  const loadMs = performance.now() - t0;
  o.log(`cpu raw onnxruntime-node: sessions created in ${(loadMs / 1000).toFixed(1)} s`);
  const [, , H, W] = input.pixelShape as [number, number, number, number];
  const request = async (): Promise<CpuSide> => {
    const start = performance.now();
    const v = await vision.run({
      pixel_values: new ort.Tensor('float32', pixels, [1, input.numTiles, 3, H, W]),
      pixel_attention_mask: new ort.Tensor('bool', new Uint8Array(input.numTiles * H * W).fill(1), [1, input.numTiles, H, W]),
    });
    const tileMs = (performance.now() - start) / input.numTiles;
    const feats = v.image_features!.data as Float32Array;
    const ids = input.inputIds;
    const e = await embed.run({ input_ids: new ort.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, ids.length]) });
    const x = e.inputs_embeds!.data as Float32Array;
    let k = 0;
    for (let i = 0; i < ids.length; i++) if (ids[i] === imageToken) x.set(feats.subarray(k * hidden, (k++ + 1) * hidden), i * hidden);
    const { tokens, firstTokenAt, endAt } = await greedyDecode({
      Tensor: ort.Tensor,
      embed,
      decoder,
      prompt: x,
      hidden,
      layers: t.num_hidden_layers,
      kvHeads: t.num_key_value_heads,
      headDim: t.head_dim ?? t.hidden_size / t.num_attention_heads,
      maxNewTokens: o.maxNewTokens,
    });
    return {
      tileMs,
      ttftMs: firstTokenAt - start,
      decodeTokensPerSecond: ((tokens.length - 1) * 1000) / (endAt - firstTokenAt),
      tokenIds: tokens,
    };
  };
  return { loadMs, request, release: async () => void (await Promise.all([vision.release(), embed.release(), decoder.release()])) };
}

export async function runCpu(o: CpuRunOptions): Promise<CpuFigures> {
  const t0 = performance.now();
  const engine: Engine = await createEngine({ model: o.modelDir, device: 'cpu', encoder: { mode: 'in-process' }, kvCacheTokens: 16384 });
  const oursLoadMs = performance.now() - t0;
  o.log(`cpu ours: loaded in ${(oursLoadMs / 1000).toFixed(1)} s (${engine.stats().device.reason})`);
  const raw = await loadRawOrt(o);
  try {
    const png = new Uint8Array(readFileSync(join(o.repoRoot, BENCH_IMAGE)));
    // Ours and raw one after the other, request by request, so that a slower minute of the machine falls
    // on both sides alike; the first of each warms onnxruntime's first-run planning and is dropped.
    const oursRuns: CpuSide[] = [];
    const rawRuns: CpuSide[] = [];
    for (let i = 0; i <= o.reps; i++) {
      const ours = await oursRequest(engine, png, i, o.maxNewTokens);
      const theirs = await raw.request();
      const tag = i === 0 ? 'cold' : `warm ${i}`;
      o.log(`${describeSide(`cpu ours ${tag}`, ours)}; ${describeSide('raw', theirs)}`);
      if (i === 0) continue;
      oursRuns.push(ours);
      rawRuns.push(theirs);
    }
    const oursSide = medianSide(oursRuns);
    const rawSide = medianSide(rawRuns);
    const concurrent = await oursConcurrent(engine, {
      png,
      maxNewTokens: o.maxNewTokens,
      oneDecode: oursSide.decodeTokensPerSecond,
      label: 'cpu ours',
      log: o.log,
    });
    const ratios = {
      tile: rawSide.tileMs / oursSide.tileMs,
      ttft: rawSide.ttftMs / oursSide.ttftMs,
      decode: oursSide.decodeTokensPerSecond / rawSide.decodeTokensPerSecond,
    };
    return {
      threads: "onnxruntime's default (every core), both",
      reps: o.reps,
      ours: { ...oursSide, loadMs: oursLoadMs, concurrent },
      raw: { ...rawSide, loadMs: raw.loadMs },
      ratios,
      tokensEqual: JSON.stringify(oursSide.tokenIds) === JSON.stringify(rawSide.tokenIds),
      goals: { tileAtLeast09: ratios.tile >= 0.9, decodeAtLeast09: ratios.decode >= 0.9, concurrentAtLeast2x: concurrent.overOne >= 2 },
    };
  } finally {
    engine.destroy();
    await raw.release();
  }
}
