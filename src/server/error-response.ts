// Errors as OpenAI's API sends them: a status and {"error": {message, type, param, code}}. Every Tessera
// error code has its status here (the type requires each one), so a new error class is placed on purpose.

import * as errors from '../errors';
import type { ErrorCode } from '../protocol/errors';

const STATUS_BY_CODE: { [C in ErrorCode]: number } = {
  // the request's own fields, messages and media: 400
  INVALID_REQUEST: 400,
  INVALID_MESSAGE: 400,
  CONTEXT_LENGTH: 400,
  KV_CACHE_TOO_SMALL: 400,
  TOO_MANY_IMAGES: 400,
  IMAGE_DECODE: 400,
  IMAGE_TOO_LARGE: 400,
  IMAGE_FETCH: 400,
  PRIVATE_NETWORK_REFUSED: 400,
  VIDEO_NOT_SUPPORTED: 400,
  VIDEO_DECODE: 400,
  VIDEO_TRACK_MISSING: 400,
  VIDEO_CODEC_UNSUPPORTED: 400,
  VIDEO_EMPTY: 400,
  AUDIO_DECODE: 400,
  AUDIO_NOT_SUPPORTED: 400,
  TOOLS_NOT_SUPPORTED: 400,
  IMAGE_NOT_SUPPORTED: 400,
  AUDIO_TOO_LONG: 400,
  UNSUPPORTED_SCHEMA: 400,
  SCHEMA_COMPILE: 400,
  CHAT_TEMPLATE_LIMIT: 400,
  IMAGE_TOKEN_MISMATCH: 400,
  EMBEDDINGS_NOT_ACCEPTED: 400,
  EMBEDDINGS_NOT_CACHED: 400,
  EMBEDDINGS_SHAPE: 400,
  MALFORMED_BODY: 400,
  // the HTTP layer
  UNAUTHORIZED: 401,
  MODEL_NOT_FOUND: 404,
  ROUTE_NOT_FOUND: 404,
  BODY_TOO_LARGE: 413,
  UNSUPPORTED_CONTENT_TYPE: 415,
  QUEUE_FULL: 429,
  // the engine cannot serve it now; the same request may succeed later
  ENGINE_UNAVAILABLE: 503,
  DEVICE_LOST: 503,
  ENGINE_BUSY: 503,
  KV_CACHE_FULL: 503,
  ENCODER_CACHE_FULL: 503,
  ENCODER_OUT_OF_MEMORY: 503,
  ENCODER_WORKER_CRASHED: 503,
  ENCODE_TIMEOUT: 504,
  // the client went away: nobody reads the status (499, as nginx logs it)
  ABORTED: 499,
  // the server's installation, its model or Tessera itself: 500
  WEBGPU_UNAVAILABLE: 500,
  SHADER_COMPILE: 500,
  GPU_VALIDATION: 500,
  SHAPE_MISMATCH: 500,
  BUFFER_SIZE: 500,
  DTYPE_MISMATCH: 500,
  DEVICE_LIMIT: 500,
  UNSUPPORTED_SHAPE: 500,
  MODEL_CONFIG: 500,
  UNSUPPORTED_MODEL: 500,
  CHECKPOINT_FORMAT: 500,
  TRUNCATED_FILE: 500,
  MISSING_TENSOR: 500,
  TENSOR_SHAPE: 500,
  MODEL_FILE: 500,
  ONNX_FILES_MISSING: 500,
  ONNX_GRAPH_MISMATCH: 500,
  BACKEND_UNSUPPORTED: 500,
  ONNXRUNTIME_LOAD: 500,
  INTERNAL: 500,
  ENGINE_STALLED: 500,
  PROCESSOR_CONFIG: 500,
  CHAT_TEMPLATE: 500,
  MEDIA_NOT_PREPARED: 500,
  CACHE_KEY: 500,
  PERSISTENT_CACHE_UNAVAILABLE: 500,
  ENCODER_WORKER_LOAD: 500,
  MISSING_DEPENDENCY: 500,
  GPU_BOUNDS: 500,
  NON_FINITE_LOGITS: 500,
  NON_FINITE_WEIGHT: 500,
  FFMPEG_MISSING: 500,
  HEAD_DIM: 500,
  UNKNOWN_DTYPE: 500,
  PACKED_DTYPE: 500,
  STORED_WEIGHTS_MISMATCH: 500,
  GRAMMAR_LOAD: 500,
  // a remote engine's (never raised inside the server)
  REMOTE_SERVER: 502,
  REMOTE_UNREACHABLE: 502,
  REMOTE_MODEL_MISMATCH: 500,
  // browser storage (a browser engine's load; never raised inside the server)
  STORAGE_QUOTA: 507,
};

/** OpenAI's names for the codes its own API shares with Tessera's. */
const OPENAI_CODE: Partial<Record<ErrorCode, string>> = {
  CONTEXT_LENGTH: 'context_length_exceeded',
  UNAUTHORIZED: 'invalid_api_key',
  MODEL_NOT_FOUND: 'model_not_found',
  QUEUE_FULL: 'rate_limit_exceeded',
};

/** The body of an error response, as OpenAI's API sends it. */
interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

export interface ErrorResponse {
  status: number;
  body: OpenAIErrorBody;
  /** Seconds, for 429 and 503 (the Retry-After header). */
  retryAfter?: number;
}

function typeForStatus(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status === 503 || status === 504) return 'service_unavailable_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** The status and OpenAI-shaped body for a thrown value (anything not a Tessera error is a 500). */
export function errorResponse(e: unknown): ErrorResponse {
  const code = e instanceof errors.TesseraError ? (e.code as ErrorCode) : undefined;
  const status = code !== undefined && Object.hasOwn(STATUS_BY_CODE, code) ? STATUS_BY_CODE[code] : 500;
  const message = e instanceof Error ? e.message : String(e);
  const param = e instanceof errors.InvalidRequestError ? e.field : null;
  const retryAfter =
    e instanceof errors.ServerQueueFullError || e instanceof errors.EngineUnavailableError
      ? e.retryAfterSeconds
      : status === 503
        ? 1
        : undefined;
  return {
    status,
    body: { error: { message, type: typeForStatus(status), param, code: code ? (OPENAI_CODE[code] ?? code.toLowerCase()) : null } },
    ...(retryAfter !== undefined ? { retryAfter } : {}),
  };
}

/** A fetch Response for an error. */
export function errorAsResponse(e: unknown, headers: Record<string, string> = {}): Response {
  const r = errorResponse(e);
  const h: Record<string, string> = { 'content-type': 'application/json', ...headers };
  if (r.retryAfter !== undefined) h['retry-after'] = String(r.retryAfter);
  return new Response(JSON.stringify(r.body), { status: r.status, headers: h });
}
