// POST /v1/chat/completions: the body read as OpenAI's request, checked at the door (JSON object, model
// name), admitted (Admission), and answered by the engine as JSON or as server-sent events. The request's
// AbortSignal follows the client: a closed connection cancels the request, which frees its KV blocks.

import type { Engine } from '../engine/engine';
import type { ChatCompletionChunk, ChatCompletionRequest } from '../engine/types';
import { MalformedBodyError, ModelNotFoundError, RequestAbortedError, TesseraError, UnsupportedContentTypeError } from '../errors';
import type { Admission } from './admission';
import type { EngineHost } from './engine-host';
import { errorAsResponse, errorResponse } from './error-response';
import type { ServerMetrics } from './metrics';

export interface ChatRouteDeps {
  host: EngineHost;
  admission: Admission;
  metrics: ServerMetrics;
  /** The name requests may give as `model` (absent: any request without one, or with this one). */
  modelName: string;
  /** Server-side failures (status 500 and above) are reported here. */
  onError?: (e: unknown, status: number) => void;
}

const encoder = new TextEncoder();

function sseData(value: unknown): Uint8Array {
  return encoder.encode(`data: ${typeof value === 'string' ? value : JSON.stringify(value)}\n\n`);
}

/** The body as a request object, or the named error (the engine checks the fields themselves). */
function parseChatBody(contentType: string | undefined, text: string, modelName: string): ChatCompletionRequest {
  if (!/^application\/json\s*(;|$)/i.test(contentType ?? '')) throw new UnsupportedContentTypeError(contentType ?? '');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (e) {
    throw new MalformedBodyError(`is not JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new MalformedBodyError(
      `is ${Array.isArray(body) ? 'an array' : `a JSON ${body === null ? 'null' : typeof body}`}, not an object`,
    );
  }
  const req = body as ChatCompletionRequest & { signal?: unknown };
  if (req.model !== undefined && req.model !== null && req.model !== modelName) throw new ModelNotFoundError(String(req.model), modelName);
  delete req.signal; // a JSON value, never an AbortSignal: the connection is the request's signal
  return req;
}

export async function chatCompletions(deps: ChatRouteDeps, request: Request): Promise<Response> {
  const started = performance.now();
  const fail = (e: unknown): Response => {
    const r = errorResponse(e);
    deps.metrics.failed(e instanceof TesseraError ? e.code : 'UNKNOWN');
    if (r.status >= 500 && r.status !== 503) deps.onError?.(e, r.status);
    deps.host.noteFailure(e);
    return errorAsResponse(e);
  };
  let req: ChatCompletionRequest;
  let engine: Engine;
  try {
    engine = deps.host.acquire();
    req = parseChatBody(request.headers.get('content-type') ?? undefined, await request.text(), deps.modelName);
  } catch (e) {
    return fail(e);
  }
  const abort = new AbortController();
  const onClientGone = () => abort.abort(new RequestAbortedError('the client closed the connection'));
  request.signal.addEventListener('abort', onClientGone, { once: true });
  let release: (() => void) | undefined;
  const done = () => {
    request.signal.removeEventListener('abort', onClientGone);
    release?.();
    release = undefined;
  };
  try {
    release = await deps.admission.enter(abort.signal);
    if (!req.stream) {
      const r = await engine.chat.completions.create({ ...req, stream: false }, { signal: abort.signal });
      const infos = r.tessera.choices ?? [r.tessera];
      for (const [i, c] of r.choices.entries()) deps.metrics.choiceFinished(infos[i] ?? r.tessera, c.finish_reason);
      deps.metrics.requestFinished(r.usage.prompt_tokens, (performance.now() - started) / 1000);
      done();
      return Response.json({ ...r, model: deps.modelName });
    }
    const chunks = (await engine.chat.completions.create({ ...req, stream: true }, { signal: abort.signal }))[Symbol.asyncIterator]();
    // The first chunk before the headers: a request the engine refuses is still an HTTP error status.
    const first = await chunks.next();
    return new Response(eventStream(deps, first, chunks, abort, done, started), {
      headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' },
    });
  } catch (e) {
    done();
    return fail(e);
  }
}

function eventStream(
  deps: ChatRouteDeps,
  first: IteratorResult<ChatCompletionChunk>,
  chunks: AsyncIterator<ChatCompletionChunk>,
  abort: AbortController,
  done: () => void,
  started: number,
): ReadableStream<Uint8Array> {
  let pending: IteratorResult<ChatCompletionChunk> | undefined = first;
  let promptTokens = 0;
  const finish = (controller: ReadableStreamDefaultController<Uint8Array>) => {
    controller.enqueue(sseData('[DONE]'));
    controller.close();
    done();
  };
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = pending ?? (await chunks.next());
        pending = undefined;
        if (next.done) {
          if (abort.signal.aborted) {
            deps.metrics.failed('ABORTED');
            done();
            controller.close();
            return;
          }
          deps.metrics.requestFinished(promptTokens, (performance.now() - started) / 1000);
          finish(controller);
          return;
        }
        const chunk = next.value;
        for (const choice of chunk.choices) {
          if (choice.finish_reason && chunk.tessera) {
            deps.metrics.choiceFinished(chunk.tessera, choice.finish_reason);
            promptTokens = chunk.tessera.promptTokens;
          }
        }
        controller.enqueue(sseData({ ...chunk, model: deps.modelName }));
      } catch (e) {
        // After the headers an error can only travel in the stream: OpenAI's error object as one event.
        deps.metrics.failed(e instanceof TesseraError ? e.code : 'UNKNOWN');
        deps.host.noteFailure(e);
        const r = errorResponse(e);
        if (r.status >= 500 && r.status !== 503) deps.onError?.(e, r.status);
        controller.enqueue(sseData(r.body));
        finish(controller);
      }
    },
    cancel(reason) {
      abort.abort(new RequestAbortedError(reason ?? 'the client closed the connection'));
      void chunks.return?.();
      done();
    },
  });
}
