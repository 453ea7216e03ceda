// The language model the engine runs, on either backend, and which backend was chosen (choose-device.ts).

import type { LoadedModel } from '../model/load';
import type { OrtLoadedModel } from '../model/ort/load-ort';

/** Which backend runs the model, and why (engine.stats().device, the CLI's first line, the demo's status). */
export interface DeviceChoice {
  backend: 'webgpu' | 'cpu' | 'wasm';
  /** In words: "WebGPU on a hardware adapter (NVIDIA ...)", "no WebGPU adapter; the checkpoint has ONNX graphs". */
  reason: string;
}

/** The language model on either backend. */
export type EngineModel = LoadedModel | OrtLoadedModel;
