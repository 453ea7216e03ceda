// The server's routes as a Hono app over web-standard Request and Response (so the same app can run on an
// edge runtime's fetch handler; listen-node.ts serves it from Node's http server):
//   POST /v1/chat/completions   chat-route.ts
//   GET  /v1/models             the one model served
//   GET  /health                200 when ready, 503 while loading or recovering the device
//   GET  /metrics               Prometheus text (metrics.ts)
// /v1/* needs the API key when one is set; CORS answers only the allowed origins.

import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import { BodyTooLargeError, RouteNotFoundError, UnauthorizedError } from '../errors';
import { Admission } from './admission';
import { chatCompletions } from './chat-route';
import type { EngineHost } from './engine-host';
import { errorAsResponse } from './error-response';
import { ServerMetrics } from './metrics';

export interface ServerAppOptions {
  /** The name /v1/models lists and requests' `model` must match. */
  modelName: string;
  /** Requests to /v1/* must send "Authorization: Bearer <apiKey>" (absent: no key needed). */
  apiKey?: string;
  /** Origins browsers may call from (CORS), e.g. ['https://app.example']; '*' for any; absent: none. */
  allowedOrigins?: readonly string[];
  /** Requests in the engine at once (default 64); the engine batches them. */
  maxConcurrency?: number;
  /** Requests waiting for a slot beyond those (default 256); one more is refused with 429. */
  maxQueue?: number;
  /** Largest request body in bytes (default 64 MiB): base64 images and audio travel in it. */
  maxBodyBytes?: number;
  /** Failures that are the server's (status 500 and above but 503). */
  onError?: (e: unknown, status: number) => void;
}

const DEFAULT_MAX_CONCURRENCY = 64;
const DEFAULT_MAX_QUEUE = 256;
const DEFAULT_MAX_BODY_BYTES = 64 * 2 ** 20;

export interface ServerApp {
  app: Hono;
  admission: Admission;
  metrics: ServerMetrics;
}

/** Compare without an early exit, so the time taken does not tell how much of a key was right. */
function sameKey(a: string, b: string): boolean {
  let diff = a.length ^ b.length;
  for (let i = 0; i < Math.max(a.length, b.length); i++) diff |= (a.charCodeAt(i) || 0) ^ (b.charCodeAt(i) || 0);
  return diff === 0;
}

export function createServerApp(host: EngineHost, options: ServerAppOptions): ServerApp {
  const admission = new Admission(options.maxConcurrency ?? DEFAULT_MAX_CONCURRENCY, options.maxQueue ?? DEFAULT_MAX_QUEUE);
  const metrics = new ServerMetrics(host, admission, options.modelName);
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  const app = new Hono();

  const origins = options.allowedOrigins ?? [];
  if (origins.length > 0) {
    app.use('*', cors({ origin: origins.includes('*') ? '*' : [...origins], exposeHeaders: ['Retry-After'], maxAge: 600 }));
  }
  app.use('/v1/*', async (c, next) => {
    if (options.apiKey === undefined || c.req.method === 'OPTIONS') return next();
    const header = c.req.header('authorization') ?? '';
    const match = /^Bearer\s+(.+)$/i.exec(header);
    if (!match) return errorAsResponse(new UnauthorizedError('none'), { 'www-authenticate': 'Bearer' });
    if (!sameKey(match[1].trim(), options.apiKey)) return errorAsResponse(new UnauthorizedError('wrong'), { 'www-authenticate': 'Bearer' });
    return next();
  });

  app.post(
    '/v1/chat/completions',
    // The connection closes after a 413, so the rest of a huge upload is not read.
    bodyLimit({ maxSize: maxBodyBytes, onError: () => errorAsResponse(new BodyTooLargeError(maxBodyBytes), { connection: 'close' }) }),
    (c) => chatCompletions({ host, admission, metrics, modelName: options.modelName, onError: options.onError }, c.req.raw),
  );
  app.get('/v1/models', (c) => {
    const engine = host.engine;
    return c.json({
      object: 'list',
      data: [
        {
          id: options.modelName,
          object: 'model',
          created: 0,
          owned_by: 'tessera',
          root: engine?.modelId ?? options.modelName,
          ...(engine ? { max_model_len: engine.contextWindow } : {}),
          // What a remote engine checks before it sends embeddings made with its own copy of the checkpoint.
          ...(engine && engine.media.info.imageSeqLen > 0
            ? { tessera: { hiddenSize: engine.media.info.hiddenSize, imageSeqLen: engine.media.info.imageSeqLen } }
            : {}),
        },
      ],
    });
  });
  app.get('/health', () => {
    const state = host.state;
    if (state === 'ready') return Response.json({ status: 'ok', model: options.modelName });
    return errorAsResponse(host.unavailable(state));
  });
  app.get('/metrics', async () => new Response(await metrics.text(), { headers: { 'content-type': metrics.contentType } }));

  app.notFound((c) => errorAsResponse(new RouteNotFoundError(c.req.method, c.req.path)));
  app.onError((e) => {
    options.onError?.(e, 500);
    return errorAsResponse(e);
  });
  return { app, admission, metrics };
}
