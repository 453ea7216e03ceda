// createRemoteEngine for browsers: the checkpoint's vision tower runs in this page's encoder worker
// (WebGPU, or onnxruntime-web), with the encoder cache in IndexedDB; the language model on the server.

import { type BrowserEngineOptions, startBrowserMediaEncoder } from '../engine/create-browser';
import { localImageEncoder } from './local-encoder';
import { RemoteEngine, type RemoteEngineOptions } from './remote-engine';

export interface BrowserRemoteEngineOptions extends RemoteEngineOptions {
  /** The same checkpoint the server runs (a resolve/main/ URL, files or a folder handle): its vision tower encodes here. */
  checkpoint: BrowserEngineOptions['model'];
  /** For a URL checkpoint: its file names, when known (see createEngine's modelFiles). */
  checkpointFiles?: BrowserEngineOptions['modelFiles'];
  /** Which backend encodes, as createEngine's device (default 'auto'). */
  device?: BrowserEngineOptions['device'];
  dtype?: BrowserEngineOptions['dtype'];
  encoder?: BrowserEngineOptions['encoder'];
  /**
   * Fail with EngineStalledError (naming what it waited on) when the local encoder's start, or an image's
   * encode for a request, gets nowhere for this many milliseconds (as the engine option); off by default.
   */
  stallTimeoutMs?: number;
  wasm?: BrowserEngineOptions['wasm'];
}

export async function createRemoteEngine(options: BrowserRemoteEngineOptions): Promise<RemoteEngine> {
  const local = await startBrowserMediaEncoder({
    model: options.checkpoint,
    modelFiles: options.checkpointFiles,
    device: options.device,
    dtype: options.dtype,
    encoder: options.encoder,
    stallTimeoutMs: options.stallTimeoutMs,
    wasm: options.wasm,
  });
  try {
    return await RemoteEngine.connect(localImageEncoder(local), options);
  } catch (e) {
    local.destroy();
    throw e;
  }
}
