// Errors of Tessera's HTTP server (`tessera serve`) at its door, before a request reaches the engine: the
// API key, the model name, the body, the queue, an engine that is loading or recovering its device.

import { TesseraError } from './base';

/** The request has no API key, or the wrong one, while the server was started with one. */
export class UnauthorizedError extends TesseraError {
  override readonly name = 'UnauthorizedError';
  readonly code = 'UNAUTHORIZED';
  constructor(readonly given: 'none' | 'wrong') {
    super(
      given === 'none'
        ? 'this server needs an API key: send the header "Authorization: Bearer <key>" (the key tessera serve was started with, --api-key).'
        : 'the API key is not the one this server was started with (--api-key); send "Authorization: Bearer <key>" with that key.',
    );
  }
}

/** The request names a model this server does not serve. */
export class ModelNotFoundError extends TesseraError {
  override readonly name = 'ModelNotFoundError';
  readonly code = 'MODEL_NOT_FOUND';
  constructor(
    readonly requested: string,
    readonly served: string,
  ) {
    super(
      `the model ${JSON.stringify(requested)} is not served here; this server serves ${JSON.stringify(served)} (GET /v1/models lists it).`,
    );
  }
}

/** No route for this method and path. */
export class RouteNotFoundError extends TesseraError {
  override readonly name = 'RouteNotFoundError';
  readonly code = 'ROUTE_NOT_FOUND';
  constructor(
    readonly method: string,
    readonly path: string,
  ) {
    super(`there is no ${method} ${path}; this server answers POST /v1/chat/completions, GET /v1/models, GET /health and GET /metrics.`);
  }
}

/** A request body larger than the server accepts (--max-body-bytes). */
export class BodyTooLargeError extends TesseraError {
  override readonly name = 'BodyTooLargeError';
  readonly code = 'BODY_TOO_LARGE';
  constructor(readonly maxBytes: number) {
    super(
      `the request body is larger than this server accepts (${maxBytes} bytes); send smaller media (or a URL the server ` +
        'may fetch), or start tessera serve with a larger --max-body-bytes.',
    );
  }
}

/** The body does not parse as JSON, or is not a JSON object. */
export class MalformedBodyError extends TesseraError {
  override readonly name = 'MalformedBodyError';
  readonly code = 'MALFORMED_BODY';
  constructor(readonly detail: string) {
    super(`the request body ${detail}; send one JSON object (OpenAI's chat completion request).`);
  }
}

/** The body is not declared as JSON (Content-Type), so it is not read. */
export class UnsupportedContentTypeError extends TesseraError {
  override readonly name = 'UnsupportedContentTypeError';
  readonly code = 'UNSUPPORTED_CONTENT_TYPE';
  constructor(readonly contentType: string) {
    super(
      `the request's Content-Type is ${contentType ? JSON.stringify(contentType) : 'missing'}; this endpoint reads JSON: ` +
        'send the body as a JSON object with "Content-Type: application/json".',
    );
  }
}

/** Every slot and every queue place is taken: try again after `retryAfterSeconds`. */
export class ServerQueueFullError extends TesseraError {
  override readonly name = 'ServerQueueFullError';
  readonly code = 'QUEUE_FULL';
  constructor(
    readonly running: number,
    readonly waiting: number,
    readonly retryAfterSeconds: number,
  ) {
    super(
      `the server is full: ${running} requests are running and ${waiting} are waiting, the most it holds; retry after ` +
        `${retryAfterSeconds} s (the Retry-After header), or start tessera serve with a larger --max-concurrency or --max-queue.`,
    );
  }
}

/** The engine cannot take requests now: it is loading, or recreating its GPU device after a loss. */
export class EngineUnavailableError extends TesseraError {
  override readonly name = 'EngineUnavailableError';
  readonly code = 'ENGINE_UNAVAILABLE';
  constructor(
    readonly state: 'loading' | 'recovering' | 'failed' | 'closing',
    readonly retryAfterSeconds: number,
    cause?: unknown,
  ) {
    super(
      state === 'loading'
        ? `the model is still loading; retry after ${retryAfterSeconds} s (GET /health answers 200 once it is ready).`
        : state === 'recovering'
          ? `the GPU device was lost and the engine is recreating it; retry after ${retryAfterSeconds} s (GET /health answers 200 once it is back).`
          : state === 'closing'
            ? 'the server is shutting down and takes no new requests.'
            : `the model failed to load${cause instanceof Error ? `: ${cause.message}` : ''}; see the server's log, fix the cause and restart tessera serve.`,
      cause === undefined ? undefined : { cause },
    );
  }
}
