// The media encoder itself: hash, decode, prepare and encode media with the checkpoint's encoder (a vision
// tower, or an audio encoder) on a backend's forward pass (encoder-forward.ts: its own GPUDevice, or
// onnxruntime for the CPU backend). It runs inside an encoder worker
// (workers/encoder.worker.ts wires it to comlink) or, with the same code, on the calling thread. Encodes of
// different requests are batched into one forward pass.
//
//   prepare(bytes) -> key = blake3(identity ‖ bytes); decode; resize; tile   (pixels kept until encode)
//   encode(key)    -> waits for the next batch: jobs' tiles (or audio chunks) concatenated up to
//                     maxBatchTiles, one forward pass, outputs read back and split per job
//   prepareVideo   -> video/prepare-video.ts: sampled frames become prepared one-tile items keyed by their
//                     pixels; they keep u8 tiles only (normalised when their batch runs: a 64-frame clip at
//                     512 px is 50 MB of u8, 200 MB as f32)
//   prepareAudio   -> audio/prepare-audio.ts: 30-second chunks keyed by their PCM, their log-mel kept

import { contentKey, encoderIdentity } from '../cache/content-key';
import { AudioNotSupportedError, ImageNotSupportedError, InternalError, MediaNotPreparedError, VideoNotSupportedError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { ModelSource } from '../io/model-source';
import { readModelConfig } from '../families/read-config';
import { requireVision } from '../model/config';
import type { OrtRuntime } from '../model/ort/ort-api';
import type { LogMelExtractor } from '../processor/audio/log-mel';
import { logMelConfigFrom } from '../processor/audio/log-mel-config';
import { readJson, requireJson } from '../processor/files';
import { resolveDtype } from '../model/weights/dtype';
import type { WeightStore } from '../model/weights/store';
import type {
  AudioSource,
  EncodedMedia,
  EncoderWorkerApi,
  EncoderWorkerInfo,
  EncoderWorkerInit,
  EncoderWorkerStats,
  ModelRef,
  PrepareAudioOptions,
  PreparedAudio,
  PrepareOptions,
  WeightCacheRef,
  PreparedMedia,
  PreparedVideo,
  PrepareVideoOptions,
  VideoSource,
} from '../protocol/encoder';
import type { ImageDecoder } from '../processor/image-decode';
import type { ImageLayout } from '../processor/image-layout';
import { JobQueue } from './job-queue';
import { PieceGate } from './piece-gate';
import { processImage, shrinkTarget } from '../processor/image-processor';
import {
  normalizeQwenRgb,
  parseQwenImageProcessorConfig,
  patchGeometry,
  processQwenImage,
  type QwenImageProcessorConfig,
} from '../processor/qwen-image-processor';
import { flattenPatches } from '../processor/qwen-patches';
import { parseQwenVideoConfig, type QwenVideoConfig } from '../processor/qwen-video';
import { prepareQwenVideo, type QwenFrameGroup } from './video/prepare-qwen-video';
import type { PatchGrid } from '../processor/smart-resize';
import { loadProcessorConfig, type ImageProcessorConfig, type ProcessorConfig } from '../processor/processor-config';
import { normalizeFrameTile } from '../processor/video-frames';
import type { AudioDecodeFn } from './audio/prepare-audio';
import { prepareVideo } from './video/prepare-video';
import type { VideoBackend } from './video/video-backend';
import type { EncoderForward, ForwardInput } from './encoder-forward';
import { GpuEncoderForward } from './gpu-forward';

export interface EncoderCoreDeps {
  createGpu(): Promise<GpuContext>;
  /** Give the device back (default: destroy it; an in-process encoder sharing the engine's keeps it). */
  releaseGpu?(gpu: GpuContext): void;
  /** The checkpoint a reference names (a GGUF pair's headers are read first: a promise then). */
  openModel(ref: ModelRef): ModelSource | Promise<ModelSource>;
  decodeImage: ImageDecoder;
  /** Opens the weight store a worker init names (stored quantized copies); none when absent. */
  openWeightStore?(ref: WeightCacheRef): WeightStore | undefined;
  /** Decodes video clips (WebCodecs in a browser, ffmpeg/sharp in Node); absent: frame lists only. */
  videoBackend?: VideoBackend;
  /** Decodes audio files (WebCodecs in a browser, WAV / ffmpeg in Node); absent: PCM only. */
  decodeAudio?: (ffmpegPath: string | undefined) => AudioDecodeFn;
  /** onnxruntime, for an init whose backend is 'cpu' or 'wasm' (the CPU backend); absent: WebGPU only. */
  loadOrt?: (kind: 'cpu' | 'wasm', init: EncoderWorkerInit) => Promise<OrtRuntime>;
}

/** Pixels kept between prepare and encode: an image's tiles (normalised already) or a video frame's (u8 only). */
interface PreparedTiles {
  layout: ImageLayout;
  tilesU8: Uint8Array;
  /** [numTiles, 3, T, T] f32; absent for video frames, which are normalised when their batch runs. */
  pixelValues?: Float32Array;
}

/** An audio chunk kept between prepare and encode: its log-mel features [mel, frames]. */
interface PreparedChunk {
  features: Float32Array;
}

/** A Qwen-VL image kept between prepare and encode: its patch rows and grid. */
interface PreparedPatches {
  patches: Float32Array;
  grid: PatchGrid;
  tokens: number;
}

type PreparedItem = PreparedTiles | PreparedChunk | PreparedPatches | QwenFrameGroup;

const isChunk = (item: PreparedItem): item is PreparedChunk => 'features' in item;
/** A Qwen-VL image or video frame group: one grid per forward pass. */
const isPatches = (item: PreparedItem): item is PreparedPatches | QwenFrameGroup => 'patches' in item || 'framesU8' in item;

/** Forward-pass units an item takes: its tiles, one audio chunk, or one Qwen-VL image or frame group. */
const unitsOf = (item: PreparedItem): number => (isChunk(item) || isPatches(item) ? 1 : item.layout.numTiles);

/** LM rows an item's embeddings hold per DeepStack level. */
const tokensOf = (item: PreparedItem, tokensPerChunk: number): number =>
  isChunk(item) ? tokensPerChunk : isPatches(item) ? item.tokens : item.layout.numImageTokens;

interface Job {
  key: string;
  item: PreparedItem;
  resolve(m: EncodedMedia): void;
  reject(e: unknown): void;
}

/** An audio encoder's feature extractor and chunk identity. */
interface AudioSide {
  extractor: LogMelExtractor;
  chunkIdentity: string;
  clipChunkIdentity: string;
  tokensPerChunk: number;
}

interface Loaded {
  init: EncoderWorkerInit;
  forward: EncoderForward;
  /** The image processor's settings (an Idefics3 checkpoint). */
  processor?: ProcessorConfig;
  /**
   * A Qwen-VL checkpoint's image and video settings, the identity of its image embeddings, and of its video
   * frame groups and clips.
   */
  qwen?: {
    image: QwenImageProcessorConfig;
    identity: string;
    /** The identity of an image resized within a smaller pixel budget (a reduced-resolution retry), by budget. */
    reducedIdentity: (maxPixels: number) => Promise<string>;
    video: QwenVideoConfig;
    groupIdentity: string;
    clipIdentity: string;
  };
  /** The feature extractor (an audio checkpoint). */
  audio?: AudioSide;
  /** Identity digest per longest-edge setting (the default one, and reduced-resolution retries). */
  identities: Map<number, Promise<string>>;
  /** Video frames' and whole clips' identities (SmolVLM2 checkpoints only). */
  videoIdentities?: Promise<{ frame: string; clip: string }>;
}

export class EncoderCore implements EncoderWorkerApi {
  private loaded: Loaded | undefined;
  private readonly prepared = new Map<string, PreparedItem>();
  private readonly queue = new JobQueue<Job>((jobs) => this.runJobs(jobs));
  private readonly counters = { encodes: 0, batches: 0, tilesEncoded: 0, prepared: 0 };
  private readonly gate = new PieceGate();

  constructor(private readonly deps: EncoderCoreDeps) {}

  async init(init: EncoderWorkerInit): Promise<EncoderWorkerInfo> {
    if (this.loaded) throw new InternalError('EncoderCore.init called twice');
    const source = await this.deps.openModel(init.model);
    const forward = await this.startForward(init, source);
    try {
      const config = forward.config;
      const processor = config.vision ? await loadProcessorConfig(source) : undefined;
      const qwenImage = config.qwenVision
        ? parseQwenImageProcessorConfig(
            await requireJson(source, 'preprocessor_config.json', 'for the image processor (pixel budget, normalisation)'),
          )
        : undefined;
      const logMel = config.audio
        ? logMelConfigFrom(
            await requireJson(source, 'preprocessor_config.json', 'for the audio feature extractor (its log-mel settings)'),
            'preprocessor_config.json',
          )
        : undefined;
      this.loaded = { init, forward, processor, identities: new Map() };
      if (qwenImage && config.qwenVision) {
        const video = parseQwenVideoConfig(config.qwenVision.kind, qwenImage, await readJson(source, 'video_preprocessor_config.json'));
        const identity = (encoderConfig: Record<string, unknown>) =>
          encoderIdentity({ modelId: init.modelId, weights: forward.weightsDigest, dtype: forward.dtype, encoderConfig });
        const common = { vision: config.qwenVision, textHidden: config.text.hiddenSize };
        // A frame group's embeddings depend on its resized pixels (in its key), the normalisation and the tower.
        const { mean, std, rescaleFactor } = qwenImage;
        const groupIdentity = await identity({ kind: 'qwen-video-group', normalize: { mean, std, rescaleFactor }, ...common });
        const reduced = new Map<number, Promise<string>>();
        this.loaded.qwen = {
          image: qwenImage,
          identity: await identity({ kind: 'qwen-image', image: qwenImage, ...common }),
          reducedIdentity: (maxPixels) => {
            let id = reduced.get(maxPixels);
            if (!id) reduced.set(maxPixels, (id = identity({ kind: 'qwen-image', image: { ...qwenImage, maxPixels }, ...common })));
            return id;
          },
          video,
          groupIdentity,
          // Which frames a clip gives, and their pixels, depend on sampling, resizing and the decoder too.
          clipIdentity: await identity({
            kind: 'qwen-video-clip',
            groupIdentity,
            video,
            image: qwenImage,
            decoder: this.deps.videoBackend?.name ?? 'none',
          }),
        };
      }
      if (config.audio && logMel) {
        // The audio side loads only for an audio checkpoint (an image model's bundle does not carry the FFT).
        const { LogMelExtractor } = await import('../processor/audio/log-mel');
        const extractor = new LogMelExtractor(logMel);
        // A chunk keyed by its own PCM (per-chunk features) or by its window and the clip's floor (a chunk of
        // a whole-clip log-mel): two identities, so the two kinds of key never meet.
        const identity = (kind: string) =>
          encoderIdentity({
            modelId: init.modelId,
            weights: forward.weightsDigest,
            dtype: forward.dtype,
            encoderConfig: { kind, features: logMel, audio: config.audio, textHidden: config.text.hiddenSize },
          });
        const chunkIdentity = await identity('audio-chunk');
        const clipChunkIdentity = await identity('audio-chunk-of-clip');
        this.loaded.audio = { extractor, chunkIdentity, clipChunkIdentity, tokensPerChunk: config.audio.tokensPerChunk };
      }
      const qwen = this.loaded.qwen;
      return {
        identity: qwen ? qwen.identity : processor ? await this.identity(processor.image.longestEdge) : this.loaded.audio!.chunkIdentity,
        modality: processor || qwen ? 'vision' : 'audio',
        imageSeqLen: processor?.imageSeqLen ?? 0,
        audioTokensPerChunk: config.audio?.tokensPerChunk ?? 0,
        hiddenSize: config.text.hiddenSize,
        deepstackLevels: config.text.deepstackLayers ?? 0,
        backend: forward.backend,
        ...(forward.adapter ? { adapter: forward.adapter } : {}),
        ...(forward.deviceMemory ? { deviceMemory: forward.deviceMemory() } : {}),
      };
    } catch (e) {
      this.loaded = undefined;
      forward.destroy();
      throw e;
    }
  }

  private async startForward(init: EncoderWorkerInit, source: ModelSource): Promise<EncoderForward> {
    const backend = init.backend ?? 'webgpu';
    if (backend === 'webgpu') {
      return GpuEncoderForward.create(
        {
          createGpu: () => this.deps.createGpu(),
          releaseGpu: this.deps.releaseGpu ? (gpu) => this.deps.releaseGpu!(gpu) : undefined,
          openSource: async () => this.deps.openModel(init.model),
          weightStore: init.weightCache ? this.deps.openWeightStore?.(init.weightCache) : undefined,
        },
        init,
      );
    }
    if (!this.deps.loadOrt) throw new InternalError(`this encoder was started without onnxruntime, for a '${backend}' backend`);
    const rt = await this.deps.loadOrt(backend, init);
    const { OrtEncoderForward } = await import('./ort-forward');
    return OrtEncoderForward.create(rt, source, await readModelConfig(source), {
      dtype: resolveDtype(init.dtype).vision,
      maxBatch: Math.min(init.visionBatch ?? init.maxBatchTiles, init.maxBatchTiles),
      why: init.why,
    });
  }

  private get state(): Loaded {
    if (!this.loaded) throw new InternalError('the encoder was used before init()');
    return this.loaded;
  }

  /** The image processor's settings; ImageNotSupportedError for an audio checkpoint. */
  private vision(part: 'image' | 'video'): ProcessorConfig {
    const p = this.state.processor;
    if (!p) throw new ImageNotSupportedError(this.state.init.modelId, part);
    return p;
  }

  private imageConfig(longestEdge: number): ImageProcessorConfig {
    return { ...this.vision('image').image, longestEdge };
  }

  /** Everything an embedding depends on: the weights, dtype, and the encoder-relevant config at this resolution. */
  private identity(longestEdge: number): Promise<string> {
    const s = this.state;
    let id = s.identities.get(longestEdge);
    if (!id) {
      id = encoderIdentity({
        modelId: s.init.modelId,
        weights: s.forward.weightsDigest,
        dtype: s.forward.dtype,
        encoderConfig: {
          image: this.imageConfig(longestEdge),
          imageSeqLen: this.vision('image').imageSeqLen,
          vision: requireVision(s.forward.config),
          textHidden: s.forward.config.text.hiddenSize,
        },
      });
      s.identities.set(longestEdge, id);
    }
    return id;
  }

  async prepare(bytes: Uint8Array, options: PrepareOptions = {}): Promise<PreparedMedia> {
    const qwen = this.state.qwen;
    if (qwen) return this.prepareQwen(qwen, bytes, options.maxPixels);
    const processor = this.vision('image');
    const longestEdge = options.longestEdge ?? processor.image.longestEdge;
    const config = this.imageConfig(longestEdge);
    const key = await contentKey(await this.identity(longestEdge), bytes);
    const decoded = await this.deps.decodeImage(bytes, { shrinkTo: (size) => shrinkTarget(size, config) });
    const image = processImage(decoded, config, processor.imageSeqLen);
    this.prepared.set(key, image);
    this.counters.prepared++;
    return { key, layout: image.layout, numTokens: image.layout.numImageTokens };
  }

  /**
   * A Qwen-VL image: smart resize within the pixel budget (from the full decoded image: torchvision's
   * resize, not a decoder's downscale), normalise, patch rows. The budget is the checkpoint's max_pixels,
   * or `maxPixels` below it (a reduced-resolution retry; never below min_pixels), which the key then names.
   */
  private async prepareQwen(qwen: NonNullable<Loaded['qwen']>, bytes: Uint8Array, maxPixels?: number): Promise<PreparedMedia> {
    const budget =
      maxPixels !== undefined && maxPixels < qwen.image.maxPixels ? Math.max(qwen.image.minPixels, Math.floor(maxPixels)) : undefined;
    const key = await contentKey(budget === undefined ? qwen.identity : await qwen.reducedIdentity(budget), bytes);
    const config = budget === undefined ? qwen.image : { ...qwen.image, maxPixels: budget };
    const image = processQwenImage(await this.deps.decodeImage(bytes), config);
    this.prepared.set(key, { patches: image.patches, grid: image.grid, tokens: image.tokens });
    this.counters.prepared++;
    return { key, grid: image.grid, numTokens: image.tokens };
  }

  /** Frame identity: the embedding of a frame depends on its tile's pixels, the tower and the normalisation only. */
  private videoIdentities(): Promise<{ frame: string; clip: string }> {
    const s = this.state;
    const video = this.vision('video').video!;
    s.videoIdentities ??= (async () => {
      const frame = await encoderIdentity({
        modelId: s.init.modelId,
        dtype: s.forward.dtype,
        weights: s.forward.weightsDigest,
        encoderConfig: {
          kind: 'video-frame',
          tileSize: video.tileSize,
          normalize: video.normalize,
          imageSeqLen: this.vision('video').imageSeqLen,
          vision: requireVision(s.forward.config),
          textHidden: s.forward.config.text.hiddenSize,
        },
      });
      // The clip's frames (which, and their pixels) depend on sampling, resizing and the decoder too.
      const clip = await encoderIdentity({
        modelId: s.init.modelId,
        dtype: s.forward.dtype,
        weights: s.forward.weightsDigest,
        encoderConfig: { kind: 'video-clip', frame, video, decoder: this.deps.videoBackend?.name ?? 'none' },
      });
      return { frame, clip };
    })();
    return s.videoIdentities;
  }

  async prepareVideo(source: VideoSource, options?: PrepareVideoOptions): Promise<PreparedVideo> {
    const s = this.state;
    if (s.qwen) {
      const out = await prepareQwenVideo(
        {
          ...s.qwen,
          backend: this.deps.videoBackend,
          decodeImage: this.deps.decodeImage,
          ffmpegPath: s.init.ffmpegPath,
          keep: (key, group) => this.prepared.set(key, group),
          drop: (key) => this.prepared.delete(key),
        },
        source,
        options,
      );
      this.counters.prepared += out.frames.length;
      return out;
    }
    const processor = this.vision('video');
    const video = processor.video;
    if (!video) throw new VideoNotSupportedError(s.init.modelId);
    const ids = await this.videoIdentities();
    const out = await prepareVideo(
      {
        video,
        imageSeqLen: processor.imageSeqLen,
        frameIdentity: ids.frame,
        clipIdentity: ids.clip,
        backend: this.deps.videoBackend,
        decodeImage: this.deps.decodeImage,
        ffmpegPath: s.init.ffmpegPath,
        keep: (key, frame) => this.prepared.set(key, frame),
        drop: (key) => this.prepared.delete(key),
      },
      source,
      options,
    );
    this.counters.prepared += out.frames.length;
    return out;
  }

  async prepareAudio(source: AudioSource, options: PrepareAudioOptions): Promise<PreparedAudio> {
    const s = this.state;
    if (!s.audio) throw new AudioNotSupportedError(s.init.modelId);
    const { prepareAudio } = await import('./audio/prepare-audio');
    const out = await prepareAudio(
      {
        ...s.audio,
        decode: this.deps.decodeAudio?.(s.init.ffmpegPath),
        keep: (key, features) => this.prepared.set(key, { features }),
        drop: (key) => this.prepared.delete(key),
      },
      source,
      options,
    );
    this.counters.prepared += out.chunks.length;
    return out;
  }

  setPaced(paced: boolean): void {
    this.gate.setPaced(paced);
  }

  /** What the encoder holds and waits on now (a stall report's view). */
  waitState(): Record<string, unknown> {
    return { queuedJobs: this.queue.length, draining: this.queue.isDraining, prepared: this.prepared.size, gate: this.gate.state() };
  }

  grant(budgetMs: number): Promise<number> {
    return this.gate.grant(budgetMs);
  }

  async forget(key: string): Promise<void> {
    this.prepared.delete(key);
  }

  encode(key: string): Promise<EncodedMedia> {
    return this.encodeBatch([key]).then((r) => r[0]);
  }

  /**
   * Encode several prepared images together: their jobs join the queue in one go, so they share forward
   * passes (up to maxBatchTiles tiles per batch). Rejects, encoding none, if any key is not prepared.
   */
  encodeBatch(keys: readonly string[]): Promise<EncodedMedia[]> {
    const missing = keys.find((k) => !this.prepared.has(k));
    if (missing !== undefined) return Promise.reject(new MediaNotPreparedError(missing));
    const jobs = keys.map(
      (key) =>
        new Promise<EncodedMedia>((resolve, reject) => {
          const item = this.prepared.get(key)!;
          this.prepared.delete(key);
          this.queue.push({ key, item, resolve, reject });
        }),
    );
    return Promise.all(jobs);
  }

  /** Run batches (as the piece gate allows) until `jobs` is empty; a batch that fails fails its jobs alone. */
  private runJobs(jobs: Job[]): Promise<void> {
    return this.gate.run(async () => {
      while (jobs.length > 0) {
        let batch: Job[] = [];
        try {
          batch = this.takeBatch(jobs);
          await this.runBatch(batch);
        } catch (e) {
          if (batch.length === 0) batch = jobs.splice(0); // taking the batch failed (the encoder is gone)
          for (const j of batch) j.reject(e);
        }
      }
    });
  }

  private takeBatch(queue: Job[]): Job[] {
    const max = this.state.init.maxBatchTiles;
    const batch = [queue.shift()!];
    let units = unitsOf(batch[0].item);
    // One kind per batch (a checkpoint has one encoder, so in practice all jobs are of one kind); a Qwen-VL
    // image's pass is its own grid, so it runs alone.
    while (
      queue.length > 0 &&
      !isPatches(batch[0].item) &&
      isChunk(queue[0].item) === isChunk(batch[0].item) &&
      units + unitsOf(queue[0].item) <= max
    ) {
      const j = queue.shift()!;
      units += unitsOf(j.item);
      batch.push(j);
    }
    return batch;
  }

  /** The batch's forward-pass input: tiles' pixel values, or chunks' features, concatenated. */
  private batchInput(batch: Job[]): ForwardInput {
    const s = this.state;
    const units = batch.reduce((a, j) => a + unitsOf(j.item), 0);
    const concat = (parts: Float32Array[]) => {
      const out = new Float32Array(parts.reduce((a, p) => a + p.length, 0));
      let o = 0;
      for (const p of parts) {
        out.set(p, o);
        o += p.length;
      }
      return out;
    };
    const first = batch[0].item;
    if (isChunk(first)) {
      return { kind: 'chunks', features: concat(batch.map((j) => (j.item as PreparedChunk).features)), numChunks: units };
    }
    if (isPatches(first)) {
      if ('patches' in first) return { kind: 'patches', patches: first.patches, grid: first.grid };
      // A video's frame group, normalised now (kept as u8 until its encode).
      const image = s.qwen!.image;
      const frames = first.framesU8.map((rgb) => normalizeQwenRgb(rgb, image));
      return { kind: 'patches', patches: flattenPatches(frames, first.grid, patchGeometry(image)), grid: first.grid };
    }
    const video = s.processor?.video;
    const pixels = concat(
      batch.map((j) => {
        const image = j.item as PreparedTiles;
        const values = image.pixelValues ?? (video ? normalizeFrameTile(image.tilesU8, video) : undefined);
        if (!values) throw new InternalError(`prepared item ${j.key} has no pixel values`);
        return values;
      }),
    );
    return { kind: 'tiles', pixels, numTiles: units };
  }

  private async runBatch(batch: Job[]): Promise<void> {
    const s = this.state;
    const input = this.batchInput(batch);
    const t0 = performance.now();
    const all = await s.forward.run(input, this.gate);
    const encodeMs = performance.now() - t0;
    const deviceMemory = s.forward.deviceMemory?.();
    const memory = deviceMemory ? { deviceMemory } : {};
    const hidden = s.forward.config.text.hiddenSize;
    this.counters.batches++;
    this.counters.tilesEncoded += input.kind === 'tiles' ? input.numTiles : input.kind === 'chunks' ? input.numChunks : 1;
    // A batch of several items has no DeepStack levels (only a Qwen-VL image, always alone, has them).
    const rowsPer = batch.length === 1 ? all.length / hidden / tokensOf(batch[0].item, s.audio?.tokensPerChunk ?? 0) : 1;
    let row = 0;
    for (const j of batch) {
      const n = tokensOf(j.item, s.audio?.tokensPerChunk ?? 0);
      const embeddings = all.slice(row * hidden, (row + n * rowsPer) * hidden);
      row += n * rowsPer;
      this.counters.encodes++;
      j.resolve({ key: j.key, embeddings, numTokens: n, hiddenSize: hidden, encodeMs, batchImages: batch.length, ...memory });
    }
  }

  async stats(): Promise<EncoderWorkerStats> {
    return { ...this.counters, deviceRecoveries: this.loaded?.forward.deviceRecoveries ?? 0, queueDepth: this.queue.length };
  }

  destroy(): void {
    if (!this.loaded) return;
    this.loaded.forward.destroy();
    this.loaded = undefined;
  }
}
