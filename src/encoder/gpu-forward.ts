// The media encoder's forward pass on WebGPU: the checkpoint's vision tower (or audio encoder) on the
// encoder's own device, its pipelines compiled before the encoder reports ready. A batch that runs out of
// GPU memory is EncoderOutOfMemoryError (the engine may retry it at a reduced resolution); a lost device
// fails that batch, and the next one makes a new device and loads the weights again (they must not have
// changed on disk: the cache keys name the first ones).

import { EncoderOutOfMemoryError, InternalError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { ModelSource } from '../io/model-source';
import { loadEncoderModel } from '../families/load';
import type { LoadedEncoderModel } from '../model/load';
import type { WeightStore } from '../model/weights/store';
import type { EncoderDeviceMemory, EncoderWorkerInit } from '../protocol/encoder';
import type { EncoderForward, ForwardInput } from './encoder-forward';
import type { PatchGrid } from '../processor/smart-resize';
import type { PieceGate } from './piece-gate';
import { WeightsDigest } from './weights-digest';

export interface GpuForwardDeps {
  createGpu(): Promise<GpuContext>;
  /** Give the device back (default: destroy it; an in-process encoder sharing the engine's keeps it). */
  releaseGpu?(gpu: GpuContext): void;
  openSource(): Promise<ModelSource>;
  weightStore?: WeightStore;
}

export class GpuEncoderForward implements EncoderForward {
  readonly backend = 'webgpu';
  deviceRecoveries = 0;

  private constructor(
    private readonly deps: GpuForwardDeps,
    private readonly init: EncoderWorkerInit,
    private gpu: GpuContext,
    private model: LoadedEncoderModel,
    readonly weightsDigest: string,
  ) {}

  static async create(deps: GpuForwardDeps, init: EncoderWorkerInit): Promise<GpuEncoderForward> {
    const gpu = await deps.createGpu();
    try {
      const digest = new WeightsDigest();
      const model = await GpuEncoderForward.load(deps, init, gpu, digest);
      // Compiled before the encoder reports ready (the engine starts it beside its own warm-up), so the
      // first image does not wait seconds for pipelines on a CPU adapter.
      await (model.vision ?? model.audio ?? model.qwenVision)?.compile();
      return new GpuEncoderForward(deps, init, gpu, model, await digest.digest());
    } catch (e) {
      GpuEncoderForward.release(deps, gpu);
      throw e;
    }
  }

  private static async load(
    deps: GpuForwardDeps,
    init: EncoderWorkerInit,
    gpu: GpuContext,
    digest: WeightsDigest,
  ): Promise<LoadedEncoderModel> {
    const batch = Math.min(init.visionBatch ?? init.maxBatchTiles, init.maxBatchTiles);
    return loadEncoderModel(gpu, await deps.openSource(), {
      visionBatch: batch,
      audioBatch: batch,
      dispatchesPerSubmit: init.dispatchesPerSubmit,
      rowsPerPiece: init.rowsPerPiece,
      dtype: init.dtype,
      compute: init.compute,
      weightStore: deps.weightStore,
      tensorDigest: digest,
      partialFiles: init.partialFiles,
    });
  }

  private static release(deps: GpuForwardDeps, gpu: GpuContext): void {
    if (deps.releaseGpu) deps.releaseGpu(gpu);
    else gpu.destroy();
  }

  get config() {
    return this.model.config;
  }

  get adapter() {
    return this.gpu.adapter;
  }

  deviceMemory(): EncoderDeviceMemory {
    const m = this.gpu.memory.stats();
    return { bytesLive: m.bytesLive, peakBytes: m.peakBytes };
  }

  /** The encoder weights' storage (and f16 math): they change the embeddings, so they are part of every cache key. */
  get dtype(): string {
    const m = this.model;
    const part = m.config.audio ? m.weights.dtype.audio : m.weights.dtype.vision;
    return `${part}${this.init.compute === 'f16' ? '+compute-f16' : ''}`;
  }

  private async recoverDevice(): Promise<void> {
    if (!this.gpu.lostError) return;
    this.model.destroy();
    GpuEncoderForward.release(this.deps, this.gpu);
    const gpu = await this.deps.createGpu();
    const digest = new WeightsDigest();
    this.model = await GpuEncoderForward.load(this.deps, this.init, gpu, digest);
    this.gpu = gpu;
    if ((await digest.digest()) !== this.weightsDigest) {
      throw new InternalError("the checkpoint's encoder weights changed on disk while the engine ran; create a new engine");
    }
    this.deviceRecoveries++;
  }

  async run(input: ForwardInput, gate: PieceGate): Promise<Float32Array> {
    await this.recoverDevice();
    const { gpu, model } = this;
    const units = input.kind === 'tiles' ? input.numTiles : input.kind === 'chunks' ? input.numChunks : 1;
    gpu.device.pushErrorScope('out-of-memory');
    let out: Awaited<ReturnType<NonNullable<LoadedEncoderModel['vision']>['encode']>> | undefined;
    let rows: Float32Array | undefined;
    let failure: unknown;
    try {
      if (input.kind === 'patches') rows = await this.encodePatches(input.patches, input.grid, gate);
      else
        out =
          input.kind === 'chunks'
            ? await model.audio!.encode({ features: input.features, numChunks: input.numChunks }, { runner: gate })
            : await model.vision!.encode({ pixels: input.pixels, numTiles: input.numTiles }, { runner: gate });
    } catch (e) {
      failure = e;
    }
    const oom = await gpu.pending.track('popErrorScope (encoder out-of-memory)', gpu.device.popErrorScope()).catch(() => null);
    if (failure && (await gpu.lostWithin(250))) throw gpu.lostError;
    if (oom) {
      if (out) gpu.release(out.embeddings);
      const what =
        input.kind === 'patches'
          ? `an image of ${input.grid.t * input.grid.h * input.grid.w} patches (grid ${input.grid.t} x ${input.grid.h} x ${input.grid.w})`
          : undefined;
      throw new EncoderOutOfMemoryError(units, oom.message, what);
    }
    if (failure) throw failure;
    if (rows) return rows;
    const all = await gpu.readF32(out!.embeddings);
    gpu.release(out!.embeddings);
    return all;
  }

  /** A Qwen-VL image's rows, then its DeepStack levels' (Qwen3-VL), back to back. */
  private async encodePatches(patches: Float32Array, grid: PatchGrid, gate: PieceGate): Promise<Float32Array> {
    const tower = this.model.qwenVision;
    if (!tower) throw new InternalError(`${this.model.config.modelType}: patch rows reached an encoder without a Qwen-VL tower`);
    const { embeddings, deepstack } = await tower.encode(patches, grid, { runner: gate });
    if (deepstack.length === 0) return embeddings;
    const all = new Float32Array(embeddings.length * (1 + deepstack.length));
    for (const [i, level] of [embeddings, ...deepstack].entries()) all.set(level, i * embeddings.length);
    return all;
  }

  destroy(): void {
    this.model.destroy();
    GpuEncoderForward.release(this.deps, this.gpu);
  }
}
