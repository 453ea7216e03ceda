// Engines for tests: on the test's shared GPU context, encoding media in-process (or in worker threads
// running the built dist/encoder-worker.js).

import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startInProcessBackend } from '../../src/encoder/in-process';
import { nodeVideoBackend } from '../../src/encoder/video/decode-node';
import { nodeEncoderWorkerSpawner } from '../../src/encoder/spawn-node';
import { EncoderWorkerPool } from '../../src/encoder/worker-pool';
import { Engine, type EngineOptions } from '../../src/engine/engine';
import { mediaEncoderFor, workerInit, type EncoderOptions } from '../../src/engine/encoder-options';
import type { GpuContext } from '../../src/gpu/context';
import { NodeDirSource } from '../../src/io/model-source-node';
import type { KeyValueStore } from '../../src/cache/store';
import { decodeImageNode } from '../../src/processor/node';

export const BUILT_WORKER = pathToFileURL(resolve(import.meta.dirname, '../../dist/encoder-worker.js'));

export interface TestEngineOptions extends EngineOptions {
  encoder?: EncoderOptions;
  workers?: boolean;
  store?: KeyValueStore;
}

export function testEngine(gpu: GpuContext, dir: string, options: TestEngineOptions = {}): Promise<Engine> {
  const source = new NodeDirSource(dir);
  const enc = options.encoder ?? {};
  return Engine.create(
    {
      gpu,
      source,
      decodeImage: decodeImageNode,
      startEncoder: async (modelId, lifecycle) => {
        const init = workerInit({ kind: 'dir', path: source.where }, modelId, enc);
        const backend = options.workers
          ? await EncoderWorkerPool.start(nodeEncoderWorkerSpawner(BUILT_WORKER), init, enc.poolSize ?? 1)
          : await startInProcessBackend(
              { createGpu: async () => gpu, releaseGpu: () => {}, openModel: () => source, decodeImage: decodeImageNode, videoBackend: nodeVideoBackend },
              init,
            );
        return mediaEncoderFor(backend, lifecycle, enc, options.store, undefined);
      },
    },
    options,
  );
}
