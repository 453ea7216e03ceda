// The engine: a loaded language model + processor + media encoder behind an OpenAI-style API.
//
//   request ─► images: prepare in the encoder (hash, decode, tile: key + layout)          [worker]
//           ─► prompt plan from the layouts (token counts before any encoding)            [here]
//           ─► embeddings: memory cache / persistent cache / encode in a worker           [worker]
//   ─ lock ─► upload embeddings (STAGED) ─► chunked prefill with them spliced in (SPLICED,
//             PREFILLED) ─► decode ─► streaming detokenizer ─► chunks ─► released        [GPU here]
//
// Everything before the lock runs concurrently with other requests' decoding: while one request decodes,
// the next one's images are hashed and encoded in the workers. Requests then prefill and decode one at a
// time (a later scheduler batches them). A failed request fails alone: its KV blocks, GPU tensors and
// cache references are released, and the next request runs normally.

import { InternalError, RequestAbortedError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import type { ModelSource } from '../io/model-source';
import type { LifecycleCounters, MediaEncoder } from '../encoder/media-encoder';
import { generate, type GenerateTimings } from '../model/generate';
import { loadModel, type LoadedModel, type LoadModelOptions } from '../model/load';
import type { PreparedMedia } from '../protocol/encoder';
import type { ChatMessage } from '../processor/messages';
import { Idefics3Processor } from '../processor/processor';
import type { ImageDecoder } from '../processor/image-decode';
import { mediaPolicy, type MediaPolicy } from './media-options';
import { toProcessorMessages } from './message-images';
import { planMedia, type PlannedRequest } from './plan-media';
import { validateRequest } from './validate-request';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionRequest,
  EngineProgress,
  EngineStats,
  FinishReason,
  RequestTimings,
  TesseraInfo,
} from './types';

export interface EngineOptions extends Omit<LoadModelOptions, 'onProgress' | 'vision'> {
  onProgress?: (p: EngineProgress) => void;
  /** Name reported in responses and used in cache keys (default: the source's location). */
  modelId?: string;
}

export interface EngineDeps {
  gpu: GpuContext;
  source: ModelSource;
  decodeImage: ImageDecoder;
  /** Starts the media encoder once the model is loaded (workers, or in-process on `gpu`). */
  startEncoder: (modelId: string, lifecycle: LifecycleCounters) => Promise<MediaEncoder>;
  /** Limits on a request's media and how image URLs are fetched (media-options.ts; defaults when absent). */
  media?: MediaPolicy;
  /** Destroy the GPU context with the engine (true when the engine created it). */
  ownsGpu?: boolean;
}

interface Piece {
  delta: string;
}

interface RunResult {
  finishReason: FinishReason;
  info: TesseraInfo;
  text: string;
}

export class Engine {
  readonly chat = {
    completions: {
      create: ((req: ChatCompletionRequest) => this.create(req)) as {
        (req: ChatCompletionRequest & { stream: true }): Promise<AsyncIterable<ChatCompletionChunk>>;
        (req: ChatCompletionRequest & { stream?: false }): Promise<ChatCompletion>;
        (req: ChatCompletionRequest): Promise<ChatCompletion | AsyncIterable<ChatCompletionChunk>>;
      },
    },
  };
  private queue: Promise<unknown> = Promise.resolve();
  private nextRequest = 1;
  private counters = { requests: 0, failedRequests: 0 };
  private last: EngineStats['last'];
  private destroyed = false;

  private constructor(
    private readonly deps: EngineDeps,
    readonly model: LoadedModel,
    readonly processor: Idefics3Processor,
    readonly media: MediaEncoder,
    readonly lifecycle: LifecycleCounters,
    readonly modelId: string,
  ) {}

  static async create(deps: EngineDeps, options: EngineOptions = {}): Promise<Engine> {
    const onProgress = options.onProgress;
    const modelId = options.modelId ?? deps.source.where;
    const processor = await Idefics3Processor.load(deps.source, { decodeImage: deps.decodeImage });
    const model = await loadModel(deps.gpu, deps.source, {
      ...options,
      vision: false,
      onProgress: onProgress ? (p) => onProgress({ ...p }) : undefined,
    });
    const lifecycle: LifecycleCounters = { encoding: 0, ready: 0, staged: 0, spliced: 0, prefilled: 0, released: 0 };
    let media: MediaEncoder;
    try {
      media = await deps.startEncoder(modelId, lifecycle);
    } catch (e) {
      model.destroy();
      throw e;
    }
    onProgress?.({ phase: 'ready' });
    return new Engine(deps, model, processor, media, lifecycle, modelId);
  }

  private create(req: ChatCompletionRequest): Promise<ChatCompletion | AsyncIterable<ChatCompletionChunk>> {
    if (req.stream) return Promise.resolve(this.stream(req));
    return this.complete(req);
  }

  private async complete(req: ChatCompletionRequest): Promise<ChatCompletion> {
    // The detokenizer's text is the answer; the deltas only matter to streams.
    const it = this.run(req);
    let n = await it.next();
    while (!n.done) n = await it.next();
    const result = n.value;
    const info = result.info;
    return {
      id: `tessera-${Date.now().toString(36)}`,
      object: 'chat.completion',
      created: Math.floor(Date.now() / 1000),
      model: this.modelId,
      choices: [{ index: 0, message: { role: 'assistant', content: result.text }, finish_reason: result.finishReason }],
      usage: {
        prompt_tokens: info.promptTokens,
        completion_tokens: info.tokenIds.length,
        total_tokens: info.promptTokens + info.tokenIds.length,
      },
      tessera: info,
    };
  }

  private async *stream(req: ChatCompletionRequest): AsyncGenerator<ChatCompletionChunk> {
    const id = `tessera-${Date.now().toString(36)}`;
    const created = Math.floor(Date.now() / 1000);
    const chunk = (delta: ChatCompletionChunk['choices'][0]['delta'], finish: FinishReason | null, info?: TesseraInfo): ChatCompletionChunk => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model: this.modelId,
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...(info ? { tessera: info } : {}),
    });
    yield chunk({ role: 'assistant' }, null);
    const it = this.run(req);
    try {
      for (;;) {
        const n = await it.next();
        if (n.done) {
          yield chunk({}, n.value.finishReason, n.value.info);
          return;
        }
        if (n.value.delta) yield chunk({ content: n.value.delta }, null);
      }
    } finally {
      await it.return(undefined as never); // an abandoned stream releases its request at once
    }
  }

  /** Wait for the decode lock; resolves with its release. */
  private async acquire(): Promise<() => void> {
    let release!: () => void;
    const turn = this.queue;
    this.queue = new Promise<void>((r) => (release = r));
    await turn;
    return release;
  }

  /** One request: yields text deltas, returns the finish reason and the request's numbers. */
  private async *run(req: ChatCompletionRequest): AsyncGenerator<Piece, RunResult> {
    if (this.destroyed) throw new InternalError('this engine was destroyed; create a new one');
    this.deps.gpu.assertAlive();
    this.counters.requests++;
    const requestId = this.nextRequest++;
    const t0 = performance.now();
    let staged: Tensor | undefined;
    let release: (() => void) | undefined;
    try {
      const policy = this.deps.media ?? mediaPolicy();
      const { maxTokens } = validateRequest(req, policy); // every field, every request
      const messages = await toProcessorMessages(req.messages, policy, req.signal);
      // Images -> keys, layouts, plan, embeddings: concurrent with other requests' decoding.
      const planned = await planMedia(this, messages, requestId, req, maxTokens);
      const processMs = planned.processMs;
      const encodeMs = planned.encodeMs;

      release = await this.acquire();
      if (req.signal?.aborted) throw new RequestAbortedError(req.signal.reason);
      staged = this.stage(planned);
      return yield* this.decode(planned, staged, req, maxTokens, t0, { processMs, encodeMs });
    } catch (e) {
      this.counters.failedRequests++;
      if (req.signal?.aborted && !(e instanceof RequestAbortedError)) throw new RequestAbortedError(req.signal.reason);
      throw e;
    } finally {
      if (staged) this.deps.gpu.release(staged);
      this.media.release(requestId);
      if (staged) this.lifecycle.released += 1;
      release?.();
    }
  }

  /** Upload the request's media embeddings, in placeholder order, into one GPU tensor (STAGED). */
  private stage(planned: PlannedRequest): Tensor | undefined {
    const rows = planned.embeddings.reduce((a, e) => a + e.length, 0) / this.model.config.text.hiddenSize;
    if (rows === 0) return undefined;
    const t = this.deps.gpu.createTensor([rows, this.model.config.text.hiddenSize], 'f32', 'staged-media');
    let offset = 0;
    for (const e of planned.embeddings) {
      this.deps.gpu.device.queue.writeBuffer(t.buffer, offset, e.buffer, e.byteOffset, e.byteLength);
      offset += e.byteLength;
    }
    this.lifecycle.staged += 1;
    return t;
  }

  private async *decode(
    planned: PlannedRequest,
    staged: Tensor | undefined,
    req: ChatCompletionRequest,
    maxTokens: number,
    t0: number,
    before: { processMs: number; encodeMs: number },
  ): AsyncGenerator<Piece, RunResult> {
    const { model, processor } = this;
    const plan = planned.plan;
    const sampling =
      req.temperature && req.temperature > 0
        ? { temperature: req.temperature, topK: req.top_k ?? 0, topP: req.top_p ?? 1, seed: req.seed ?? 0 }
        : undefined;
    const timings: GenerateTimings = { prefillMs: 0, numPrefillChunks: 0, decodeStepMs: [], decodeStepEnd: [] };
    const detok = processor.createDetokenizer();
    const stopIds = new Set(processor.stopTokenIds);
    const tokenIds: number[] = [];
    let ttftMs = 0;
    let finishReason: FinishReason = 'length';
    for await (const id of generate(
      model.lm,
      model.kv,
      planned.requestId,
      {
        promptIds: plan.tokenIds,
        placeholders: plan.placeholders.flatMap((p) => p.runs),
        mediaEmbeddings: staged,
        maxNewTokens: maxTokens,
        stopIds,
        sampling,
        chunkSize: model.lm.options.maxTokensPerStep,
        signal: req.signal,
      },
      timings,
    )) {
      if (tokenIds.length === 0) {
        ttftMs = performance.now() - t0;
        if (staged) {
          this.lifecycle.spliced += 1;
          this.lifecycle.prefilled += 1;
        }
      }
      tokenIds.push(id);
      if (stopIds.has(id)) {
        finishReason = 'stop';
        break;
      }
      const delta = detok.push(id);
      if (delta) yield { delta };
    }
    const tail = detok.flush();
    if (tail) yield { delta: tail };
    const decodeMs = timings.decodeStepMs.reduce((a, b) => a + b, 0);
    const t: RequestTimings = {
      processMs: before.processMs,
      encodeMs: before.encodeMs,
      prefillMs: timings.prefillMs,
      ttftMs,
      decodeMs,
      decodeTokensPerSecond: decodeMs > 0 ? (timings.decodeStepMs.length * 1000) / decodeMs : 0,
      numPrefillChunks: timings.numPrefillChunks,
      decodeStepMs: timings.decodeStepMs,
      decodeStepEnd: timings.decodeStepEnd ?? [],
    };
    const info: TesseraInfo = {
      tokenIds,
      promptTokens: plan.tokenIds.length,
      imageTokens: plan.placeholders.reduce((a, p) => a + p.length, 0),
      numTiles: plan.placeholders.reduce((a, p) => a + p.numTiles, 0),
      timings: t,
      media: planned.mediaInfo,
      ...(planned.degraded ? { degraded: planned.degraded } : {}),
    };
    this.last = { ...t, promptTokens: info.promptTokens, completionTokens: tokenIds.length };
    return { finishReason, info, text: detok.text };
  }

  /** Inspect and clear the encoder cache (memory + persistent tiers). */
  readonly encoderCache = {
    inspect: () => this.media.inspect(),
    clear: () => this.media.clear(),
  };

  /** Used by plan-media.ts: the context window this engine can serve. */
  contextWindow(): number {
    return Math.min(this.model.config.text.maxPositions, this.model.lm.maxBlocksPerSeq * this.model.kv.blockSize);
  }

  /** Used by plan-media.ts: token ids and placeholders from image layouts. */
  planPrompt(messages: ChatMessage[], media: PreparedMedia[]) {
    return this.processor.planPrompt(messages, media.map((m) => m.layout));
  }

  stats(): EngineStats {
    const kv = this.model.kv.stats();
    const pool = this.deps.gpu.pool.stats();
    const memory = this.deps.gpu.memory.stats();
    const step = this.model.lm.lastStep;
    return {
      ...this.counters,
      kv: { numBlocks: kv.numBlocks, numFreeBlocks: kv.numFreeBlocks, blockSize: kv.blockSize },
      gpuPool: { numLive: pool.numLive, bytesLive: pool.bytesLive, bytesFree: pool.bytesFree },
      weightBytes: this.model.stats.weightBytes,
      kvCacheBytes: this.model.stats.kvCacheBytes,
      gpuMemory: { bytesLive: memory.bytesLive, peakBytes: memory.peakBytes },
      decodeStep: {
        numDispatches: step.numDispatches,
        numCommandBuffers: step.numCommandBuffers,
        numReadbacks: step.numReadbacks,
        readbackBytes: step.readbackBytes,
      },
      encoder: this.media.stats(),
      lifecycle: { ...this.lifecycle },
      last: this.last,
    };
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.media.destroy();
    this.model.destroy();
    if (this.deps.ownsGpu) this.deps.gpu.destroy();
  }
}
