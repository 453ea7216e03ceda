// Load a checkpoint onto the GPU: config, weights, the media encoder (the vision tower of an Idefics3 /
// SmolVLM checkpoint, the audio encoder of a Voxtral one), the language model and its paged KV cache, sized
// from the options.

import type { GpuContext } from '../gpu/context';
import { BlockPool } from '../kv/block-pool';
import { KvManager } from '../kv/kv-manager';
import type { ModelConfig } from './config';
import { KvCacheBuffers } from './kv-cache';
import { type DecodePlan, LanguageModel } from './language-model';
import { GpuModelRunner } from './runner/gpu-runner';
import type { ModelSource } from '../io/model-source';
import type { AudioEncoder } from './audio-encoder';
import { QwenVisionEncoder } from './qwen-vision-encoder';
import { VisionEncoder } from './vision-encoder';
import { loadWeights, type ModelWeights, type ProgressCallback, type TensorDigestSink } from './weights';
import type { ComputePrecision, DtypeOption } from './weights/dtype';
import type { WeightStore } from './weights/store';

const DEFAULT_KV_CACHE_TOKENS = 4096;
const DEFAULT_KV_CACHE_INITIAL_TOKENS = 512;

export interface LoadModelOptions {
  onProgress?: ProgressCallback;
  /**
   * Most tokens the paged KV cache holds across all sequences (default 4096). The cache starts at
   * kvCacheInitialTokens and grows (doubling) only when requests need more.
   */
  kvCacheTokens?: number;
  /** Tokens the KV cache holds at load, before it grows (default 512, at most kvCacheTokens). */
  kvCacheInitialTokens?: number;
  /** Tokens per KV block (default 16). */
  blockSize?: number;
  /** Prefill chunk size = most tokens in one step (default 256). */
  maxTokensPerStep?: number;
  /** Most sequences running (decoded together) at once (default 16). */
  maxSeqs?: number;
  /** Tiles per vision forward pass (default 4). */
  visionBatch?: number;
  /** 30-second chunks per audio forward pass (default 1). */
  audioBatch?: number;
  /**
   * Load the media encoders (vision tower, audio encoder) here (default true). False when encoder workers
   * own them: the main thread then holds only the language model.
   */
  vision?: boolean;
  /** Weight storage: 'f32' (default), 'f16', 'q8', 'q4', or per part { vision, text } (weights/dtype.ts). */
  dtype?: DtypeOption;
  /** Precision f16 weights are multiplied in: 'f32' (default) or 'f16' (needs shader-f16; else one warning). */
  compute?: ComputePrecision;
  /** Where GPU-ready copies of quantized checkpoint files are kept between loads (none when unset). */
  weightStore?: WeightStore;
  /** How decode steps run (LanguageModelOptions.decodePlan; default by the device's kernel variant). */
  decodePlan?: DecodePlan;
}

export interface LoadedModel {
  readonly backend: 'webgpu';
  config: ModelConfig;
  weights: ModelWeights;
  /** Undefined when encoder workers hold the vision tower (LoadModelOptions.vision = false) or the model has none. */
  vision: VisionEncoder | undefined;
  /** Undefined when encoder workers hold the audio encoder or the model has none. */
  audio: AudioEncoder | undefined;
  lm: LanguageModel;
  kv: KvManager;
  /** Runs the language model's steps over `kv` (what the engine, generate() and the tools call). */
  runner: GpuModelRunner;
  kvBuffers: KvCacheBuffers;
  /** Load statistics for reports. */
  stats: { weightBytes: number; kvCacheBytes: number; loadMs: number };
  destroy(): void;
}

export async function loadModelWithConfig(
  gpu: GpuContext,
  source: ModelSource,
  config: ModelConfig,
  options: LoadModelOptions = {},
): Promise<LoadedModel> {
  const t0 = performance.now();
  const withVision = options.vision ?? true;
  const weights = await loadWeights(gpu, source, config, {
    onProgress: options.onProgress,
    selection: withVision ? 'all' : 'text',
    dtype: options.dtype,
    compute: options.compute,
    store: options.weightStore,
  });
  const blockSize = options.blockSize ?? 16;
  const maxBlocks = Math.ceil((options.kvCacheTokens ?? DEFAULT_KV_CACHE_TOKENS) / blockSize);
  const numBlocks = Math.min(maxBlocks, Math.ceil((options.kvCacheInitialTokens ?? DEFAULT_KV_CACHE_INITIAL_TOKENS) / blockSize));
  let kvBuffers: KvCacheBuffers | undefined;
  let vision: VisionEncoder | undefined;
  let audio: AudioEncoder | undefined;
  try {
    kvBuffers = new KvCacheBuffers(gpu, config.text, numBlocks, blockSize, maxBlocks);
    const kv = new KvManager(new BlockPool(numBlocks, blockSize, maxBlocks));
    if (withVision && config.vision) vision = new VisionEncoder(gpu, weights, config, options.visionBatch ?? 4);
    // Loaded only for an audio checkpoint: its code and shaders stay out of every other app's main bundle.
    if (withVision && config.audio)
      audio = new (await import('./audio-encoder')).AudioEncoder(gpu, weights, config, options.audioBatch ?? 1);
    const lm = new LanguageModel(gpu, weights, config, kvBuffers, {
      maxTokensPerStep: options.maxTokensPerStep ?? 256,
      maxSeqs: options.maxSeqs ?? 16,
      kvBlocks: () => kv.pool.numBlocks,
      decodePlan: options.decodePlan,
    });
    const buffers = kvBuffers;
    const encoder = vision;
    const audioEncoder = audio;
    return {
      backend: 'webgpu',
      config,
      weights,
      vision: encoder,
      audio: audioEncoder,
      lm,
      kv,
      runner: new GpuModelRunner(lm, kv),
      kvBuffers: buffers,
      stats: {
        weightBytes: weights.sizeBytes,
        get kvCacheBytes() {
          return buffers.sizeBytes;
        },
        loadMs: performance.now() - t0,
      },
      destroy() {
        lm.destroy();
        encoder?.destroy();
        audioEncoder?.destroy();
        buffers.destroy();
        weights.destroy();
      },
    };
  } catch (e) {
    vision?.destroy();
    audio?.destroy();
    kvBuffers?.destroy();
    weights.destroy();
    throw e;
  }
}

export interface LoadedEncoderModel {
  config: ModelConfig;
  weights: ModelWeights;
  /** The vision tower and connector (idefics3, smolvlm). */
  vision?: VisionEncoder;
  /** The audio encoder and projector (voxtral). */
  audio?: AudioEncoder;
  /** A Qwen-VL vision tower and merger (qwen2_5_vl, qwen3_vl). */
  qwenVision?: QwenVisionEncoder;
  destroy(): void;
}

/** Only the media encoder: the vision tower and connector, or the audio encoder and projector (what an encoder worker needs). */
export async function loadEncoderModelWithConfig(
  gpu: GpuContext,
  source: ModelSource,
  config: ModelConfig,
  options: Pick<LoadModelOptions, 'onProgress' | 'visionBatch' | 'audioBatch' | 'dtype' | 'compute' | 'weightStore'> & {
    dispatchesPerSubmit?: number;
    rowsPerPiece?: number;
    /** Sees each encoder tensor's identity as it loads (the encoder's weights digest). */
    tensorDigest?: TensorDigestSink;
    /** Read only the encoder's tensors of each file, by range requests (LoadWeightsOptions.partialFiles). */
    partialFiles?: boolean;
  } = {},
): Promise<LoadedEncoderModel> {
  const weights = await loadWeights(gpu, source, config, {
    onProgress: options.onProgress,
    selection: config.audio ? 'audio' : 'vision',
    dtype: options.dtype,
    compute: options.compute,
    store: options.weightStore,
    tensorDigest: options.tensorDigest,
    partialFiles: options.partialFiles,
  });
  const pacing = [options.dispatchesPerSubmit ?? 0, options.rowsPerPiece ?? 0] as const;
  const vision = config.vision ? new VisionEncoder(gpu, weights, config, options.visionBatch ?? 4, ...pacing) : undefined;
  const audio = config.audio
    ? new (await import('./audio-encoder')).AudioEncoder(gpu, weights, config, options.audioBatch ?? 1, ...pacing)
    : undefined;
  const qwenVision = config.qwenVision ? new QwenVisionEncoder(gpu, weights, config.qwenVision, ...pacing) : undefined;
  return {
    config,
    weights,
    vision,
    audio,
    qwenVision,
    destroy() {
      vision?.destroy();
      audio?.destroy();
      weights.destroy();
    },
  };
}
