// Load a checkpoint for the CPU backend: its config, and its ONNX graphs on onnxruntime (ort-api.ts) —
// the language model (embed_tokens + decoder_model_merged) behind an OrtModelRunner, and, when asked, the
// vision encoder (what the encoder runs). Sizes come from config.json as on the GPU; the graphs must agree
// with it (the decoder's past_key_values.* inputs are checked against the layer count).

import { UnsupportedModelError } from '../../errors';
import type { ModelSource } from '../../io/model-source';
import { BlockPool } from '../../kv/block-pool';
import { KvManager } from '../../kv/kv-manager';
import type { ModelConfig } from '../config';
import type { ProgressCallback } from '../weights';
import type { WeightDtype } from '../weights/dtype';
import { createSession, type OrtRuntime } from './ort-api';
import { OrtDecoder } from './ort-decoder';
import { OrtModelRunner } from './ort-runner';
import { OrtVisionEncoder } from './ort-vision';
import { graphBytes, readOnnxGraph } from './onnx-files';

export interface LoadOrtModelOptions {
  kvCacheTokens?: number;
  blockSize?: number;
  maxTokensPerStep?: number;
  maxSeqs?: number;
  /** Which ONNX files (their dtype suffix; default f32). */
  dtype?: WeightDtype;
  /** Why the CPU backend was chosen, for OnnxFilesMissingError's message. */
  why?: string;
  /** Each graph file's bytes as they are read ('upload') or downloaded ('download'). */
  onProgress?: ProgressCallback;
}

export interface OrtLoadedModel {
  readonly backend: 'cpu' | 'wasm';
  config: ModelConfig;
  runner: OrtModelRunner;
  stats: { weightBytes: number; readonly kvCacheBytes: number; loadMs: number };
  destroy(): void;
}

function supported(config: ModelConfig, where: string): void {
  if (config.audio) {
    throw new UnsupportedModelError(
      `the CPU backend runs image-text checkpoints (Idefics3 / SmolVLM, Qwen-VL); ${where} is ${config.modelType} (audio): use WebGPU`,
    );
  }
}

export async function loadOrtModel(
  rt: OrtRuntime,
  source: ModelSource,
  config: ModelConfig,
  options: LoadOrtModelOptions = {},
): Promise<OrtLoadedModel> {
  const t0 = performance.now();
  supported(config, source.where);
  const why = options.why ?? "device 'cpu' was asked for";
  const dtype = options.dtype ?? 'f32';
  const embed = await readOnnxGraph(source, 'embed_tokens', dtype, why, options.onProgress);
  const dec = await readOnnxGraph(source, 'decoder_model_merged', dtype, why, options.onProgress);
  const weightBytes = graphBytes(embed) + graphBytes(dec);
  const [embedSession, session] = [
    await createSession(rt, embed.model, embed.externalData),
    await createSession(rt, dec.model, dec.externalData),
  ];
  const decoder = new OrtDecoder(rt.ort, embedSession, session, config.text);
  const blockSize = options.blockSize ?? 16;
  const maxBlocks = Math.ceil((options.kvCacheTokens ?? 4096) / blockSize);
  const kv = new KvManager(new BlockPool(maxBlocks, blockSize, maxBlocks));
  const runner = new OrtModelRunner(decoder, kv, { maxTokensPerStep: options.maxTokensPerStep ?? 256, maxSeqs: options.maxSeqs ?? 16 });
  return {
    backend: rt.provider,
    config,
    runner,
    stats: {
      weightBytes,
      get kvCacheBytes() {
        return runner.kvBytes;
      },
      loadMs: performance.now() - t0,
    },
    destroy: () => runner.destroy(),
  };
}

/** The vision encoder alone (what the encoder runs on the CPU backend). */
export async function loadOrtVisionEncoder(
  rt: OrtRuntime,
  source: ModelSource,
  config: ModelConfig,
  options: { dtype?: WeightDtype; maxBatch?: number; why?: string } = {},
): Promise<OrtVisionEncoder> {
  supported(config, source.where);
  const g = await readOnnxGraph(source, 'vision_encoder', options.dtype ?? 'f32', options.why ?? "device 'cpu' was asked for");
  return new OrtVisionEncoder(rt.ort, await createSession(rt, g.model, g.externalData), config, options.maxBatch ?? 4);
}
