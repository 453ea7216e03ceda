// The engine: a loaded model + processor behind an OpenAI-style chat.completions API.
//
//   request -> processor (decode, resize, tile, chat template, expand placeholders)   [CPU]
//           -> vision encoder over every tile of every image                          [GPU]
//           -> chunked prefill with the embeddings spliced in, then decode            [GPU]
//           -> streaming detokenizer -> chunks
//
// Requests run one at a time (a later scheduler batches them); a request that fails, whatever the
// reason, fails alone and releases its KV blocks and GPU tensors, and the next one runs normally.

import { ContextLengthError, InternalError, InvalidMessageError, RequestAbortedError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { ModelSource } from '../io/model-source';
import type { Tensor } from '../gpu/tensor';
import { generate, type GenerateTimings } from '../model/generate';
import { loadModel, type LoadedModel, type LoadModelOptions } from '../model/load';
import type { ImageDecoder } from '../processor/image-decode';
import { Idefics3Processor } from '../processor/processor';
import { toProcessorMessages } from './message-images';
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

export interface EngineOptions extends Omit<LoadModelOptions, 'onProgress'> {
  onProgress?: (p: EngineProgress) => void;
  /** Name reported in responses (default: the source's location). */
  modelId?: string;
}

export interface EngineDeps {
  gpu: GpuContext;
  source: ModelSource;
  decodeImage: ImageDecoder;
  fetchImpl?: typeof fetch;
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
  private nextSeq = 1;
  private counters = { requests: 0, failedRequests: 0 };
  private last: EngineStats['last'];
  private destroyed = false;

  private constructor(
    private readonly deps: EngineDeps,
    readonly model: LoadedModel,
    readonly processor: Idefics3Processor,
    readonly modelId: string,
  ) {}

  static async create(deps: EngineDeps, options: EngineOptions = {}): Promise<Engine> {
    const onProgress = options.onProgress;
    const processor = await Idefics3Processor.load(deps.source, { decodeImage: deps.decodeImage });
    const model = await loadModel(deps.gpu, deps.source, {
      ...options,
      onProgress: onProgress ? (p) => onProgress({ ...p }) : undefined,
    });
    onProgress?.({ phase: 'ready' });
    return new Engine(deps, model, processor, options.modelId ?? deps.source.where);
  }

  private create(req: ChatCompletionRequest): Promise<ChatCompletion | AsyncIterable<ChatCompletionChunk>> {
    if (req.stream) return Promise.resolve(this.stream(req));
    return this.complete(req);
  }

  private async complete(req: ChatCompletionRequest): Promise<ChatCompletion> {
    const pieces: string[] = [];
    const result = await this.exclusive(async () => {
      const it = this.run(req);
      for (;;) {
        const n = await it.next();
        if (n.done) return n.value;
        pieces.push(n.value.delta);
      }
    });
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
    // Hold the engine for the whole stream; released when the stream ends, fails or is abandoned.
    let release!: () => void;
    const turn = this.queue;
    this.queue = new Promise<void>((r) => (release = r));
    try {
      await turn;
      yield chunk({ role: 'assistant' }, null);
      const it = this.run(req);
      for (;;) {
        const n = await it.next();
        if (n.done) {
          yield chunk({}, n.value.finishReason, n.value.info);
          return;
        }
        if (n.value.delta) yield chunk({ content: n.value.delta }, null);
      }
    } finally {
      release();
    }
  }

  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const result = this.queue.then(work);
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** One request: yields text deltas, returns the finish reason and the request's numbers. */
  private async *run(req: ChatCompletionRequest): AsyncGenerator<Piece, RunResult> {
    if (this.destroyed) throw new InternalError('this engine was destroyed; create a new one');
    this.deps.gpu.assertAlive();
    this.counters.requests++;
    const { model, processor } = this;
    const t0 = performance.now();
    let embeddings: Tensor | undefined;
    try {
      const maxTokens = req.max_tokens ?? 128;
      if (!Number.isInteger(maxTokens) || maxTokens < 1) throw new InvalidMessageError(`max_tokens must be a positive integer, got ${maxTokens}`);
      const messages = await toProcessorMessages(req.messages, this.deps.fetchImpl);
      const prepared = await processor.prepare(messages);
      const plan = prepared.plan;
      const contextWindow = Math.min(model.config.text.maxPositions, model.lm.maxBlocksPerSeq * model.kv.blockSize);
      if (plan.tokenIds.length + maxTokens > contextWindow) throw new ContextLengthError(plan.tokenIds.length, maxTokens, contextWindow);
      const processMs = performance.now() - t0;

      const t1 = performance.now();
      const numTiles = prepared.images.reduce((a, im) => a + im.layout.numTiles, 0);
      if (numTiles > 0) {
        const tileElems = prepared.images[0].pixelValues.length / prepared.images[0].layout.numTiles;
        const pixels = new Float32Array(numTiles * tileElems);
        let o = 0;
        for (const im of prepared.images) {
          pixels.set(im.pixelValues, o);
          o += im.pixelValues.length;
        }
        embeddings = (await model.vision.encode({ pixels, numTiles })).embeddings;
      }
      const encodeMs = performance.now() - t1;

      const sampling =
        req.temperature && req.temperature > 0
          ? { temperature: req.temperature, topK: req.top_k ?? 0, topP: req.top_p ?? 1, seed: req.seed ?? 0 }
          : undefined;
      const timings: GenerateTimings = { prefillMs: 0, numPrefillChunks: 0, decodeStepMs: [] };
      const detok = processor.createDetokenizer();
      const stopIds = new Set(processor.stopTokenIds);
      const tokenIds: number[] = [];
      let ttftMs = 0;
      let finishReason: FinishReason = 'length';
      const seq = this.nextSeq++;
      for await (const id of generate(
        model.lm,
        model.kv,
        seq,
        {
          promptIds: plan.tokenIds,
          placeholders: plan.placeholders.flatMap((p) => p.runs),
          mediaEmbeddings: embeddings,
          maxNewTokens: maxTokens,
          stopIds,
          sampling,
          chunkSize: model.lm.options.maxTokensPerStep,
          signal: req.signal,
        },
        timings,
      )) {
        if (tokenIds.length === 0) ttftMs = performance.now() - t0;
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
        processMs,
        encodeMs,
        prefillMs: timings.prefillMs,
        ttftMs,
        decodeMs,
        decodeTokensPerSecond: decodeMs > 0 ? (timings.decodeStepMs.length * 1000) / decodeMs : 0,
        numPrefillChunks: timings.numPrefillChunks,
      };
      const info: TesseraInfo = {
        tokenIds,
        promptTokens: plan.tokenIds.length,
        imageTokens: plan.placeholders.reduce((a, p) => a + p.length, 0),
        numTiles,
        timings: t,
      };
      this.last = { ...t, promptTokens: info.promptTokens, completionTokens: tokenIds.length };
      return { finishReason, info, text: detok.text };
    } catch (e) {
      this.counters.failedRequests++;
      if (req.signal?.aborted && !(e instanceof RequestAbortedError)) throw new RequestAbortedError(req.signal.reason);
      throw e;
    } finally {
      if (embeddings) this.deps.gpu.release(embeddings);
    }
  }

  stats(): EngineStats {
    const kv = this.model.kv.stats();
    const pool = this.deps.gpu.pool.stats();
    return {
      ...this.counters,
      kv: { numBlocks: kv.numBlocks, numFreeBlocks: kv.numFreeBlocks, blockSize: kv.blockSize },
      gpuPool: { numLive: pool.numLive, bytesLive: pool.bytesLive, bytesFree: pool.bytesFree },
      weightBytes: this.model.stats.weightBytes,
      kvCacheBytes: this.model.stats.kvCacheBytes,
      gpuMemory: (({ bytesLive, peakBytes }) => ({ bytesLive, peakBytes }))(this.deps.gpu.memory.stats()),
      decodeStep: (({ numDispatches, numCommandBuffers, numReadbacks, readbackBytes }) => ({ numDispatches, numCommandBuffers, numReadbacks, readbackBytes }))(
        this.model.lm.lastStep,
      ),
      last: this.last,
    };
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.model.destroy();
    if (this.deps.ownsGpu) this.deps.gpu.destroy();
  }
}
