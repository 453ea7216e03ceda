// createRemoteEngine for Node: the checkpoint's vision tower runs here (Dawn or onnxruntime-node, as
// createEngine chooses), the language model on the server.

import { startNodeMediaEncoder, type NodeEngineOptions } from '../engine/create-node';
import { imageEmbeddingsOf } from '../encoder/image-embeddings';
import { RemoteEngine, type RemoteEngineOptions } from './remote-engine';

export interface NodeRemoteEngineOptions extends RemoteEngineOptions {
  /** The same checkpoint the server runs (a folder or resolve/main/ URL): its vision tower encodes here. */
  checkpoint: NodeEngineOptions['model'];
  /** Which backend encodes, as createEngine's device (default 'auto'). */
  device?: NodeEngineOptions['device'];
  dtype?: NodeEngineOptions['dtype'];
  encoder?: NodeEngineOptions['encoder'];
  weightCacheDir?: NodeEngineOptions['weightCacheDir'];
}

export async function createRemoteEngine(options: NodeRemoteEngineOptions): Promise<RemoteEngine> {
  const local = await startNodeMediaEncoder({
    model: options.checkpoint,
    device: options.device,
    dtype: options.dtype,
    encoder: options.encoder,
    weightCacheDir: options.weightCacheDir,
  });
  const media = local.media;
  let nextId = 1;
  try {
    return await RemoteEngine.connect(
      {
        identity: media.info.identity,
        hiddenSize: media.info.hiddenSize,
        imageSeqLen: media.info.imageSeqLen,
        embeddings: (bytes) => imageEmbeddingsOf(media, bytes, nextId++),
        stats: () => media.stats(),
        destroy: () => local.destroy(),
      },
      options,
    );
  } catch (e) {
    local.destroy();
    throw e;
  }
}
