// createEngine for browsers and workers: WebGPU from navigator.gpu, or the CPU backend on onnxruntime-web's
// WebAssembly build over the checkpoint's ONNX graphs (device: choose-device.ts), images decoded by the browser,
// weights from a URL (cached in the Cache API), picked files, or a granted directory. Media is encoded
// in Web Workers (each with its own GPUDevice), cached in memory and in IndexedDB, and coordinated
// across tabs with Web Locks.

import { idbStore } from '../cache/idb-store';
import { startInProcessBackend } from '../encoder/in-process';
import { lazyVideoBackend } from '../encoder/video/video-backend';
import type { LifecycleCounters, LockManagerLike, MediaEncoder } from '../encoder/media-encoder';
import { type StandaloneMediaEncoder, startStandaloneEncoder } from './standalone-encoder';
import { spawnBrowserEncoderWorker } from '../encoder/spawn-browser';
import { EncoderWorkerPool } from '../encoder/worker-pool';
import { createBrowserGpuContext } from '../gpu/browser';
import { DirectoryHandleSource, FileListSource, UrlSource, type ModelSource } from '../io/model-source';
import { decodeImageBrowser } from '../processor/image-decode';
import type { ModelRef } from '../protocol/encoder';
import type { GgufModelSource } from '../model/weights/gguf/gguf-plan';
import { CacheApiWeightStore, openWeightStoreBrowser } from '../model/weights/store';
import { InternalError } from '../errors';
import type { GpuContext, GpuContextOptions } from '../gpu/context';
import { readModelConfig } from '../families/read-config';
import { missingForCpuBackend } from '../model/ort/onnx-files';
import { resolveDtype } from '../model/weights/dtype';
import { loadBrowserOrt, type BrowserOrtOptions } from '../model/ort/ort-browser';
import { checkStorage, type StorageOptions } from '../storage/check-storage';
import { weightFilesOf } from '../storage/download-plan';
import { browserStorageManager } from '../storage/quota';
import { type BrowserModelInput, openBrowserGguf } from './browser-model';
import { chooseDevice, parseDeviceOption } from './choose-device';
import { Engine, type EngineOptions } from './engine';
import { mediaEncoderFor, workerInit, type EncoderOptions } from './encoder-options';
import { mediaPolicy, type MediaOptions } from './intake/media-options';

export type { BrowserModelInput } from './browser-model';

/** `files`: a URL's file names when known (see BrowserEngineOptions.modelFiles). */
export function browserModelSource(model: BrowserModelInput, files?: readonly string[]): ModelSource {
  if (typeof model === 'string' || model instanceof URL) return new UrlSource(String(model), { files });
  if (typeof FileList !== 'undefined' && model instanceof FileList) return new FileListSource(Array.from(model));
  if (Array.isArray(model)) return new FileListSource(model);
  if ((model as FileSystemDirectoryHandle).kind === 'directory') return new DirectoryHandleSource(model as FileSystemDirectoryHandle);
  return model as ModelSource;
}

/** How an encoder worker can open the same checkpoint (undefined: only this thread can). */
function modelRef(model: BrowserModelInput): ModelRef | undefined {
  // A relative URL is resolved against the page; Deno has no page (no `location` unless --location is given).
  if (typeof model === 'string' || model instanceof URL)
    return { kind: 'url', url: new URL(String(model), globalThis.location?.href).href };
  if (typeof FileList !== 'undefined' && model instanceof FileList) return { kind: 'files', files: Array.from(model) };
  if (Array.isArray(model)) return { kind: 'files', files: model };
  if ((model as FileSystemDirectoryHandle).kind === 'directory')
    return { kind: 'directory-handle', handle: model as FileSystemDirectoryHandle };
  return undefined;
}

/** A GGUF pair's reference for encoder workers: the folder of its model URL, or the picked files. */
function ggufRef(model: BrowserModelInput, gguf: GgufModelSource): ModelRef | undefined {
  const at = modelRef(model);
  if (at?.kind === 'url') return { kind: 'gguf', folder: { kind: 'url', url: new URL('.', at.url).href }, ...gguf.ggufFiles };
  return at?.kind === 'files' ? { kind: 'gguf', folder: at, ...gguf.ggufFiles } : undefined;
}

/** The same reference, its URL downloads not stored (the engine's storage check found no room). */
function withoutStoring(ref: ModelRef | undefined): ModelRef | undefined {
  if (ref?.kind === 'url') return { ...ref, storeDownloads: false };
  if (ref?.kind === 'gguf' && ref.folder.kind === 'url') return { ...ref, folder: { ...ref.folder, storeDownloads: false } };
  return ref;
}

export interface BrowserEngineOptions extends EngineOptions {
  model: BrowserModelInput;
  /**
   * For a URL model: the folder's file names, when known (a manifest). Files not listed are never
   * requested, so absent optional files cost no request and log no 404. Hugging Face `resolve/` URLs are
   * listed through the Hub's API without this.
   */
  modelFiles?: readonly string[];
  /**
   * A GGUF model's mmproj file (its vision tower), by name or URL in the model's folder; default: the
   * folder's only mmproj*.gguf when its file list is known, or the picked files' only mmproj*.gguf.
   */
  mmproj?: string;
  encoder?: EncoderOptions;
  /** Keep GPU-ready copies of quantized checkpoint files (dtype f16/q8/q4) in the Cache API (default true). */
  weightCache?: boolean;
  /** The WebGPU device's options: a kernel variant, or a lower maxStorageBufferBindingSize to act as a smaller GPU. */
  gpu?: Pick<GpuContextOptions, 'kernelVariant' | 'maxStorageBufferBindingSize'>;
  /** Limits on the images a request brings, and image_url fetching (media-options.ts). */
  media?: MediaOptions;
  /** onnxruntime-web for the CPU backend: where its .wasm files are served from, and threads (ort-browser.ts). */
  wasm?: BrowserOrtOptions;
  /**
   * Browser storage: ask to persist it, and whether a checkpoint the quota has no room for fails
   * (StorageQuotaError) or loads without being stored (src/storage/check-storage.ts). engine.stats().storage
   * says what the check found.
   */
  storage?: StorageOptions;
}

/** The device choice and the media encoder's start for a browser engine, or a remote engine's local encoder. */
async function browserEncoderSetup(options: BrowserEngineOptions, partialFiles = false, phase: (what: string) => void = () => {}) {
  phase('opening the checkpoint');
  // A GGUF pair (browser-model.ts) is a checkpoint of its own; encoder workers open it again by reference (ggufRef).
  const gguf = await openBrowserGguf(options.model, options.modelFiles, options.mmproj, (file, loadedBytes, totalBytes) =>
    options.onProgress?.({ phase: 'download', file, loadedBytes, totalBytes }),
  );
  let source = gguf ?? browserModelSource(options.model, options.modelFiles);
  // 'cpu' in a browser is the WebAssembly backend (there is no other CPU here).
  const asked = parseDeviceOption(options.device);
  phase(`choosing the device (device: '${options.device ?? 'auto'}')`);
  const chosen = await chooseDevice(asked === 'cpu' ? 'wasm' : asked, {
    gpu: () => createBrowserGpuContext(options.gpu),
    ort: () => loadBrowserOrt(options.wasm),
    missingOnnx: async () => missingForCpuBackend(source, await readModelConfig(source), resolveDtype(options.dtype).text),
    cpuKind: 'wasm',
    where: source.where,
  });
  const gpu = chosen.gpu;
  // Before anything is downloaded: persist() when asked, and the quota against the bytes the load needs (a
  // remote engine's encoder reads ranges, which are never stored: no check).
  const check = () =>
    checkStorage(source, options.storage ?? {}, {
      storage: browserStorageManager(),
      weightFiles: () => weightFilesOf(source, chosen.cpu ? 'cpu' : 'webgpu', resolveDtype(options.dtype).text),
    });
  if (!partialFiles) phase('checking storage (the quota against the download)');
  const storage = partialFiles
    ? undefined
    : await check().catch((e) => {
        gpu?.destroy(); // StorageQuotaError: the device chosen for this load goes with it
        throw e;
      });
  if (storage) options.onProgress?.({ phase: 'storage', storage });
  const storing = storage?.storing !== false;
  if (!storing && source instanceof UrlSource && source.storesDownloads) source = source.withoutStoring();
  if (!storing && gguf && gguf.container instanceof UrlSource && gguf.container.storesDownloads) {
    source = gguf.in(gguf.container.withoutStoring());
  }
  const found = gguf ? ggufRef(options.model, gguf) : modelRef(options.model);
  const ref = storing ? found : withoutStoring(found);
  // Stored quantized copies name the checkpoint they are made from (inspectStorage, deleteStoredModel).
  const storedAs = source instanceof UrlSource ? source.folderUrl : source.where;
  const enc = options.encoder ?? {};
  const locks = (globalThis.navigator as Navigator | undefined)?.locks as LockManagerLike | undefined;
  const weightStore = options.weightCache === false ? undefined : CacheApiWeightStore.available(storedAs);
  const weights = {
    dtype: options.dtype,
    compute: options.compute,
    weightCache: weightStore ? ({ kind: 'cache-api', model: storedAs } as const) : undefined,
    ...(chosen.cpu ? { backend: 'wasm' as const, why: chosen.choice.reason, wasm: options.wasm } : {}),
    ...(partialFiles ? { partialFiles } : {}),
  };
  // Deno on the CPU backend: onnxruntime-web does not load in a Deno worker (its own URL check fails on the
  // worker's `location`, measured with Deno 2.9), so media are encoded in-process there.
  const denoCpu = chosen.cpu !== undefined && typeof (globalThis as { Deno?: unknown }).Deno !== 'undefined';
  const inProcessMode = enc.mode === 'in-process' || !ref || denoCpu;
  const inProcess = (device: GpuContext | undefined, modelId: string) =>
    startInProcessBackend(
      {
        createGpu: async () => {
          if (!device) throw new InternalError('the CPU backend asked its encoder for a GPU');
          return device;
        },
        releaseGpu: () => {},
        openModel: () => source,
        decodeImage: decodeImageBrowser,
        // In-process video (encoder.mode 'in-process') loads the WebCodecs backend and its demuxer on first use.
        videoBackend: lazyVideoBackend('webcodecs', async () => (await import('../encoder/video/decode-browser')).webCodecsVideoBackend),
        // Audio likewise: the WebCodecs decoder and its demuxers load with the first audio part.
        decodeAudio: () =>
          async function* (bytes, targetRate, options) {
            yield* (await import('../encoder/audio/decode-browser')).decodeAudioBrowser(bytes, targetRate, options);
          },
        openWeightStore: openWeightStoreBrowser,
        loadOrt: async () => chosen.cpu!,
      },
      workerInit(ref ?? { kind: 'url', url: '' }, modelId, enc, weights),
    );
  const startEncoder = async (modelId: string, lifecycle: LifecycleCounters): Promise<MediaEncoder> => {
    // A worker opening the same URL gets the file list learned here, so it probes nothing either.
    const files = source instanceof UrlSource ? await source.knownFiles() : undefined;
    const init = workerInit(ref?.kind === 'url' && files ? { ...ref, files } : (ref ?? { kind: 'url', url: '' }), modelId, enc, weights);
    const backend = inProcessMode
      ? await inProcess(gpu, modelId)
      : await EncoderWorkerPool.start(spawnBrowserEncoderWorker, init, enc.poolSize ?? 1);
    const store = enc.store ?? (typeof indexedDB !== 'undefined' ? idbStore() : undefined);
    return mediaEncoderFor(backend, lifecycle, enc, store, locks);
  };
  return { source, chosen, gpu, weightStore, storage, inProcessMode, inProcess, startEncoder };
}

/**
 * The media encoder alone (no language model), as createEngine starts it: for a remote engine that encodes
 * images in this page (or worker) and sends embeddings. destroy() frees it and its GPU device.
 */
export async function startBrowserMediaEncoder(options: BrowserEngineOptions): Promise<StandaloneMediaEncoder> {
  return startStandaloneEncoder((phase) => browserEncoderSetup(options, true, phase), options);
}

export async function createEngine(options: BrowserEngineOptions): Promise<Engine> {
  const media = mediaPolicy(options.media); // a bad option fails before any device
  // The device is the engine's (ownsGpu): createAfter destroys it if creation fails.
  return Engine.createAfter(async (phase, onProgress) => {
    const { source, chosen, gpu, weightStore, storage, inProcessMode, inProcess, startEncoder } = await browserEncoderSetup(
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
      decodeImage: decodeImageBrowser,
      ownsGpu: true,
      weightStore,
      storage,
      media,
      recreateGpu: gpu ? () => createBrowserGpuContext(options.gpu) : undefined,
      restartInProcessEncoder: inProcessMode && gpu ? (device) => inProcess(device, modelIdOf()) : undefined,
      startEncoder,
    };
  }, options);
}
