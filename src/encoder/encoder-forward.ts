// What the media encoder runs a batch on: a backend's forward pass over concatenated tiles (a vision tower
// and connector) or 30-second chunks (an audio encoder and projector), giving the rows to splice:
//   gpu-forward.ts   WebGPU: the WGSL towers on the encoder's own device (paced in pieces, out-of-memory
//                    and device loss handled there)
//   ort-forward.ts   the CPU backend: the checkpoint's onnx/vision_encoder.onnx on onnxruntime
// EncoderCore (hashing, decoding, preparing, batching across requests) is the same for both. What the
// embeddings depend on (weightsDigest, dtype: which names the backend, as the two differ in the last bits)
// goes into every cache key, so neither backend serves the other's values.

import type { AdapterReport } from '../gpu/adapter-info';
import type { EncoderDeviceMemory } from '../protocol/encoder';
import type { ModelConfig } from '../model/config';
import type { PatchGrid } from '../processor/smart-resize';
import type { PieceGate } from './piece-gate';

export type ForwardInput =
  | { kind: 'tiles'; pixels: Float32Array; numTiles: number }
  | { kind: 'chunks'; features: Float32Array; numChunks: number }
  /** One Qwen-VL image: its patch rows [t·h·w, C·T·P·P] and grid. */
  | { kind: 'patches'; patches: Float32Array; grid: PatchGrid };

export interface EncoderForward {
  readonly backend: 'webgpu' | 'cpu' | 'wasm';
  readonly config: ModelConfig;
  /** Digest of the encoder's weights as this backend reads them (weights-digest.ts; the ONNX bytes on the CPU). */
  readonly weightsDigest: string;
  /** The weights' storage and the backend, as they go into cache keys ('bf16', 'onnx-f32@cpu'). */
  readonly dtype: string;
  /** The WebGPU adapter (absent on the CPU backend). */
  readonly adapter?: AdapterReport;
  /** Times the backend recovered its device (WebGPU). */
  readonly deviceRecoveries: number;
  /** GPU memory on the encoder's device (WebGPU; absent on the CPU backend). */
  deviceMemory?(): EncoderDeviceMemory;
  /** [units × tokens per unit, text hidden] f32, units in input order; a Qwen-VL image's rows, then its DeepStack levels'. */
  run(input: ForwardInput, gate: PieceGate): Promise<Float32Array>;
  destroy(): void;
}
