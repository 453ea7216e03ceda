// `tessera serve`: the OpenAI-compatible HTTP server (src/server/) over one engine. It listens at once and
// answers 503 while the model loads; SIGINT or SIGTERM stops it (open requests are cut off, the engine is
// destroyed).

import { createEngine } from '../engine/create-node';
import { startServer } from '../server/listen-node';
import type { ServeArgs } from './args';
import { formatCliError } from './report-error';

export interface ServeCliOptions extends Omit<ServeArgs, 'command'> {
  err: (text: string) => void;
  /** Resolves when the server should stop (default: SIGINT or SIGTERM). */
  stop?: Promise<void>;
}

function untilSignal(): Promise<void> {
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

export async function serve(o: ServeCliOptions): Promise<number> {
  const t0 = performance.now();
  const engine = createEngine({
    model: o.model,
    mmproj: o.mmproj,
    modelId: o.servedModelName,
    dtype: o.dtype,
    compute: o.compute,
    device: o.device,
    weightCacheDir: o.weightCache === false ? false : undefined,
    gpu:
      o.variant || o.maxBinding
        ? { ...(o.variant ? { kernelVariant: o.variant } : {}), ...(o.maxBinding ? { maxStorageBufferBindingSize: o.maxBinding } : {}) }
        : undefined,
    ...(o.kvCacheTokens !== undefined ? { kvCacheTokens: o.kvCacheTokens } : {}),
    ...(o.enableMmEmbeds ? { media: { acceptEmbeddings: true } } : {}),
  });
  const server = await startServer({
    engine,
    modelName: o.servedModelName,
    host: o.host,
    port: o.port,
    apiKey: o.apiKey,
    allowedOrigins: o.allowedOrigins,
    maxConcurrency: o.maxConcurrency,
    maxQueue: o.maxQueue,
    maxBodyBytes: o.maxBodyBytes,
    onError: (e, status) => o.err(`${status}: ${formatCliError(e, o.verbose)}\n`),
  });
  const event = (fields: Record<string, unknown>) => o.err(`${o.json ? JSON.stringify(fields) : Object.values(fields).join(' ')}\n`);
  event({ event: 'listening', url: server.url, model: o.servedModelName, note: '(503 until the model is loaded)' });
  let failed = false;
  engine.then(
    (e) =>
      event({
        event: 'ready',
        url: server.url,
        device: `${e.stats().device.backend} (${e.stats().device.reason})`,
        loadMs: Math.round(performance.now() - t0),
      }),
    (e: unknown) => {
      failed = true;
      o.err(`loading the model failed; /health answers 503 until the server is restarted\n${formatCliError(e, o.verbose)}\n`);
    },
  );
  await (o.stop ?? untilSignal());
  event({ event: 'stopping', url: server.url });
  await server.close();
  return failed ? 1 : 0;
}
