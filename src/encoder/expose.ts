// The worker-side API as comlink should see it: an EncoderCore whose encode() results move their
// embeddings to the main thread (transferred, not copied: about 2 MB per image at SmolVLM-256M size).

import * as Comlink from 'comlink';
import type { EncodedMedia, EncoderWorkerApi } from '../protocol/encoder';
import type { EncoderCore } from './encoder-core';

export function transferringApi(core: EncoderCore): EncoderWorkerApi {
  return {
    init: (init) => core.init(init),
    prepare: (bytes, options) => core.prepare(bytes, options),
    encode: async (key): Promise<EncodedMedia> => {
      const m = await core.encode(key);
      return Comlink.transfer(m, [m.embeddings.buffer]);
    },
    encodeBatch: async (keys): Promise<EncodedMedia[]> => {
      const all = await core.encodeBatch(keys);
      return Comlink.transfer(
        all,
        all.map((m) => m.embeddings.buffer as ArrayBuffer),
      );
    },
    setPaced: (paced) => core.setPaced(paced),
    grant: (budgetMs) => core.grant(budgetMs),
    forget: (key) => core.forget(key),
    stats: () => core.stats(),
    prepareVideo: (source, options) => core.prepareVideo(source, options),
    prepareAudio: (source, options) => core.prepareAudio(source, options),
  };
}
