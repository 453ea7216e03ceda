// Checks the ONNX export (bench/onnx-export/) numerically: runs the three graphs with onnxruntime-web's
// CPU (wasm) backend in Node on the bench request (<model>/bench-input/) the way transformers.js chains
// them (vision_encoder -> embed_tokens -> splice at <image> ids -> decoder_model_merged with a growing KV
// cache, num_logits_to_keep 1, greedy) and compares with the project's PyTorch reference in float64
// (<model>/onnx/verify/, written by export.py). Writes <model>/onnx/ort-check.json and returns it.
// CPU, not WebGPU, on purpose: this isolates "is the graph right" from the WebGPU EP's numerics, which the
// browser run then shows separately (peer tokens and step-0 logits vs the same reference).

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-web';
import { greedyDecode } from '../harness/ort-greedy';
import type { BenchInput } from './model-request';

export interface OrtCheck {
  runtime: string;
  imageFeaturesMaxAbsDiff: number;
  logits0MaxAbsDiff: number;
  /** Largest |reference logit| at step 0, for scale. */
  logits0MaxAbs: number;
  tokens: number[];
  referenceTokens: number[];
  tokensEqual: boolean;
  seconds: number;
}

export class OnnxCheckError extends Error {
  override readonly name = 'OnnxCheckError';
}

function readF32(path: string): Float32Array {
  const b = readFileSync(path);
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) throw new OnnxCheckError(`length mismatch: ${a.length} vs ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

const STOP_IDS = new Set([49279, 2]);

export async function checkOnnxExport(modelDir: string, log: (line: string) => void): Promise<OrtCheck> {
  const t0 = performance.now();
  const onnxDir = join(modelDir, 'onnx');
  const input = JSON.parse(readFileSync(join(modelDir, 'bench-input/input.json'), 'utf8')) as BenchInput;
  const reference = JSON.parse(readFileSync(join(onnxDir, 'verify/reference.json'), 'utf8')) as { tokens: number[] };
  const config = JSON.parse(readFileSync(join(modelDir, 'config.json'), 'utf8'));
  const text = config.text_config;
  const numKv = text.num_key_value_heads as number;
  const headDim = (text.head_dim ?? text.hidden_size / text.num_attention_heads) as number;
  const hidden = text.hidden_size as number;
  ort.env.wasm.numThreads = 1;
  const options: ort.InferenceSession.SessionOptions = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };
  const open = (name: string) => ort.InferenceSession.create(readFileSync(join(onnxDir, name)), options);

  // 1. Vision encoder on the bench pixels (all real: mask all true).
  const [n, c, h, w] = input.pixelShape;
  const pixels = readF32(join(modelDir, 'bench-input/pixel_values.f32'));
  let session = await open('vision_encoder.onnx');
  const vis = await session.run({
    pixel_values: new ort.Tensor('float32', pixels, [1, n, c, h, w]),
    pixel_attention_mask: new ort.Tensor('bool', new Uint8Array(n * h * w).fill(1), [1, n, h, w]),
  });
  await session.release();
  const features = vis.image_features.data as Float32Array;
  const imageFeaturesMaxAbsDiff = maxAbsDiff(features, readF32(join(onnxDir, 'verify/image_features.f32')));
  log(
    `onnx check: vision_encoder image_features ${JSON.stringify(vis.image_features.dims)}, max|diff| vs reference ${imageFeaturesMaxAbsDiff.toExponential(2)}`,
  );

  // 2. Token embeddings with the image rows spliced in at the <image> ids, in order.
  const embed = await open('embed_tokens.onnx');
  const embedIds = async (ids: number[]) => {
    const r = await embed.run({ input_ids: new ort.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, ids.length]) });
    return r.inputs_embeds.data as Float32Array;
  };
  const prompt = await embedIds(input.inputIds);
  let row = 0;
  input.inputIds.forEach((id, i) => {
    if (id === config.image_token_id) prompt.set(features.subarray(row * hidden, ++row * hidden), i * hidden);
  });
  if (row * hidden !== features.length) throw new OnnxCheckError(`${row} <image> ids but ${features.length / hidden} image rows`);

  // 3. Greedy decoding through the merged decoder, past starting empty.
  session = await open('decoder_model_merged.onnx');
  const refLogits = readF32(join(onnxDir, 'verify/logits0.f32'));
  let logits0MaxAbsDiff = NaN;
  const logits0MaxAbs = refLogits.reduce((a, v) => Math.max(a, Math.abs(v)), 0);
  const { tokens } = await greedyDecode({
    Tensor: ort.Tensor,
    embed,
    decoder: session,
    prompt,
    hidden,
    layers: text.num_hidden_layers as number,
    kvHeads: numKv,
    headDim,
    maxNewTokens: reference.tokens.length,
    stopIds: STOP_IDS,
    onLogits: (step, logits) => {
      if (step === 0) logits0MaxAbsDiff = maxAbsDiff(logits, refLogits);
    },
  });
  await session.release();
  await embed.release();
  const result: OrtCheck = {
    runtime: `onnxruntime-web ${ort.env.versions.web} wasm backend (CPU) in Node, 1 thread`,
    imageFeaturesMaxAbsDiff,
    logits0MaxAbsDiff,
    logits0MaxAbs,
    tokens,
    referenceTokens: reference.tokens,
    tokensEqual: JSON.stringify(tokens) === JSON.stringify(reference.tokens),
    seconds: (performance.now() - t0) / 1000,
  };
  log(
    `onnx check: step-0 logits max|diff| vs reference ${logits0MaxAbsDiff.toExponential(2)} (max|logit| ${logits0MaxAbs.toFixed(2)}); ` +
      `greedy tokens ${result.tokensEqual ? 'EQUAL to' : 'DIFFER from'} the reference (${result.seconds.toFixed(0)} s)`,
  );
  writeFileSync(join(onnxDir, 'ort-check.json'), `${JSON.stringify(result, null, 2)}\n`);
  return result;
}
