// Checks the Voxtral ONNX export (bench/onnx-export/voxtral/) numerically: runs the three graphs with
// onnxruntime-web's CPU (wasm) backend in Node on one chunk (<model>/onnx/verify/audio_values.f32, the log-mel
// of test/reference/log_mel.py's 30 s clip) the way transformers.js chains them (audio_encoder ->
// embed_tokens -> rows scattered at the [AUDIO] ids -> decoder_model_merged with a growing KV cache,
// num_logits_to_keep 1, greedy) and compares with test/reference/voxtral.py in float64 (onnx/verify/, written by
// voxtral_export.py). Writes <model>/onnx/ort-check.json and returns it. CPU on purpose, as
// bench/model/onnx-check.ts: "is the graph right" apart from the WebGPU EP's numerics.
//
//   nice -n 19 npx tsx bench/audio/onnx-check.ts      (checks .cache/bench-models/voxtral-small-random)

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-web';
import { greedyDecode } from '../harness/ort-greedy';

export interface AudioOrtCheck {
  runtime: string;
  audioFeaturesMaxAbsDiff: number;
  /** Largest |reference feature|, for scale. */
  audioFeaturesMaxAbs: number;
  encodeMs: number;
  logits0MaxAbsDiff: number;
  /** Largest |reference logit| at step 0, for scale. */
  logits0MaxAbs: number;
  tokens: number[];
  referenceTokens: number[];
  tokensEqual: boolean;
  seconds: number;
}

export class AudioOnnxCheckError extends Error {
  override readonly name = 'AudioOnnxCheckError';
}

interface VerifyReference {
  audioValuesShape: [number, number];
  audioFeaturesShape: [number, number];
  inputIds: number[];
  tokens: number[];
}

function readF32(path: string): Float32Array {
  const b = readFileSync(path);
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

function maxAbsDiff(a: Float32Array, b: Float32Array, what: string): number {
  if (a.length !== b.length) throw new AudioOnnxCheckError(`${what}: ${a.length} values but the reference has ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

const maxAbs = (x: Float32Array) => x.reduce((a, v) => Math.max(a, Math.abs(v)), 0);

const STOP_IDS = new Set([2]); // </s>

export async function checkAudioOnnxExport(modelDir: string, log: (line: string) => void): Promise<AudioOrtCheck> {
  const t0 = performance.now();
  const onnxDir = join(modelDir, 'onnx');
  const ref = JSON.parse(readFileSync(join(onnxDir, 'verify/reference.json'), 'utf8')) as VerifyReference;
  const config = JSON.parse(readFileSync(join(modelDir, 'config.json'), 'utf8'));
  const text = config.text_config;
  const numKv = text.num_key_value_heads as number;
  const headDim = (text.head_dim ?? text.hidden_size / text.num_attention_heads) as number;
  const hidden = text.hidden_size as number;
  ort.env.wasm.numThreads = 1;
  const options: ort.InferenceSession.SessionOptions = { executionProviders: ['wasm'], graphOptimizationLevel: 'all' };
  const open = (name: string) => ort.InferenceSession.create(readFileSync(join(onnxDir, name)), options);

  // 1. Audio encoder (+ projector) on one chunk: [1, mel, 3000] -> [375, hidden].
  const [numMel, numFrames] = ref.audioValuesShape;
  let session = await open('audio_encoder.onnx');
  const tEnc = performance.now();
  const enc = await session.run({
    audio_values: new ort.Tensor('float32', readF32(join(onnxDir, 'verify/audio_values.f32')), [1, numMel, numFrames]),
  });
  const encodeMs = performance.now() - tEnc;
  await session.release();
  const features = enc.audio_features.data as Float32Array;
  const refFeatures = readF32(join(onnxDir, 'verify/audio_features.f32'));
  const audioFeaturesMaxAbsDiff = maxAbsDiff(features, refFeatures, 'audio_features');
  log(
    `onnx check: audio_encoder audio_features ${JSON.stringify(enc.audio_features.dims)} in ${(encodeMs / 1000).toFixed(1)} s, ` +
      `max|diff| vs reference ${audioFeaturesMaxAbsDiff.toExponential(2)} (max|ref| ${maxAbs(refFeatures).toFixed(3)})`,
  );

  // 2. Token embeddings with the audio rows scattered at the [AUDIO] ids, in order (transformers.js
  //    default_merge_input_ids_with_audio_features).
  const embed = await open('embed_tokens.onnx');
  const embedIds = async (ids: number[]) => {
    const r = await embed.run({ input_ids: new ort.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, ids.length]) });
    return r.inputs_embeds.data as Float32Array;
  };
  const prompt = await embedIds(ref.inputIds);
  let row = 0;
  ref.inputIds.forEach((id, i) => {
    if (id === config.audio_token_id) prompt.set(features.subarray(row * hidden, ++row * hidden), i * hidden);
  });
  if (row * hidden !== features.length) {
    throw new AudioOnnxCheckError(`the prompt has ${row} [AUDIO] ids but the encoder returned ${features.length / hidden} rows`);
  }

  // 3. Greedy decoding through the merged decoder, past starting empty.
  session = await open('decoder_model_merged.onnx');
  const refLogits = readF32(join(onnxDir, 'verify/logits0.f32'));
  let logits0MaxAbsDiff = NaN;
  const { tokens } = await greedyDecode({
    Tensor: ort.Tensor,
    embed,
    decoder: session,
    prompt,
    hidden,
    layers: text.num_hidden_layers as number,
    kvHeads: numKv,
    headDim,
    maxNewTokens: ref.tokens.length,
    stopIds: STOP_IDS,
    onLogits: (step, logits) => {
      if (step === 0) logits0MaxAbsDiff = maxAbsDiff(logits, refLogits, 'logits');
    },
  });
  await session.release();
  await embed.release();
  const result: AudioOrtCheck = {
    runtime: `onnxruntime-web ${ort.env.versions.web} wasm backend (CPU) in Node, 1 thread`,
    audioFeaturesMaxAbsDiff,
    audioFeaturesMaxAbs: maxAbs(refFeatures),
    encodeMs,
    logits0MaxAbsDiff,
    logits0MaxAbs: maxAbs(refLogits),
    tokens,
    referenceTokens: ref.tokens,
    tokensEqual: JSON.stringify(tokens) === JSON.stringify(ref.tokens),
    seconds: (performance.now() - t0) / 1000,
  };
  log(
    `onnx check: step-0 logits max|diff| vs reference ${logits0MaxAbsDiff.toExponential(2)} (max|logit| ${result.logits0MaxAbs.toFixed(2)}); ` +
      `greedy tokens ${result.tokensEqual ? 'EQUAL to' : 'DIFFER from'} the reference (${result.seconds.toFixed(0)} s)`,
  );
  writeFileSync(join(onnxDir, 'ort-check.json'), `${JSON.stringify(result, null, 2)}\n`);
  return result;
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const { AUDIO_BENCH_MODEL_DIR } = await import('./audio-model');
  checkAudioOnnxExport(AUDIO_BENCH_MODEL_DIR, console.log).catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
}
