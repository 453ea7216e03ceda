// Web Worker entry for media encoding: an EncoderCore with the worker's own WebGPU device (or onnxruntime-web
// for the CPU backend), the browser's image decoder, WebCodecs for video and audio, and the checkpoint read
// through the Cache API / picked files. Wiring only.

import * as Comlink from 'comlink';
import { EncoderCore } from '../src/encoder/encoder-core';
import { transferringApi } from '../src/encoder/expose';
import { webCodecsAudioDecoder } from '../src/encoder/audio/decode-browser';
import { webCodecsVideoBackend } from '../src/encoder/video/decode-browser';
import { createBrowserGpuContext } from '../src/gpu/browser';
import { browserModelSourceFromRef } from '../src/encoder/model-ref';
import { loadBrowserOrt } from '../src/model/ort/ort-browser';
import { openWeightStoreBrowser } from '../src/model/weights/store';
import { installErrorTransfer } from '../src/protocol/errors';
import { decodeImageBrowser } from '../src/processor/image-decode';

installErrorTransfer();
Comlink.expose(
  transferringApi(
    new EncoderCore({
      createGpu: () => createBrowserGpuContext(),
      openModel: browserModelSourceFromRef,
      videoBackend: webCodecsVideoBackend,
      decodeAudio: webCodecsAudioDecoder,
      decodeImage: decodeImageBrowser,
      openWeightStore: openWeightStoreBrowser,
      loadOrt: (_kind, init) => loadBrowserOrt(init.wasm),
    }),
  ),
);
