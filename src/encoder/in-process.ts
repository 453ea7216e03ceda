// An encode backend on the calling thread: the same EncoderCore the workers run, without a worker. Used
// where workers are unavailable or unwanted (tests, tools); hashing and decoding then happen here too.

import type { EncoderWorkerInit } from '../protocol/encoder';
import { EncoderCore, type EncoderCoreDeps } from './encoder-core';
import type { EncodeBackend } from './media-encoder';

export async function startInProcessBackend(deps: EncoderCoreDeps, init: EncoderWorkerInit): Promise<EncodeBackend> {
  const core = new EncoderCore(deps);
  const info = await core.init(init);
  let pending = 0;
  const counted = <T>(p: Promise<T>): Promise<T> => {
    pending++;
    return p.finally(() => pending--);
  };
  return {
    kind: 'in-process',
    info,
    prepare: (bytes, options) => counted(core.prepare(bytes, options)),
    prepareVideo: (source, options) => counted(core.prepareVideo(source, options)),
    prepareAudio: (source, options) => counted(core.prepareAudio(source, options)),
    encode: (key) => counted(core.encode(key)),
    encodeBatch: (keys) => counted(core.encodeBatch(keys)),
    setPaced: (paced) => core.setPaced(paced),
    grant: (budgetMs) => core.grant(budgetMs),
    forget: (key) => core.forget(key),
    queueDepth: () => pending,
    state: () => ({ callsInFlight: pending, ...core.waitState() }),
    destroy: () => core.destroy(),
  };
}
