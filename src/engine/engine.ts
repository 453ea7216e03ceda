// The engine: a loaded language model + processor + media encoder behind an OpenAI-style API, serving
// many requests at once through the scheduler (continuous batching).
//
//   create(req) ─► messages ─► intake: prepare images (key + layout, in a worker), plan the prompt (counts
//              before work), cache lookups                                           [concurrent]
//              ─► serve loop: scheduler.schedule() ─► encodes start under the encoder budget; the model
//                 runs every scheduled row of every request in one step ─► scheduler.update()
//              ─► streaming detokenizer ─► chunks
//
// A failed request fails alone: its KV blocks and cache references are released at once and the other
// requests continue. Cancellation (AbortSignal) takes a request out at the next step boundary, or at once
// while it waits.
//
// Device loss (docs/design.md invariant 8): the requests in flight fail with DeviceLostError; the next request
// recreates the GPU device, the language model and the scheduler (KV and prefix cache start empty) and
// answers. The encoder cache is kept; an in-process encoder (which shared the lost device) gets a new
// backend, encoder workers keep theirs (each has its own device).

import {
  BackendUnsupportedError,
  type DeviceLostError,
  EncoderOutOfMemoryError,
  EngineBusyError,
  InternalError,
  InvalidMessageError,
  InvalidRequestError,
  AudioNotSupportedError,
  RequestAbortedError,
  ImageNotSupportedError,
  UnsupportedModelError,
} from '../errors';
import type { EncodeBackend, LifecycleCounters, MediaEncoder } from '../encoder/media-encoder';
import type { GpuContext } from '../gpu/context';
import type { ModelSource } from '../io/model-source';
import { createBlockHasher } from '../kv/block-hash';
import type { FamilyProcessor } from '../families/family';
import { readModelConfig } from '../families/read-config';
import { familyOfConfig } from '../families/registry';
import type { ModelConfig } from '../model/config';
import { loadEncoderModelWithConfig, loadModelWithConfig } from '../model/load';
import type { OrtRuntime } from '../model/ort/ort-api';
import { resolveDtype } from '../model/weights/dtype';
import type { WeightStore } from '../model/weights/store';
import type { ImageDecoder } from '../processor/image-decode';
import { Idefics3Processor } from '../processor/processor';
import { QwenProcessor } from '../processor/qwen-processor';
import { VoxtralProcessor } from '../processor/voxtral-processor';
import { Scheduler } from '../scheduler/scheduler';
import { DEFAULT_DECODE_PRIORITY, EncoderPacing, type DecodePriority } from './encoder-pacing';
import type { EngineOptions } from './engine-options';
import type { DeviceChoice, EngineModel } from './engine-model';
import { EngineRequest, type Delta, type RunResult } from './engine-request';
import { tokenNames, type TokenNames } from '../processor/token-names';
import { ResponseGrammars } from './response-grammars';
import { chunksOf, completionOf } from './chat-response';
import { toolConstraint, toolReaderFor, toolSyntaxFor } from './request-tools';
import { engineStats } from './engine-stats';
import { newLifecycleCounters } from './standalone-encoder';
import { defaultEncoderBudget } from './encoder-budget';
import { type IntakeDeps, intake, type ReducedResolution, withoutImages } from './intake/intake';
import { imageEmbeddings, type MediaPreviewDeps, videoFrames } from './media-previews';
import { mediaPolicy, type MediaPolicy } from './intake/media-options';
import { toProcessorMessages } from './intake/message-images';
import { ServeLoop } from './serve-loop';
import { createWatched, servingSources, type StallSources, StallWatch } from './stall';
import { choiceRequest, collectChoices, streamChoices } from './choices';
import { validateRequest } from './intake/validate-request';
import { videoOptionsOf } from './intake/video-request';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionRequest,
  ChatCompletionsCreate,
  ChatRequestOptions,
  ChatVideoInput,
  EngineStats,
  ImageEmbeddingsResult,
  ProfileOptions,
  ProfileReport,
  TesseraInfo,
  Transcription,
  TranscriptionRequest,
  TranscriptionStreamEvent,
  VideoInfo,
} from './types';

export type { EngineOptions } from './engine-options';

export interface EngineDeps {
  /** The WebGPU device (absent when the CPU backend runs the model: then `cpu` is set). */
  gpu?: GpuContext;
  /** onnxruntime for the CPU backend (the checkpoint's ONNX graphs). */
  cpu?: OrtRuntime;
  /** Which backend was chosen and why (default: WebGPU, asked for). */
  device?: DeviceChoice;
  /** A new device after the engine's was lost (absent: the engine cannot recover; create a new one). */
  recreateGpu?: () => Promise<GpuContext>;
  /** A new encoder backend on the recreated device, when the encoder runs in-process on the engine's device. */
  restartInProcessEncoder?: (gpu: GpuContext) => Promise<EncodeBackend>;
  source: ModelSource;
  decodeImage: ImageDecoder;
  /** Starts the media encoder once the model is loaded (workers, or in-process on `gpu`). */
  startEncoder: (modelId: string, lifecycle: LifecycleCounters) => Promise<MediaEncoder>;
  /** Limits on a request's media and how image URLs are fetched (media-options.ts; defaults when absent). */
  media?: MediaPolicy;
  /** Destroy the GPU context with the engine (true when the engine created it). */
  ownsGpu?: boolean;
  /** Where stored quantized copies of the language model's checkpoint files are kept (none when unset). */
  weightStore?: WeightStore;
  /** What the browser's storage check found before the load (engine.stats().storage; none in Node). */
  storage?: import('../storage/check-storage').StorageCheck;
}

/** Default max_tokens of a transcription (a minute of speech is some 200 tokens). */
const DEFAULT_TRANSCRIPTION_TOKENS = 512;

/** Everything that lives on the engine's GPU device: rebuilt together after a device loss. */
interface Runtime {
  /** Absent on the CPU backend. */
  gpu?: GpuContext;
  model: EngineModel;
  scheduler: Scheduler;
  loop: ServeLoop;
}

export class Engine {
  readonly chat = {
    completions: {
      /** OpenAI's chat.completions.create: the request, and optionally the openai client's options ({ signal }). */
      create: ((req: ChatCompletionRequest, options?: ChatRequestOptions) => this.create(req, options)) as ChatCompletionsCreate,
    },
  };
  /** Transcriptions (OpenAI's audio.transcriptions), for audio checkpoints (Voxtral). */
  readonly audio = {
    transcriptions: {
      create: ((req: TranscriptionRequest) => this.transcribe(req)) as {
        (req: TranscriptionRequest & { stream: true }): Promise<AsyncIterable<TranscriptionStreamEvent>>;
        (req: TranscriptionRequest & { stream?: false }): Promise<Transcription>;
        (req: TranscriptionRequest): Promise<Transcription | AsyncIterable<TranscriptionStreamEvent>>;
      },
    },
  };
  private nextRequest = 1;
  private readonly counters = { requests: 0, failedRequests: 0, deviceLosses: 0, deviceRecoveries: 0 };
  private last: EngineStats['last'];
  private destroyed = false;
  private rt: Runtime;
  /** Set while the device is lost; the next request recreates the runtime. */
  private lost: DeviceLostError | undefined;
  private recovering: Promise<void> | undefined;
  /** Set while engine.profile() runs: requests wait for it before they reach the serve loop. */
  private profiling: Promise<unknown> | undefined;
  /** Tokens' texts and bytes for logprobs, made on the first request that asks. */
  private names: TokenNames | undefined;
  /** response_format's grammars, set up on the first request that asks for one. */
  private grammars: ResponseGrammars | undefined;
  private readonly intakeDeps: IntakeDeps;
  private readonly pacing: EncoderPacing;
  /** Limits on a request's media and how its URLs are fetched (defaults when the factory gave none). */
  private readonly mediaPolicy: MediaPolicy;
  /** What the engine waits on (waitState()), its stall watchdog (the engine option stallTimeoutMs), and the requests they watch. */
  private readonly waits: StallSources;
  private readonly stall: StallWatch | undefined;
  private activeRequests = 0;

  private constructor(
    private readonly deps: EngineDeps,
    private readonly options: EngineOptions,
    rt: Runtime,
    readonly processor: FamilyProcessor,
    readonly media: MediaEncoder,
    readonly lifecycle: LifecycleCounters,
    readonly modelId: string,
    decodePriority: DecodePriority | undefined,
  ) {
    this.pacing = new EncoderPacing(media, decodePriority);
    this.mediaPolicy = deps.media ?? mediaPolicy();
    this.rt = rt;
    this.waits = servingSources({
      activeRequests: () => this.activeRequests,
      gpuPending: () => this.rt.gpu?.pending,
      loop: () => this.rt.loop,
      media: () => this.media,
      failAll: (e) => this.rt.loop.failAll(e),
    });
    this.stall = options.stallTimeoutMs ? new StallWatch(options.stallTimeoutMs, this.waits) : undefined;
    this.intakeDeps = {
      processor,
      media,
      contextWindow: rt.scheduler.config.contextWindow,
      contextLimits: rt.scheduler.config.contextLimits,
      audioFeatures: this.mediaPolicy.audioFeatures,
    };
  }

  /** The loaded language model on the current device (or on onnxruntime: backend 'cpu' / 'wasm'). */
  get model(): EngineModel {
    return this.rt.model;
  }

  /** Which backend runs the model, and why. */
  get device(): DeviceChoice {
    return this.deps.device ?? { backend: 'webgpu', reason: 'WebGPU' };
  }

  get scheduler(): Scheduler {
    return this.rt.scheduler;
  }

  /** The GPU context the language model runs on now (a new one after a device loss); none on the CPU backend. */
  get gpu(): GpuContext {
    if (!this.rt.gpu) throw new BackendUnsupportedError(this.device.backend, 'a GPU context', "create the engine with device: 'webgpu'");
    return this.rt.gpu;
  }

  /**
   * What the engine is waiting on now: requests in flight, the serve loop's phase and requests, the encoder's
   * calls and pacing, the GPU operations not answered yet. For diagnosing a request that does not finish.
   */
  waitState(): unknown {
    return this.waits.state();
  }

  /** Tokens (prompt + max_tokens) one request may reach. */
  get contextWindow(): number {
    return this.rt.scheduler.config.contextWindow;
  }

  static async create(deps: EngineDeps, options: EngineOptions = {}): Promise<Engine> {
    return Engine.createAfter(async () => deps, options);
  }

  /**
   * An engine over what `setup` makes first (createEngine's device choice, storage check and encoder start
   * function), under the same stall watchdog as the build when options.stallTimeoutMs is set: a device
   * request that never answers fails as a stall too. `setup` reports its phases and progress through the
   * callbacks it is given, and frees what it made if it fails itself. A GPU device the deps own (ownsGpu) is
   * destroyed when creation fails, also one that setup hands over after the watchdog gave up.
   */
  static async createAfter(
    setup: (phase: (what: string) => void, onProgress: EngineOptions['onProgress']) => Promise<EngineDeps>,
    options: EngineOptions = {},
  ): Promise<Engine> {
    let deps: EngineDeps | undefined;
    let abandoned = false;
    const free = (d: EngineDeps | undefined) => {
      if (d?.ownsGpu) d.gpu?.destroy();
    };
    const run = async (phase: (what: string) => void, onProgress: EngineOptions['onProgress']) => {
      const made = await setup(phase, onProgress);
      if (abandoned) {
        free(made);
        throw new InternalError('engine creation was abandoned before its device was ready');
      }
      deps = made;
      phase('reading config.json');
      return Engine.build(made, { ...options, onProgress }, phase);
    };
    try {
      if (options.stallTimeoutMs === undefined) return await run(() => {}, options.onProgress);
      return await createWatched(
        options.stallTimeoutMs,
        () => deps?.gpu?.pending,
        options.onProgress,
        (onProgress, phase) => run(phase, onProgress),
      );
    } catch (e) {
      abandoned = true;
      free(deps);
      throw e;
    }
  }

  private static async build(deps: EngineDeps, options: EngineOptions, phase: (what: string) => void): Promise<Engine> {
    const onProgress = options.onProgress;
    const modelId = options.modelId ?? deps.source.where;
    const priority = options.decodePriority === false ? undefined : (options.decodePriority ?? DEFAULT_DECODE_PRIORITY);
    if (priority && !(priority.encoderShare > 0 && Number.isFinite(priority.encoderShare))) {
      throw new InvalidMessageError(`decodePriority.encoderShare must be a positive number, got ${priority.encoderShare}`);
    }
    const config = await readModelConfig(deps.source);
    phase('loading the tokenizer and processor');
    const processor = await familyOfConfig(config).loadProcessor(deps.source, config, { decodeImage: deps.decodeImage });
    phase('loading the language model');
    const model = await Engine.loadLanguageModel(deps, config, options);
    const lifecycle = newLifecycleCounters();
    phase('compiling the language model and starting the media encoder');
    // The language model's pipelines compile now, not in the first TTFT; the encoder starts beside it
    // (loading the vision tower and compiling its pipelines: on a CPU adapter both take seconds).
    const [warm, started] = await Promise.allSettled([
      model.runner.warmUp(onProgress ? (p) => onProgress({ phase: 'compile', ...p }) : undefined),
      deps.startEncoder(modelId, lifecycle),
    ]);
    if (warm.status === 'rejected' || started.status === 'rejected') {
      if (started.status === 'fulfilled') started.value.destroy();
      model.destroy();
      throw warm.status === 'rejected' ? warm.reason : (started as PromiseRejectedResult).reason;
    }
    const media: MediaEncoder = started.value;
    phase('starting the scheduler');
    let engine: Engine | undefined;
    // The runtime's loop calls back into the engine (encode failures, device loss), which exists by then.
    const rt = await Engine.runtime(deps.gpu, model, options, media, lifecycle, () => engine!);
    engine = new Engine(deps, options, rt, processor, media, lifecycle, modelId, priority);
    rt.loop.pacing = engine.pacing;
    onProgress?.({ phase: 'ready' });
    return engine;
  }

  /** The language model on the backend the factory chose (WebGPU, or onnxruntime for the CPU backend). */
  private static async loadLanguageModel(deps: EngineDeps, config: ModelConfig, options: EngineOptions): Promise<EngineModel> {
    const onProgress = options.onProgress;
    if (deps.cpu) {
      const { loadOrtModel } = await import('../model/ort/load-ort');
      return loadOrtModel(deps.cpu, deps.source, config, {
        ...options,
        dtype: resolveDtype(options.dtype).text,
        why: deps.device?.reason,
        onProgress: onProgress ? (p) => onProgress({ ...p }) : undefined,
      });
    }
    if (!deps.gpu) throw new InternalError('the engine was created with neither a GPU context nor onnxruntime');
    return loadModelWithConfig(deps.gpu, deps.source, config, {
      ...options,
      vision: false,
      weightStore: deps.weightStore,
      onProgress: onProgress ? (p) => onProgress({ ...p }) : undefined,
    });
  }

  /** Scheduler and serve loop over a loaded model. */
  private static async runtime(
    gpu: GpuContext | undefined,
    model: EngineModel,
    options: EngineOptions,
    media: MediaEncoder,
    lifecycle: LifecycleCounters,
    engine: () => Engine,
  ): Promise<Runtime> {
    const c = model.config;
    const scheduler = new Scheduler(
      {
        maxTokensPerStep: model.runner.limits.maxTokensPerStep,
        maxRunning: model.runner.limits.maxSeqs,
        encoderBudget: options.encoderBudget ?? defaultEncoderBudget(c),
        contextWindow: model.runner.limits.contextWindow,
        contextLimits: { modelPositions: model.runner.limits.modelPositions, kvCacheTokens: model.runner.limits.kvCacheTokens },
      },
      model.runner.kv,
      await createBlockHasher(),
      options.prefixCaching ?? true,
    );
    const loop = new ServeLoop({
      scheduler,
      runner: model.runner,
      media,
      lifecycle,
      onEncodeFailure: (r, error) => void engine().onEncodeFailure(r, error),
      onDeviceLost: (error) => engine().onDeviceLost(error),
    });
    return { gpu, model, scheduler, loop };
  }

  /** The device is gone: remember it; the next request rebuilds (requests in flight already failed). */
  private onDeviceLost(error: DeviceLostError): void {
    if (this.lost) return;
    this.lost = error;
    this.counters.deviceLosses++;
  }

  /** Recreate the device, the language model and the scheduler after a loss (once, shared by waiters). */
  private recover(): Promise<void> {
    this.recovering ??= (async () => {
      const old = this.rt;
      const lost = this.lost!;
      if (!this.deps.recreateGpu) throw lost;
      old.loop.failAll(lost);
      try {
        old.model.destroy();
      } catch {
        // the buffers went with the device
      }
      const gpu = await this.deps.recreateGpu();
      try {
        const model = await Engine.loadLanguageModel({ ...this.deps, gpu }, old.model.config, { ...this.options, onProgress: undefined });
        if (this.deps.restartInProcessEncoder) this.media.replaceBackend(await this.deps.restartInProcessEncoder(gpu));
        this.rt = await Engine.runtime(gpu, model, this.options, this.media, this.lifecycle, () => this);
        this.rt.loop.pacing = this.pacing;
      } catch (e) {
        gpu.destroy();
        throw e;
      }
      if (this.deps.ownsGpu) old.gpu?.destroy();
      this.lost = undefined;
      this.counters.deviceRecoveries++;
    })().finally(() => (this.recovering = undefined));
    return this.recovering;
  }

  /** True while the GPU device is lost and not yet recreated (the next request, or recoverDevice(), recreates it). */
  get deviceLost(): boolean {
    return this.lost !== undefined || this.rt.gpu?.lostError !== undefined;
  }

  /**
   * Recreate the GPU device and the language model now if the device was lost (a request does it itself
   * first; a server calls this to be ready before the next request). Resolves at once when nothing is lost.
   */
  recoverDevice(): Promise<void> {
    return this.ensureDevice();
  }

  /** Before a request: rebuild after a device loss, and notice a loss that happened while idle. */
  private async ensureDevice(): Promise<void> {
    if (!this.rt.gpu) return;
    const gone = this.rt.gpu.lostError;
    if (gone) this.onDeviceLost(gone);
    if (this.lost) await this.recover();
    this.rt.gpu!.assertAlive();
  }

  private create(req: ChatCompletionRequest, options?: ChatRequestOptions): Promise<ChatCompletion | AsyncIterable<ChatCompletionChunk>> {
    if (options?.signal && req && typeof req === 'object') {
      if (req.signal && req.signal !== options.signal) {
        return Promise.reject(
          new InvalidRequestError('signal', req.signal, "give the AbortSignal once: in the request or in create()'s options."),
        );
      }
      req = { ...req, signal: options.signal };
    }
    // As the openai client: a request aborted before it starts rejects, streamed or not (and counts as a
    // failed request, as one aborted later does).
    if (req?.signal?.aborted) {
      this.counters.requests++;
      this.counters.failedRequests++;
      return Promise.reject(new RequestAbortedError(req.signal.reason));
    }
    const n = req?.n ?? 1;
    if (typeof n === 'number' && n > 1) {
      try {
        validateRequest(req, this.mediaPolicy); // n itself, and every other field, before n requests start
      } catch (e) {
        this.counters.requests++;
        this.counters.failedRequests++;
        return Promise.reject(e);
      }
      const chunks = streamChoices(
        n,
        (i, signal) => this.stream({ ...choiceRequest(req, i, signal), stream: true }),
        req.signal,
        req.stream_options?.include_usage === true,
      );
      if (req.stream) return Promise.resolve(chunks);
      return collectChoices(n, chunks, req.logprobs === true).catch((e: unknown) => {
        // The choices' streams end quietly on the caller's abort; a non-streamed request rejects.
        throw req.signal?.aborted ? new RequestAbortedError(req.signal.reason) : e;
      });
    }
    if (req?.stream) return Promise.resolve(this.stream(req));
    return this.complete(req);
  }

  private complete(req: ChatCompletionRequest): Promise<ChatCompletion> {
    return completionOf(this.run(req), this.modelId, toolReaderFor(req, this.processor));
  }

  private stream(req: ChatCompletionRequest): AsyncGenerator<ChatCompletionChunk> {
    return chunksOf(req, this.run(req), this.modelId, toolReaderFor(req, this.processor));
  }

  private async transcribe(req: TranscriptionRequest): Promise<Transcription | AsyncIterable<TranscriptionStreamEvent>> {
    if (!req || typeof req !== 'object') throw new InvalidRequestError('the request', req, 'pass { file, language? }.');
    if (!(this.processor instanceof VoxtralProcessor)) throw new AudioNotSupportedError(this.processor.where);
    const chat: ChatCompletionRequest = {
      messages: [{ role: 'user', content: [{ type: 'audio', audio: req.file }] }],
      max_tokens: req.max_tokens ?? DEFAULT_TRANSCRIPTION_TOKENS,
      ...(req.temperature !== undefined ? { temperature: req.temperature } : {}),
      ...(req.seed !== undefined ? { seed: req.seed } : {}),
      ...(req.signal ? { signal: req.signal } : {}),
      tessera: { transcription: req.language !== undefined ? { language: req.language } : {} },
    };
    const usage = (info: TesseraInfo): Transcription['usage'] => ({
      type: 'tokens',
      input_tokens: info.promptTokens,
      output_tokens: info.tokenIds.length,
      total_tokens: info.promptTokens + info.tokenIds.length,
    });
    if (!req.stream) {
      const done = await this.complete(chat);
      return { text: done.choices[0].message.content, usage: usage(done.tessera), tessera: done.tessera };
    }
    const engine = this;
    return (async function* (): AsyncGenerator<TranscriptionStreamEvent> {
      const it = engine.run(chat);
      let text = '';
      try {
        for (;;) {
          const n = await it.next();
          if (n.done) {
            yield { type: 'transcript.text.done', text, usage: usage(n.value.info), tessera: n.value.info };
            return;
          }
          if (!n.value.text) continue;
          text += n.value.text;
          yield { type: 'transcript.text.delta', delta: n.value.text };
        }
      } catch (e) {
        if (e instanceof RequestAbortedError && req.signal?.aborted) return; // as a chat stream
        throw e;
      } finally {
        await it.return(undefined as never);
      }
    })();
  }

  private responseGrammars(): ResponseGrammars {
    this.grammars ??= new ResponseGrammars(this.processor.tokenizer, this.rt.model.runner.text.vocabSize, this.processor.stopTokenIds);
    return this.grammars;
  }

  private tokenNames(): TokenNames {
    this.names ??= tokenNames(this.processor.tokenizer);
    return this.names;
  }

  /** One request: yields text deltas, returns the finish reason and the request's numbers. */
  private async *run(req: ChatCompletionRequest): AsyncGenerator<Delta, RunResult> {
    if (this.destroyed) throw new InternalError('this engine was destroyed; create a new one');
    this.counters.requests++;
    this.stall?.poke(); // throws once the engine has stalled
    const guard = <T>(p: Promise<T>) => (this.stall ? this.stall.guard(p) : p);
    this.activeRequests++;
    const signal = req.signal;
    let r: EngineRequest | undefined;
    const onAbort = () => {
      if (r) this.rt.loop.drop(r, new RequestAbortedError(signal?.reason));
    };
    try {
      if (signal?.aborted) throw new RequestAbortedError(signal.reason);
      signal?.addEventListener('abort', onAbort, { once: true });
      const checked = validateRequest(req, this.mediaPolicy); // every field, every request, before any work
      const toolSyntax = toolSyntaxFor(req, checked, this.processor); // ToolsNotSupportedError before any work
      await guard(this.ensureDevice());
      const messages = await guard(toProcessorMessages(req.messages, this.mediaPolicy, signal));
      r = new EngineRequest(
        this.nextRequest++,
        req,
        checked,
        messages,
        new Set(this.processor.stopTokenIds),
        this.processor.createDetokenizer(),
        checked.logprobs !== undefined ? this.tokenNames() : undefined,
      );
      if (checked.responseFormat) {
        // Compiled (or found compiled) before any other work; disposed when r settles.
        r.constraint = await this.responseGrammars().constraint(checked.responseFormat);
        if (r.isSettled) r.constraint.dispose();
      } else if (checked.tools && toolSyntax) {
        r.constraint = await toolConstraint(checked.tools, toolSyntax, () => this.responseGrammars(), this.processor);
        if (r.isSettled) r.constraint?.dispose();
      }
      await guard(this.plan(r));
      while (this.profiling) await this.profiling.catch(() => {});
      if (!r.isSettled) this.rt.loop.submit(r);
      const result = yield* r.deltas();
      this.last = { ...result.info.timings, promptTokens: result.info.promptTokens, completionTokens: result.info.tokenIds.length };
      return result;
    } catch (e) {
      this.counters.failedRequests++;
      if (signal?.aborted && !(e instanceof RequestAbortedError)) throw new RequestAbortedError(signal.reason);
      throw e;
    } finally {
      this.activeRequests--;
      signal?.removeEventListener('abort', onAbort);
      if (r && !r.isSettled) this.rt.loop.drop(r, new RequestAbortedError('the caller stopped reading the stream'));
      if (r) this.forgetUnencoded(r);
    }
  }

  /**
   * A request that ended before its media were encoded (cancelled, failed, or its connection gone) lets go of
   * their prepared pixels or features in the encoder; one being encoded is consumed by its encode anyway.
   */
  private forgetUnencoded(r: EngineRequest): void {
    r.media.forEach((m, i) => {
      if (m.data === undefined && r.sched?.media[i]?.state !== 'encoding') this.media.forget(m.prepared);
    });
  }

  /** Intake for `r` (again after a retry): plan, media, cache hits. Settles r with the error on failure. */
  private async plan(r: EngineRequest, reduced?: ReducedResolution): Promise<void> {
    const t0 = performance.now();
    const messages = r.degraded ? withoutImages(r.messages) : r.messages;
    const transcription = r.request.tessera?.transcription;
    const planned = await intake(
      this.intakeDeps,
      messages,
      r.id,
      r.maxTokens,
      reduced,
      videoOptionsOf(r.request),
      transcription ? { transcription } : {},
      r.tools?.tools,
    );
    r.plan = planned.plan;
    r.media = planned.media;
    r.videos = planned.videos;
    r.audios = planned.audios;
    r.timings.processMs += performance.now() - t0;
    if (r.request.signal?.aborted) this.rt.loop.drop(r, new RequestAbortedError(r.request.signal.reason));
  }

  /**
   * The request's images one step down (message order; video frames stay as they are): half the longest
   * edge for Idefics3, a quarter of the pixels for a Qwen-VL image (never below min_pixels). Undefined when
   * none can go lower.
   */
  private reducedResolution(r: EngineRequest): ReducedResolution | undefined {
    const images = r.media.filter((m) => !m.video);
    if (this.processor instanceof Idefics3Processor) {
      const tile = this.processor.config.image.tileSize;
      const longestEdges = images.map((m) => Math.max(tile, Math.floor(m.longestEdge / 2 / tile) * tile));
      return longestEdges.some((e, i) => e < images[i].longestEdge) ? { longestEdges } : undefined;
    }
    if (this.processor instanceof QwenProcessor) {
      const { patchSize, minPixels } = this.processor.image;
      const pixels = images.map((m) => (m.prepared.grid ? m.prepared.grid.h * m.prepared.grid.w * patchSize ** 2 : 0));
      const maxPixels = pixels.map((p) => Math.max(minPixels, Math.floor(p / 4)));
      return maxPixels.some((b, i) => b < pixels[i]) ? { maxPixels } : undefined;
    }
    return undefined;
  }

  /**
   * An encode failed (docs/design.md invariant 8): a GPU out-of-memory with tessera.allowReducedResolution retries
   * once at half the longest edge (a Qwen-VL image: a quarter of its pixels); tessera.textOnlyFallback answers
   * without the images (flagged); else the request fails with the encoder's error.
   */
  private async onEncodeFailure(r: EngineRequest, error: unknown): Promise<void> {
    const opts = r.request.tessera ?? {};
    try {
      if (error instanceof RequestAbortedError || r.request.signal?.aborted) throw error;
      const reduced =
        error instanceof EncoderOutOfMemoryError && opts.allowReducedResolution && !r.retried ? this.reducedResolution(r) : undefined;
      if (reduced) {
        r.retried = true;
        this.rt.loop.withdraw(r);
        await this.plan(r, reduced);
        if (!r.isSettled) this.rt.loop.submit(r);
        return;
      }
      if (opts.textOnlyFallback && r.media.length > 0 && !r.degraded) {
        this.rt.loop.withdraw(r);
        r.degraded = 'text-only';
        this.media.release(r.id);
        await this.plan(r);
        if (!r.isSettled) this.rt.loop.submit(r);
        return;
      }
      throw error;
    } catch (e) {
      this.rt.loop.drop(r, e);
    }
  }

  /**
   * The embeddings a request's image part would splice, computed (or found in the encoder cache) without
   * asking anything: for a remote engine to send them as an image_embeds part (vLLM's format, with `key`
   * as its uuid), or for tools. `image` is the encoded bytes or a URL, as an image / image_url part takes.
   */
  async imageEmbeddings(image: Uint8Array | ArrayBuffer | Blob | string): Promise<ImageEmbeddingsResult> {
    if (this.destroyed) throw new InternalError('this engine was destroyed; create a new one');
    if (!(this.processor instanceof Idefics3Processor) && !(this.processor instanceof QwenProcessor)) {
      throw new ImageNotSupportedError(this.processor.where, 'image');
    }
    return imageEmbeddings({ media: this.media, policy: this.mediaPolicy, requestId: this.nextRequest++ }, image);
  }

  /**
   * Sample and decode a video exactly as a request would (the same frames, timestamps and frame keys),
   * without asking anything: for a page to show the sampled frames (thumbnailEdge px thumbnails) before or
   * beside an answer. With encode (the default) the frames are also encoded into the encoder cache, so a
   * question about the clip right after decodes and encodes nothing (its tessera.videos[i].source is
   * 'clip-cache'); that encode runs outside the scheduler's encoder budget. A Qwen-VL checkpoint's frames
   * are its groups of two sampled frames (one temporal patch each), the items its request splices.
   */
  async videoFrames(video: ChatVideoInput, options: { thumbnailEdge?: number; encode?: boolean } = {}): Promise<VideoInfo> {
    return videoFrames(this.previewDeps('video'), video, options);
  }

  /** What a video preview needs, for a checkpoint that takes images and is not destroyed. */
  private previewDeps(part: 'video'): MediaPreviewDeps {
    if (this.destroyed) throw new InternalError('this engine was destroyed; create a new one');
    const p = this.processor;
    const takesVideo = p instanceof QwenProcessor || (p instanceof Idefics3Processor && Boolean(p.config.video));
    if (!(p instanceof Idefics3Processor) && !(p instanceof QwenProcessor)) throw new ImageNotSupportedError(p.where, part);
    return { where: p.where, takesVideo, media: this.media, policy: this.mediaPolicy, requestId: this.nextRequest++ };
  }

  /**
   * GPU time per kernel kind (ms, share, GFLOP/s or GB/s, dispatches) for the vision pass of `image` (an
   * Idefics3 image's first tile; a Qwen-VL image whole), one prefill chunk of the prompt and one decode step, with every dispatch timed on its own: GPU timestamps
   * when the device has 'timestamp-query', else each dispatch submitted alone and timed on the CPU. The
   * report says which, and the step timestamps come in when they are quantized (in Node, create the engine
   * with gpu: { dawnOptions: [DAWN_EXACT_TIMESTAMPS] } from 'tessera/node' for exact ones). Runs on an idle
   * engine (EngineBusyError otherwise; requests that arrive meanwhile wait for it), loads the vision tower
   * onto the engine's device for the duration, and leaves the KV pool full again and the encoder cache
   * untouched (its scratch blocks take cached prefix blocks only when no other block is free, as any
   * request's would). Requests are not slowed when it is unused.
   */
  async profile(options: ProfileOptions = {}): Promise<ProfileReport> {
    if (this.destroyed) throw new InternalError('this engine was destroyed; create a new one');
    while (this.profiling) await this.profiling.catch(() => {});
    // Set before the first await, so that no request reaches the serve loop from here on.
    const run = (async () => {
      await this.ensureDevice();
      if (this.rt.loop.numRequests > 0) throw new EngineBusyError(this.rt.loop.numRequests);
      const { gpu, model } = this.rt;
      if (!gpu || model.backend !== 'webgpu') {
        throw new BackendUnsupportedError(this.device.backend, 'engine.profile() (GPU dispatch timings)', "profile with device: 'webgpu'");
      }
      const processor = this.processor;
      if (!(processor instanceof Idefics3Processor) && !(processor instanceof QwenProcessor)) {
        throw new UnsupportedModelError(
          `engine.profile() profiles vision checkpoints (an image's vision pass, a prefill chunk, a decode step); ${processor.where} is an audio checkpoint`,
        );
      }
      // Loaded when asked for: an app that never profiles does not ship it in its first chunk.
      const { profileModel } = await import('./profile');
      return profileModel(
        {
          gpu,
          model,
          processor,
          mediaPolicy: this.mediaPolicy,
          decodeImage: this.deps.decodeImage,
          loadVision: () =>
            loadEncoderModelWithConfig(gpu, this.deps.source, model.config, {
              dtype: this.options.dtype,
              compute: this.options.compute,
              weightStore: this.deps.weightStore,
              visionBatch: 1,
            }),
        },
        options,
      );
    })();
    this.profiling = run;
    try {
      return await run;
    } finally {
      this.profiling = undefined;
    }
  }

  /** Inspect and clear the encoder cache (memory + persistent tiers). */
  readonly encoderCache = {
    inspect: () => this.media.inspect(),
    clear: () => this.media.clear(),
  };

  stats(): EngineStats {
    return engineStats({
      counters: this.counters,
      gpu: this.rt.gpu,
      device: this.device,
      model: this.rt.model,
      scheduler: this.rt.scheduler,
      history: this.rt.loop.history,
      media: this.media,
      lifecycle: this.lifecycle,
      last: this.last,
      pacing: this.pacing,
      storage: this.deps.storage,
    });
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.stall?.stop();
    this.rt.loop.failAll(new InternalError('the engine was destroyed while this request ran'));
    this.media.destroy();
    this.grammars?.destroy();
    this.rt.model.destroy();
    if (this.deps.ownsGpu) this.rt.gpu?.destroy();
  }
}
