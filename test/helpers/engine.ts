// Engines for tests: on the test's shared GPU context, encoding media in-process (or in worker threads
// running the built dist/encoder-worker.js, or the test-only faulty worker built next to it).

import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startInProcessBackend } from '../../src/encoder/in-process';
import { nodeAudioDecoder } from '../../src/encoder/audio/decode-node';
import { nodeVideoBackend } from '../../src/encoder/video/decode-node';
import { nodeEncoderWorkerSpawner } from '../../src/encoder/spawn-node';
import { EncoderWorkerPool } from '../../src/encoder/worker-pool';
import { Engine, type EngineOptions } from '../../src/engine/engine';
import { mediaEncoderFor, workerInit, type EncoderOptions } from '../../src/engine/encoder-options';
import { mediaPolicy, type MediaOptions, type ResolveHost } from '../../src/engine/intake/media-options';
import type { LifecycleCounters, MediaEncoder } from '../../src/encoder/media-encoder';
import type { GpuContext } from '../../src/gpu/context';
import type { ModelSource } from '../../src/io/model-source';
import { NodeDirSource } from '../../src/io/model-source-node';
import { isGgufSource } from '../../src/model/weights/gguf/gguf-plan';
import type { ModelRef } from '../../src/protocol/encoder';
import { openWeightStoreNode } from '../../src/model/weights/store-node';
import type { KeyValueStore } from '../../src/cache/store';
import { decodeImageNode } from '../../src/processor/node';
import { withFaults, type EncoderFaults } from './faulty-encoder';
import { TEST_ENGINE_STALL_MS, watchedEngine } from './watch-engine';

export const BUILT_WORKER = pathToFileURL(resolve(import.meta.dirname, '../../dist/encoder-worker.js'));
/** The test-only worker (test/helpers/faulty-encoder.node-worker.ts), built by test/gpu/global-setup.ts. */
export const FAULTY_WORKER = pathToFileURL(resolve(import.meta.dirname, '../../dist-test/faulty-encoder-worker.js'));

export interface TestEngineOptions extends EngineOptions {
  encoder?: EncoderOptions;
  workers?: boolean;
  /** Worker script (default BUILT_WORKER). */
  workerScript?: URL;
  /** Faults injected by a test backend around the encoder (in-process), or by FAULTY_WORKER (workers). */
  faults?: EncoderFaults;
  store?: KeyValueStore;
  /** Stored quantized copies in this directory, for the language model and the encoder alike. */
  weightCacheDir?: string;
  media?: MediaOptions;
  /** The checkpoint, when not the folder `dir` (a GGUF checkpoint: families/gguf-checkpoint.ts). */
  source?: ModelSource;
  /** How image URLs are fetched and host names resolved (default: global fetch, no resolution). */
  net?: { fetchImpl?: typeof fetch; resolveHost?: ResolveHost };
}

export function testEngine(gpu: GpuContext, dir: string, options: TestEngineOptions = {}): Promise<Engine> {
  return watchedEngine(`engine ${dir.split('/').at(-1)}`, (progressed) =>
    createTestEngine(gpu, dir, {
      stallTimeoutMs: TEST_ENGINE_STALL_MS,
      ...options,
      onProgress: (p) => {
        progressed();
        options.onProgress?.(p);
      },
    }),
  );
}

function createTestEngine(gpu: GpuContext, dir: string, options: TestEngineOptions): Promise<Engine> {
  const source = options.source ?? new NodeDirSource(dir);
  const weightCache = options.weightCacheDir ? ({ kind: 'dir', dir: options.weightCacheDir } as const) : undefined;
  return Engine.create(
    {
      gpu,
      source,
      decodeImage: decodeImageNode,
      weightStore: weightCache ? openWeightStoreNode(weightCache) : undefined,
      media: mediaPolicy(options.media, options.net),
      startEncoder: testEncoderStart(gpu, source, options),
    },
    options,
  );
}

/**
 * The test engines' encoder start on `source`: in-process on `gpu` (with the test backend's faults), or in
 * worker threads; also a media encoder started alone (startStandaloneEncoder) for the stall tests.
 */
export function testEncoderStart(
  gpu: GpuContext,
  source: ModelSource,
  options: TestEngineOptions,
): (modelId: string, lifecycle: LifecycleCounters) => Promise<MediaEncoder> {
  const enc = options.encoder ?? {};
  const weightCache = options.weightCacheDir ? ({ kind: 'dir', dir: options.weightCacheDir } as const) : undefined;
  const faults = options.faults ?? {};
  return async (modelId, lifecycle) => {
    // Workers open a GGUF pair again by reference (its folder and the two names).
    const ref: ModelRef = isGgufSource(source)
      ? { kind: 'gguf', folder: { kind: 'dir', path: source.container.where }, ...source.ggufFiles }
      : { kind: 'dir', path: source.where };
    const init = workerInit(ref, modelId, enc, {
      dtype: options.dtype,
      compute: options.compute,
      weightCache,
    });
    const backend = options.workers
      ? await EncoderWorkerPool.start(
          nodeEncoderWorkerSpawner(options.workerScript ?? BUILT_WORKER, { workerData: faults }),
          init,
          enc.poolSize ?? 1,
        )
      : withFaults(
          await startInProcessBackend(
            {
              createGpu: async () => gpu,
              releaseGpu: () => {},
              openModel: () => source,
              decodeImage: decodeImageNode,
              videoBackend: nodeVideoBackend,
              decodeAudio: nodeAudioDecoder,
              openWeightStore: openWeightStoreNode,
            },
            init,
          ),
          faults,
        );
    return mediaEncoderFor(backend, lifecycle, enc, options.store, undefined);
  };
}
