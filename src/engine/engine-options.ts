// The options of an engine (Engine.create, and the factories' options that extend them): which backend, the
// KV cache and scheduler's sizes, decode priority, prefix caching, the stall watchdog.

import type { LoadModelOptions } from '../model/load';
import type { DecodePriority } from './encoder-pacing';
import type { EngineProgress } from './types';

export interface EngineOptions extends Omit<LoadModelOptions, 'onProgress' | 'vision' | 'weightStore'> {
  /**
   * Which backend runs the model (default 'auto'): 'webgpu'; 'cpu' (onnxruntime-node, Node) or 'wasm'
   * (onnxruntime-web, WebAssembly) over the checkpoint's ONNX graphs; 'auto' takes WebGPU on a hardware
   * adapter and the CPU backend where there is no WebGPU or only a software adapter and the checkpoint has
   * ONNX graphs (choose-device.ts). engine.stats().device says which ran and why.
   */
  device?: 'auto' | 'webgpu' | 'wasm' | 'cpu';
  onProgress?: (p: EngineProgress) => void;
  /** Name reported in responses and used in cache keys (default: the source's location). */
  modelId?: string;
  /**
   * Image embeddings being encoded at once (default: 32 tiles' worth). Items of different requests
   * started in the same step are encoded as one batch; a larger budget batches more but lets encoding
   * take more of the GPU from decoding.
   */
  encoderBudget?: number;
  /**
   * Decode priority while images encode (default { encoderShare: 0.15 }): while requests decode, the
   * encoder's GPU work runs only between model steps, for this share of each step's time, so streaming
   * stays smooth (inter-token latency about (1 + share) x idle) and encoding slows to about
   * share / (1 + share) of its speed. false: the encoder runs freely beside decoding (faster encodes,
   * slower decode steps while they run). See src/engine/encoder-pacing.ts.
   */
  decodePriority?: DecodePriority | false;
  /**
   * Reuse the KV blocks of earlier requests with the same prefix (same tokens and same images; default
   * true): a follow-up question about an image prefills only what is new.
   */
  prefixCaching?: boolean;
  /**
   * Fail everything waiting with EngineStalledError (naming what the engine waited on) when the engine has
   * work but gets nowhere for this many milliseconds: no GPU operation finishes, no step runs, no encode
   * settles (src/engine/stall.ts). Off by default. A stall is always a bug; the engine then refuses further
   * requests and must be created anew.
   */
  stallTimeoutMs?: number;
}
