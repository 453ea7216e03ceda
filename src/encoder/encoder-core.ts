// The media encoder itself: hash, decode, tile and encode images with its own GPUDevice and the vision
// weights. It runs inside an encoder worker (workers/encoder.worker.ts wires it to comlink) or, with the
// same code, on the calling thread. Encodes of different requests are batched into one forward pass.
//
//   prepare(bytes) -> key = blake3(identity ‖ bytes); decode; resize; tile   (pixels kept until encode)
//   encode(key)    -> waits for the next batch: jobs' tiles concatenated up to maxBatchTiles, one
//                     vision forward pass, outputs read back and split per job
//   prepareVideo   -> video/prepare-video.ts: sampled frames become prepared one-tile items keyed by their
//                     pixels; they keep u8 tiles only (normalised when their batch runs: a 64-frame clip at
//                     512 px is 50 MB of u8, 200 MB as f32)

import { contentKey, encoderIdentity } from '../cache/content-key';
import { EncoderOutOfMemoryError, InternalError, MediaNotPreparedError, VideoNotSupportedError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { ModelSource } from '../io/model-source';
import { loadVisionModel, type LoadedVisionModel } from '../model/load';
import { requireVision } from '../model/config';
import type { WeightStore } from '../model/weights/store';
import type {
  EncodedMedia,
  EncoderWorkerApi,
  EncoderWorkerInfo,
  EncoderWorkerInit,
  EncoderWorkerStats,
  ModelRef,
  PrepareOptions,
  WeightCacheRef,
  PreparedMedia,
  PreparedVideo,
  PrepareVideoOptions,
  VideoSource,
} from '../protocol/encoder';
import type { ImageDecoder } from '../processor/image-decode';
import type { ImageLayout } from '../processor/image-layout';
import { PieceGate } from './piece-gate';
import { processImage, shrinkTarget } from '../processor/image-processor';
import { loadProcessorConfig, type ImageProcessorConfig, type ProcessorConfig } from '../processor/processor-config';
import { normalizeFrameTile } from '../processor/video-frames';
import { prepareVideo } from './video/prepare-video';
import type { VideoBackend } from './video/video-backend';
import { WeightsDigest } from './weights-digest';

export interface EncoderCoreDeps {
  createGpu(): Promise<GpuContext>;
  /** Give the device back (default: destroy it; an in-process encoder sharing the engine's keeps it). */
  releaseGpu?(gpu: GpuContext): void;
  openModel(ref: ModelRef): ModelSource;
  decodeImage: ImageDecoder;
  /** Opens the weight store a worker init names (stored quantized copies); none when absent. */
  openWeightStore?(ref: WeightCacheRef): WeightStore | undefined;
  /** Decodes video clips (WebCodecs in a browser, ffmpeg/sharp in Node); absent: frame lists only. */
  videoBackend?: VideoBackend;
}

/** Pixels kept between prepare and encode: an image's tiles (normalised already) or a video frame's (u8 only). */
interface PreparedTiles {
  layout: ImageLayout;
  tilesU8: Uint8Array;
  /** [numTiles, 3, T, T] f32; absent for video frames, which are normalised when their batch runs. */
  pixelValues?: Float32Array;
}

interface Job {
  key: string;
  image: PreparedTiles;
  resolve(m: EncodedMedia): void;
  reject(e: unknown): void;
}

interface Loaded {
  init: EncoderWorkerInit;
  gpu: GpuContext;
  model: LoadedVisionModel;
  processor: ProcessorConfig;
  /** Digest of the vision and connector tensors (weights-digest.ts). */
  weightsDigest: string;
  /** Identity digest per longest-edge setting (the default one, and reduced-resolution retries). */
  identities: Map<number, Promise<string>>;
  /** Video frames' and whole clips' identities (SmolVLM2 checkpoints only). */
  videoIdentities?: Promise<{ frame: string; clip: string }>;
}

export class EncoderCore implements EncoderWorkerApi {
  private loaded: Loaded | undefined;
  private readonly prepared = new Map<string, PreparedTiles>();
  private readonly queue: Job[] = [];
  private draining = false;
  private readonly counters = { encodes: 0, batches: 0, tilesEncoded: 0, prepared: 0, deviceRecoveries: 0 };
  private readonly gate = new PieceGate();

  constructor(private readonly deps: EncoderCoreDeps) {}

  async init(init: EncoderWorkerInit): Promise<EncoderWorkerInfo> {
    if (this.loaded) throw new InternalError('EncoderCore.init called twice');
    const source = this.deps.openModel(init.model);
    const gpu = await this.deps.createGpu();
    try {
      const processor = await loadProcessorConfig(source);
      const weights = new WeightsDigest();
      const model = await this.loadModel(gpu, source, init, weights);
      // Compiled before the encoder reports ready (the engine starts it beside its own warm-up), so the
      // first image does not wait seconds for pipelines on a CPU adapter.
      await model.vision.compile();
      this.loaded = { init, gpu, model, processor, weightsDigest: await weights.digest(), identities: new Map() };
      return {
        identity: await this.identity(processor.image.longestEdge),
        imageSeqLen: processor.imageSeqLen,
        hiddenSize: model.config.text.hiddenSize,
        adapter: gpu.adapter,
      };
    } catch (e) {
      this.releaseGpu(gpu);
      throw e;
    }
  }

  private releaseGpu(gpu: GpuContext): void {
    if (this.deps.releaseGpu) this.deps.releaseGpu(gpu);
    else gpu.destroy();
  }

  private get state(): Loaded {
    if (!this.loaded) throw new InternalError('the encoder was used before init()');
    return this.loaded;
  }

  private imageConfig(longestEdge: number): ImageProcessorConfig {
    return { ...this.state.processor.image, longestEdge };
  }

  /** Everything an embedding depends on: the weights, dtype, and the encoder-relevant config at this resolution. */
  private identity(longestEdge: number): Promise<string> {
    const s = this.state;
    let id = s.identities.get(longestEdge);
    if (!id) {
      id = encoderIdentity({
        modelId: s.init.modelId,
        weights: s.weightsDigest,
        dtype: this.weightsDtype(),
        encoderConfig: {
          image: this.imageConfig(longestEdge),
          imageSeqLen: s.processor.imageSeqLen,
          vision: requireVision(s.model.config),
          textHidden: s.model.config.text.hiddenSize,
        },
      });
      s.identities.set(longestEdge, id);
    }
    return id;
  }

  async prepare(bytes: Uint8Array, options: PrepareOptions = {}): Promise<PreparedMedia> {
    const s = this.state;
    const longestEdge = options.longestEdge ?? s.processor.image.longestEdge;
    const config = this.imageConfig(longestEdge);
    const key = await contentKey(await this.identity(longestEdge), bytes);
    const decoded = await this.deps.decodeImage(bytes, { shrinkTo: (size) => shrinkTarget(size, config) });
    const image = processImage(decoded, config, s.processor.imageSeqLen);
    this.prepared.set(key, image);
    this.counters.prepared++;
    return { key, layout: image.layout, numTokens: image.layout.numImageTokens };
  }

  /** Frame identity: the embedding of a frame depends on its tile's pixels, the tower and the normalisation only. */
  private videoIdentities(): Promise<{ frame: string; clip: string }> {
    const s = this.state;
    const video = s.processor.video!;
    s.videoIdentities ??= (async () => {
      const frame = await encoderIdentity({
        modelId: s.init.modelId,
        dtype: this.weightsDtype(),
        weights: s.weightsDigest,
        encoderConfig: {
          kind: 'video-frame',
          tileSize: video.tileSize,
          normalize: video.normalize,
          imageSeqLen: s.processor.imageSeqLen,
          vision: requireVision(s.model.config),
          textHidden: s.model.config.text.hiddenSize,
        },
      });
      // The clip's frames (which, and their pixels) depend on sampling, resizing and the decoder too.
      const clip = await encoderIdentity({
        modelId: s.init.modelId,
        dtype: this.weightsDtype(),
        weights: s.weightsDigest,
        encoderConfig: { kind: 'video-clip', frame, video, decoder: this.deps.videoBackend?.name ?? 'none' },
      });
      return { frame, clip };
    })();
    return s.videoIdentities;
  }

  async prepareVideo(source: VideoSource, options?: PrepareVideoOptions): Promise<PreparedVideo> {
    const s = this.state;
    const video = s.processor.video;
    if (!video) throw new VideoNotSupportedError(s.init.modelId);
    const ids = await this.videoIdentities();
    const out = await prepareVideo(
      {
        video,
        imageSeqLen: s.processor.imageSeqLen,
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

  setPaced(paced: boolean): void {
    this.gate.setPaced(paced);
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
          const image = this.prepared.get(key)!;
          this.prepared.delete(key);
          this.queue.push({ key, image, resolve, reject });
        }),
    );
    if (!this.draining) void this.drain();
    return Promise.all(jobs);
  }

  /** Run batches until the queue is empty. Jobs queued while a batch runs join the next one. */
  private async drain(): Promise<void> {
    this.draining = true;
    try {
      // Let encodes sent in the same tick (other requests) join this batch.
      await new Promise((r) => setTimeout(r, 0));
      await this.gate.run(async () => {
        while (this.queue.length > 0) {
          const batch = this.takeBatch();
          try {
            await this.runBatch(batch);
          } catch (e) {
            for (const j of batch) j.reject(e);
          }
        }
      });
    } finally {
      this.draining = false;
    }
  }

  private takeBatch(): Job[] {
    const max = this.state.init.maxBatchTiles;
    const batch = [this.queue.shift()!];
    let tiles = batch[0].image.layout.numTiles;
    while (this.queue.length > 0 && tiles + this.queue[0].image.layout.numTiles <= max) {
      const j = this.queue.shift()!;
      tiles += j.image.layout.numTiles;
      batch.push(j);
    }
    return batch;
  }

  /**
   * This encoder's own device was lost (a driver reset, or destroy()): make a new one and load the vision
   * weights again; the prepared pixels and the identity stay. The batch that met the loss has failed.
   */
  private loadModel(gpu: GpuContext, source: ModelSource, init: EncoderWorkerInit, digest: WeightsDigest): Promise<LoadedVisionModel> {
    return loadVisionModel(gpu, source, {
      visionBatch: Math.min(init.visionBatch ?? init.maxBatchTiles, init.maxBatchTiles),
      dispatchesPerSubmit: init.dispatchesPerSubmit,
      rowsPerPiece: init.rowsPerPiece,
      dtype: init.dtype,
      compute: init.compute,
      weightStore: init.weightCache ? this.deps.openWeightStore?.(init.weightCache) : undefined,
      tensorDigest: digest,
    });
  }

  /** The vision weights' storage (and f16 math): they change the embeddings, so they are part of every cache key. */
  private weightsDtype(): string {
    const s = this.state;
    return `${s.model.weights.dtype.vision}${s.init.compute === 'f16' ? '+compute-f16' : ''}`;
  }

  private async recoverDevice(): Promise<void> {
    const s = this.state;
    if (!s.gpu.lostError) return;
    s.model.destroy();
    this.releaseGpu(s.gpu);
    const gpu = await this.deps.createGpu();
    const weights = new WeightsDigest();
    s.model = await this.loadModel(gpu, this.deps.openModel(s.init.model), s.init, weights);
    s.gpu = gpu;
    // The cache keys name the weights loaded first; different weights now would be served under them.
    if ((await weights.digest()) !== s.weightsDigest) {
      throw new InternalError("the checkpoint's vision weights changed on disk while the engine ran; create a new engine");
    }
    this.counters.deviceRecoveries++;
  }

  private async runBatch(batch: Job[]): Promise<void> {
    await this.recoverDevice();
    const s = this.state;
    const numTiles = batch.reduce((a, j) => a + j.image.layout.numTiles, 0);
    const video = s.processor.video;
    const pixels = new Float32Array(batch.reduce((a, j) => a + j.image.tilesU8.length, 0));
    let o = 0;
    for (const j of batch) {
      const values = j.image.pixelValues ?? (video ? normalizeFrameTile(j.image.tilesU8, video) : undefined);
      if (!values) throw new InternalError(`prepared item ${j.key} has no pixel values`);
      pixels.set(values, o);
      o += values.length;
    }
    const t0 = performance.now();
    s.gpu.device.pushErrorScope('out-of-memory');
    let out: Awaited<ReturnType<LoadedVisionModel['vision']['encode']>> | undefined;
    let failure: unknown;
    try {
      out = await s.model.vision.encode({ pixels, numTiles }, { runner: this.gate });
    } catch (e) {
      failure = e;
    }
    const oom = await s.gpu.device.popErrorScope().catch(() => null);
    if (failure && (await s.gpu.lostWithin(250))) throw s.gpu.lostError;
    if (oom) {
      if (out) s.gpu.release(out.embeddings);
      throw new EncoderOutOfMemoryError(numTiles, oom.message);
    }
    if (failure) throw failure;
    const all = await s.gpu.readF32(out!.embeddings);
    s.gpu.release(out!.embeddings);
    const encodeMs = performance.now() - t0;
    const hidden = s.model.config.text.hiddenSize;
    this.counters.batches++;
    this.counters.tilesEncoded += numTiles;
    let row = 0;
    for (const j of batch) {
      const n = j.image.layout.numImageTokens;
      const embeddings = all.slice(row * hidden, (row + n) * hidden);
      row += n;
      this.counters.encodes++;
      j.resolve({ key: j.key, embeddings, numTokens: n, hiddenSize: hidden, encodeMs, batchImages: batch.length });
    }
  }

  async stats(): Promise<EncoderWorkerStats> {
    return { ...this.counters, queueDepth: this.queue.length };
  }

  destroy(): void {
    if (!this.loaded) return;
    this.loaded.model.destroy();
    this.releaseGpu(this.loaded.gpu);
    this.loaded = undefined;
  }
}
