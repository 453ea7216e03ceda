// The remote engine: the Engine's chat interface (chat.completions.create, streaming, AbortSignal, stats())
// over any OpenAI-compatible server, with images encoded on this side (image-parts.ts): only embeddings
// travel ('embeds'), or the images themselves ('raw'). A server that refuses embeddings (tessera serve
// without --enable-mm-embeds, vLLM without --enable-mm-embeds) is asked again with raw images under the
// same uuids, and from then on; stats() says so. connect() checks what the server tells about its model.

import { EventSourceParserStream } from 'eventsource-parser/stream';
import type { MediaEncoderStats } from '../encoder/media-encoder';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionRequest,
  ChatCompletionsCreate,
  ChatRequestOptions,
} from '../engine/types';
import { mediaPolicy, type MediaOptions, type MediaPolicy } from '../engine/intake/media-options';
import { RemoteModelMismatchError, RemoteServerError, RemoteUnreachableError, RequestAbortedError } from '../errors';
import type { TorchFloatDtype } from '../protocol/torch-tensor';
import { type RemoteMediaMode, type WirePartsCount, wireMessages } from './image-parts';
import type { StatsLocalEncoder } from './local-encoder';

export interface RemoteEngineOptions {
  /** The server's OpenAI base URL, e.g. 'http://127.0.0.1:8000/v1' (tessera serve) or a vLLM server's. */
  baseURL: string;
  /** Sent as "Authorization: Bearer <apiKey>". */
  apiKey?: string;
  /** The model name the server serves (its GET /v1/models lists it). */
  model: string;
  /** 'embeds' (default): encode images here and send embeddings; 'raw': send the images. */
  media?: RemoteMediaMode;
  /**
   * The embeddings' dtype on the wire: 'float32' (default: the values the local engine splices), or
   * 'float16' / 'bfloat16' (half the bytes; the server splices the rounded values, so an answer may differ
   * from the local engine's in its later tokens).
   */
  embeddingsDtype?: TorchFloatDtype;
  /** Limits on the images a request brings, as the engine's (image_url fetches happen here). */
  mediaOptions?: MediaOptions;
  /** fetch to use (default: the global one). */
  fetch?: typeof fetch;
}

export interface RemoteEngineStats {
  /** How images travel now ('raw' after a fallback). */
  mode: RemoteMediaMode;
  /** Set when the server refused embeddings and the engine went on with raw images: the server's message. */
  fallback: string | null;
  requests: number;
  failedRequests: number;
  /** Request bodies sent and response bodies read, in bytes. */
  bytesSent: number;
  bytesReceived: number;
  /** Image parts sent as embeddings (byUuid of them with their uuid only) and as images. */
  parts: { embeds: number; byUuid: number; raw: number };
  /** Image bytes in request bodies (raw parts): 0 while every image travels as embeddings. */
  imageBytesSent: number;
  /** The last request: its body's bytes and how its images went. */
  last?: { requestBytes: number } & WirePartsCount;
  encoder: MediaEncoderStats;
}

/** What the server says about its model (GET /v1/models), tessera serve's extras included. */
interface ServedModel {
  id: string;
  tessera?: { hiddenSize?: number; imageSeqLen?: number };
}

/** A refusal of image_embeds: Tessera's code, or vLLM's message naming its flag. */
function refusesEmbeddings(e: RemoteServerError): boolean {
  return e.status === 400 && (e.serverCode === 'embeddings_not_accepted' || /enable[-_]mm[-_]embeds|image_embeds/i.test(e.serverMessage));
}

export class RemoteEngine {
  readonly chat = {
    completions: {
      create: ((req: ChatCompletionRequest, options?: ChatRequestOptions) => this.create(req, options)) as ChatCompletionsCreate,
    },
  };
  private mode: RemoteMediaMode;
  private fallback: string | null = null;
  private readonly known = new Set<string>();
  private readonly counters = { requests: 0, failedRequests: 0, bytesSent: 0, bytesReceived: 0, imageBytesSent: 0 };
  private readonly parts = { embeds: 0, byUuid: 0, raw: 0 };
  private last: RemoteEngineStats['last'];
  private readonly policy: MediaPolicy;
  private readonly fetchImpl: typeof fetch;
  private readonly base: string;

  private constructor(
    private readonly encoder: StatsLocalEncoder,
    private readonly options: RemoteEngineOptions,
  ) {
    this.mode = options.media ?? 'embeds';
    this.policy = mediaPolicy(options.mediaOptions);
    this.fetchImpl = options.fetch ?? ((input, init) => fetch(input, init));
    this.base = options.baseURL.replace(/\/+$/, '');
  }

  /** Connect: the server must serve `model`, and what it tells of it must match the local checkpoint. */
  static async connect(encoder: StatsLocalEncoder, options: RemoteEngineOptions): Promise<RemoteEngine> {
    const engine = new RemoteEngine(encoder, options);
    const listing = (await (await engine.send('GET', '/models')).json()) as { data?: ServedModel[] };
    const served = listing.data ?? [];
    const entry = served.find((m) => m.id === options.model);
    if (!entry) throw new RemoteModelMismatchError('model list', options.model, served.map((m) => m.id).join(', ') || 'empty');
    const facts = entry.tessera;
    if (facts?.hiddenSize !== undefined && facts.hiddenSize !== encoder.hiddenSize) {
      throw new RemoteModelMismatchError('hidden size', encoder.hiddenSize, facts.hiddenSize);
    }
    if (facts?.imageSeqLen !== undefined && facts.imageSeqLen !== encoder.imageSeqLen) {
      throw new RemoteModelMismatchError('tokens per image tile', encoder.imageSeqLen, facts.imageSeqLen);
    }
    return engine;
  }

  stats(): RemoteEngineStats {
    return {
      mode: this.mode,
      fallback: this.fallback,
      ...this.counters,
      parts: { ...this.parts },
      last: this.last,
      encoder: this.encoder.stats(),
    };
  }

  destroy(): void {
    this.encoder.destroy();
  }

  private async send(method: 'GET' | 'POST', path: string, body?: string, signal?: AbortSignal): Promise<Response> {
    const url = `${this.base}${path}`;
    const headers: Record<string, string> = { accept: 'application/json, text/event-stream' };
    if (this.options.apiKey) headers.authorization = `Bearer ${this.options.apiKey}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    let r: Response;
    try {
      r = await this.fetchImpl(url, { method, headers, body, signal });
    } catch (e) {
      if (signal?.aborted) throw new RequestAbortedError(signal.reason);
      throw new RemoteUnreachableError(url, e);
    }
    if (r.ok) return r;
    const text = await r.text().catch(() => '');
    this.counters.bytesReceived += text.length;
    let code: string | null = null;
    let message = text.slice(0, 500) || r.statusText;
    try {
      const parsed = JSON.parse(text) as { error?: { code?: unknown; message?: unknown }; message?: unknown };
      const err = parsed.error ?? parsed;
      if (typeof err.message === 'string') message = err.message;
      if ((parsed.error as { code?: unknown } | undefined)?.code !== undefined) code = String((parsed.error as { code?: unknown }).code);
    } catch {
      // not JSON: the text itself
    }
    throw new RemoteServerError(r.status, code, message, url);
  }

  /** POST the request with its images as the mode says; once more in raw if the server refuses embeddings. */
  private async post(req: ChatCompletionRequest, stream: boolean, signal?: AbortSignal): Promise<{ response: Response; uuids: string[] }> {
    for (let attempt = 0; ; attempt++) {
      const mode = this.mode;
      const wire = await wireMessages({
        messages: req.messages,
        mode,
        encoder: this.encoder,
        policy: this.policy,
        known: this.known,
        dtype: this.options.embeddingsDtype ?? 'float32',
        signal,
      });
      const { signal: _, tessera: __, ...fields } = req;
      const body = JSON.stringify({
        ...fields,
        model: this.options.model,
        messages: wire.messages,
        stream,
        ...(req.tessera ? { tessera: req.tessera } : {}),
      });
      this.counters.bytesSent += body.length;
      this.last = { requestBytes: body.length, ...wire.count };
      try {
        const response = await this.send('POST', '/chat/completions', body, signal);
        this.parts.embeds += wire.count.embeds;
        this.parts.byUuid += wire.count.byUuid;
        this.parts.raw += wire.count.raw;
        this.counters.imageBytesSent += wire.count.imageBytes;
        return { response, uuids: wire.uuids };
      } catch (e) {
        if (!(e instanceof RemoteServerError) || attempt > 0) throw e;
        if (mode === 'embeds' && refusesEmbeddings(e) && e.serverCode !== 'embeddings_not_cached') {
          this.mode = 'raw';
          this.fallback = e.serverMessage;
        } else if (e.serverCode === 'embeddings_not_cached') {
          this.known.clear(); // the server lost them: send every value again
        } else {
          throw e;
        }
      }
    }
  }

  private async create(
    req: ChatCompletionRequest,
    options?: ChatRequestOptions,
  ): Promise<ChatCompletion | AsyncIterable<ChatCompletionChunk>> {
    const signal = options?.signal ?? req.signal;
    this.counters.requests++;
    try {
      if (signal?.aborted) throw new RequestAbortedError(signal.reason);
      if (!req.stream) {
        const { response, uuids } = await this.post(req, false, signal);
        const text = await response.text();
        this.counters.bytesReceived += text.length;
        for (const u of uuids) this.known.add(u);
        return JSON.parse(text) as ChatCompletion;
      }
      const { response, uuids } = await this.post(req, true, signal);
      for (const u of uuids) this.known.add(u);
      return this.events(response, signal);
    } catch (e) {
      this.counters.failedRequests++;
      throw e;
    }
  }

  /** The server-sent events as chunks; an error event throws RemoteServerError; the caller's abort ends quietly. */
  private async *events(response: Response, signal?: AbortSignal): AsyncGenerator<ChatCompletionChunk> {
    const decoder = new TextDecoder();
    const text = response.body!.pipeThrough(
      new TransformStream<Uint8Array, string>({
        transform: (chunk, controller) => {
          this.counters.bytesReceived += chunk.byteLength;
          controller.enqueue(decoder.decode(chunk, { stream: true }));
        },
      }),
    );
    const reader = text.pipeThrough(new EventSourceParserStream()).getReader();
    try {
      for (;;) {
        let next: ReadableStreamReadResult<{ data: string }>;
        try {
          next = await reader.read();
        } catch (e) {
          if (signal?.aborted) return;
          this.counters.failedRequests++;
          throw new RemoteUnreachableError(response.url, e);
        }
        if (next.done || next.value.data === '[DONE]') return;
        const value = JSON.parse(next.value.data) as ChatCompletionChunk & { error?: { code?: string; message?: string } };
        if (value.error) {
          this.counters.failedRequests++;
          throw new RemoteServerError(200, value.error.code ?? null, value.error.message ?? 'the stream ended with an error', response.url);
        }
        yield value;
      }
    } finally {
      await reader.cancel().catch(() => {});
    }
  }
}
