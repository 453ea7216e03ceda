// worker_threads entry for media encoding in Node: an EncoderCore with its own Dawn device (or onnxruntime
// for the CPU backend), sharp for images, and the checkpoint read from disk or a URL. Wiring only
// (comlink's Node adapter).

import { parentPort } from 'node:worker_threads';
import * as Comlink from 'comlink';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { EncoderCore } from '../src/encoder/encoder-core';
import { transferringApi } from '../src/encoder/expose';
import { nodeAudioDecoder } from '../src/encoder/audio/decode-node';
import { nodeVideoBackend } from '../src/encoder/video/decode-node';
import { nodeModelSourceFromRef } from '../src/encoder/model-ref-node';
import { loadNodeOrt } from '../src/model/ort/ort-node';
import { openWeightStoreNode } from '../src/model/weights/store-node';
import { createNodeGpuContext } from '../src/gpu/node';
import { installErrorTransfer } from '../src/protocol/errors';
import { decodeImageNode } from '../src/processor/image-decode-node';

if (!parentPort) throw new Error('encoder.node-worker must run in a worker thread');
installErrorTransfer();
Comlink.expose(
  transferringApi(
    new EncoderCore({
      createGpu: () => createNodeGpuContext(),
      openModel: nodeModelSourceFromRef,
      videoBackend: nodeVideoBackend,
      decodeAudio: nodeAudioDecoder,
      decodeImage: decodeImageNode,
      openWeightStore: openWeightStoreNode,
      loadOrt: (kind) => loadNodeOrt(kind),
    }),
  ),
  nodeEndpoint(parentPort),
);
