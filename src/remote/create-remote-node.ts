// createRemoteEngine for Node: the checkpoint's vision tower runs here (Dawn or onnxruntime-node, as
// createEngine chooses), the language model on the server.

import { startNodeMediaEncoder, type NodeEngineOptions } from '../engine/create-node';
import { localImageEncoder } from './local-encoder';
import { RemoteEngine, type RemoteEngineOptions } from './remote-engine';

export interface NodeRemoteEngineOptions extends RemoteEngineOptions {
  /** The same checkpoint the server runs (a folder or resolve/main/ URL): its vision tower encodes here. */
  checkpoint: NodeEngineOptions['model'];
  /** Which backend encodes, as createEngine's device (default 'auto'). */
  device?: NodeEngineOptions['device'];
  dtype?: NodeEngineOptions['dtype'];
  encoder?: NodeEngineOptions['encoder'];
  /**
   * Fail with EngineStalledError (naming what it waited on) when the local encoder's start, or an image's
   * encode for a request, gets nowhere for this many milliseconds (as the engine option); off by default.
   */
  stallTimeoutMs?: number;
  weightCacheDir?: NodeEngineOptions['weightCacheDir'];
}

export async function createRemoteEngine(options: NodeRemoteEngineOptions): Promise<RemoteEngine> {
  const local = await startNodeMediaEncoder({
    model: options.checkpoint,
    device: options.device,
    dtype: options.dtype,
    encoder: options.encoder,
    stallTimeoutMs: options.stallTimeoutMs,
    weightCacheDir: options.weightCacheDir,
  });
  try {
    return await RemoteEngine.connect(localImageEncoder(local), options);
  } catch (e) {
    local.destroy();
    throw e;
  }
}
