// createEngine for Node: WebGPU from Dawn (SwiftShader when there is no GPU) or the CPU backend on
// onnxruntime-node (device: choose-device.ts), images decoded by sharp,
// weights from a local checkpoint folder or an http(s) URL base. Media is encoded in worker threads with
// their own Dawn devices when the built worker script is available (dist/encoder-worker.js), otherwise on
// this thread; encoder outputs are cached in memory and, given encoder.cacheDir, in files.

import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { fsStore } from '../cache/fs-store';
import { startInProcessBackend } from '../encoder/in-process';
import { nodeAudioDecoder } from '../encoder/audio/decode-node';
import { nodeVideoBackend } from '../encoder/video/decode-node';
import { nodeEncoderWorkerSpawner } from '../encoder/spawn-node';
import { EncoderWorkerPool } from '../encoder/worker-pool';
import { createNodeGpuContext, type NodeGpuOptions } from '../gpu/node';
import type { ModelSource } from '../io/model-source';
import { NodeDirSource } from '../io/model-source-node';
import { isGgufSource } from '../model/weights/gguf/gguf-plan';
import { openNodeModel } from './node-model';
import { decodeImageNode } from '../processor/image-decode-node';
import type { ModelRef } from '../protocol/encoder';
import { DirWeightStore, defaultWeightCacheDir, openWeightStoreNode as openWeightStore } from '../model/weights/store-node';
import { InternalError } from '../errors';
import type { LifecycleCounters, MediaEncoder } from '../encoder/media-encoder';
import { type StandaloneMediaEncoder, startStandaloneEncoder } from './standalone-encoder';
import type { GpuContext } from '../gpu/context';
import { readModelConfig } from '../families/read-config';
import { missingForCpuBackend } from '../model/ort/onnx-files';
import { resolveDtype } from '../model/weights/dtype';
import { loadNodeOrt } from '../model/ort/ort-node';
import { chooseDevice, parseDeviceOption } from './choose-device';
import { Engine, type EngineOptions } from './engine';
import { mediaEncoderFor, workerInit, type EncoderOptions } from './encoder-options';
import { mediaPolicy, type MediaOptions } from './intake/media-options';
import { resolveHostNode } from './intake/resolve-host-node';

export { nodeModelSource } from './node-model';

function modelRef(model: string | ModelSource, source: ModelSource): ModelRef | undefined {
  // Encoder workers reopen a folder, a URL, or a GGUF pair in a folder (its headers read again there).
  if (isGgufSource(source)) {
    return source.container instanceof NodeDirSource
      ? { kind: 'gguf', folder: { kind: 'dir', path: source.container.where }, ...source.ggufFiles }
      : undefined;
  }
  if (typeof model !== 'string') return undefined;
  return /^https?:\/\//.test(model) ? { kind: 'url', url: model } : { kind: 'dir', path: source.where };
}

/** The built worker script next to this module (present in the package's dist/, absent when running from source). */
function defaultEncoderWorkerScript(): URL | undefined {
  const url = new URL(/* @vite-ignore */ './encoder-worker.js', import.meta.url);
  return url.protocol === 'file:' && existsSync(fileURLToPath(url)) ? url : undefined;
}

export interface NodeEncoderOptions extends EncoderOptions {
  /** Worker script (default: dist/encoder-worker.js next to this module). */
  workerScript?: URL | string;
  /** Keep encoder outputs in files here (the persistent tier); no persistence when unset. */
  cacheDir?: string;
}

export interface NodeEngineOptions extends EngineOptions {
  /** A checkpoint folder, an http(s) URL base, a ModelSource, or a GGUF model file (`x.gguf`, with `mmproj`). */
  model: string | ModelSource;
  /**
   * A GGUF model's mmproj file (its vision or audio tower), in the model's folder; default: the folder's
   * only mmproj*.gguf.
   */
  mmproj?: string;
  gpu?: NodeGpuOptions;
  encoder?: NodeEncoderOptions;
  /**
   * Where GPU-ready copies of quantized checkpoint files (dtype f16/q8/q4) are kept so later loads skip
   * quantization (default: defaultWeightCacheDir(), i.e. $TESSERA_CACHE_DIR/weights or
   * ~/.cache/tessera/weights); false keeps none.
   */
  weightCacheDir?: string | false;
  /** Limits on the images a request brings, and image_url fetching (media-options.ts). */
  media?: MediaOptions;
}

/**
 * An engine on Dawn's WebGPU, or on the CPU backend (onnxruntime-node over the checkpoint's ONNX graphs):
 * `device` chooses ('auto' by default: choose-device.ts), and engine.stats().device says which and why.
 * Its encoder worker threads and GPU device keep the Node process alive until `engine.destroy()`; after
 * that a program with nothing else to do exits by itself (test/consumer checks it).
 */
/** The device choice and the media encoder's start for a Node engine, or for a remote engine's local encoder. */
async function nodeEncoderSetup(options: NodeEngineOptions, partialFiles = false, phase: (what: string) => void = () => {}) {
  phase('opening the checkpoint');
  const source = await openNodeModel(options.model, options.mmproj);
  phase(`choosing the device (device: '${options.device ?? 'auto'}')`);
  const chosen = await chooseDevice(parseDeviceOption(options.device), {
    gpu: () => createNodeGpuContext(options.gpu),
    ort: loadNodeOrt,
    missingOnnx: async () => missingForCpuBackend(source, await readModelConfig(source), resolveDtype(options.dtype).text),
    cpuKind: 'cpu',
    where: source.where,
  });
  const gpu = chosen.gpu;
  const ref = modelRef(options.model, source);
  const enc = options.encoder ?? {};
  const script = enc.workerScript ?? defaultEncoderWorkerScript();
  const cacheDir = options.weightCacheDir === false ? undefined : (options.weightCacheDir ?? defaultWeightCacheDir());
  const weights = {
    dtype: options.dtype,
    compute: options.compute,
    weightCache: cacheDir ? ({ kind: 'dir', dir: cacheDir } as const) : undefined,
    ...(chosen.cpu ? { backend: chosen.cpu.provider, why: chosen.choice.reason } : {}),
    ...(partialFiles ? { partialFiles } : {}),
  };
  const useWorkers = enc.mode !== 'in-process' && ref !== undefined && script !== undefined;
  const inProcess = (device: GpuContext | undefined, modelId: string) =>
    startInProcessBackend(
      {
        createGpu: async () => {
          if (!device) throw new InternalError('the CPU backend asked its encoder for a GPU');
          return device;
        },
        releaseGpu: () => {},
        openModel: () => source,
        decodeImage: decodeImageNode,
        videoBackend: nodeVideoBackend,
        decodeAudio: nodeAudioDecoder,
        openWeightStore,
        loadOrt: async () => chosen.cpu!,
      },
      workerInit(ref ?? { kind: 'dir', path: source.where }, modelId, enc, weights),
    );
  const startEncoder = async (modelId: string, lifecycle: LifecycleCounters): Promise<MediaEncoder> => {
    const init = workerInit(ref ?? { kind: 'dir', path: source.where }, modelId, enc, weights);
    const backend = useWorkers
      ? await EncoderWorkerPool.start(nodeEncoderWorkerSpawner(script!), init, enc.poolSize ?? 1)
      : await inProcess(gpu, modelId);
    return mediaEncoderFor(backend, lifecycle, enc, enc.store ?? (enc.cacheDir ? fsStore(enc.cacheDir) : undefined), undefined);
  };
  return { source, chosen, gpu, cacheDir, useWorkers, inProcess, startEncoder };
}

/**
 * The media encoder alone (no language model): the checkpoint's vision tower on Dawn or onnxruntime-node,
 * as createEngine would start it (reading only the encoder's tensors of a URL checkpoint, by range
 * requests, when its server allows); for a remote engine that encodes images here and sends embeddings.
 * Destroy it with destroy() (its GPU device goes with it).
 */
export async function startNodeMediaEncoder(options: NodeEngineOptions): Promise<StandaloneMediaEncoder> {
  return startStandaloneEncoder((phase) => nodeEncoderSetup(options, true, phase), options);
}

export async function createEngine(options: NodeEngineOptions): Promise<Engine> {
  const media = mediaPolicy(options.media, { resolveHost: resolveHostNode }); // a bad option fails before any device
  // The device is the engine's (ownsGpu): createAfter destroys it if creation fails.
  return Engine.createAfter(async (phase, onProgress) => {
    const { source, chosen, gpu, cacheDir, useWorkers, inProcess, startEncoder } = await nodeEncoderSetup(
      { ...options, onProgress },
      false,
      phase,
    );
    const modelIdOf = () => options.modelId ?? source.where;
    return {
      gpu,
      cpu: chosen.cpu,
      device: chosen.choice,
      source,
      decodeImage: decodeImageNode,
      ownsGpu: true,
      weightStore: cacheDir ? new DirWeightStore(cacheDir) : undefined,
      media,
      recreateGpu: gpu ? () => createNodeGpuContext(options.gpu) : undefined,
      restartInProcessEncoder: useWorkers || !gpu ? undefined : (device) => inProcess(device, modelIdOf()),
      startEncoder,
    };
  }, options);
}
