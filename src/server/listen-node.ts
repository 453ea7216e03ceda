// Serve the app from Node's http server: bounded time for a client to send its headers and its body (a
// slow client is cut off with 408, not held forever), keep-alive, and a close() that stops listening,
// cuts open connections and destroys the engine.

import type { AddressInfo } from 'node:net';
import { createAdaptorServer } from '@hono/node-server';
import type { Server } from 'node:http';
import type { Engine } from '../engine/engine';
import { type ServerApp, type ServerAppOptions, createServerApp } from './app';
import { EngineHost } from './engine-host';

export interface ServeOptions extends ServerAppOptions {
  /** The engine, or the promise of it: the server listens (and answers 503) while the model loads. */
  engine: Engine | Promise<Engine>;
  /** close() destroys the engine (default true); false leaves it to the caller. */
  ownsEngine?: boolean;
  /** Default 127.0.0.1: only this machine. '0.0.0.0' listens on every interface. */
  host?: string;
  /** Default 8000; 0 picks a free port (see RunningServer.url). */
  port?: number;
  /** Most time a client may take to send its headers (default 10 s). */
  headersTimeoutMs?: number;
  /** Most time a client may take to send its whole request, headers and body (default 60 s). */
  requestTimeoutMs?: number;
}

export interface RunningServer extends ServerApp {
  /** http://host:port, the base of the routes (the openai client's baseURL is `${url}/v1`). */
  url: string;
  host: EngineHost;
  server: Server;
  /** Stop listening, end open connections and destroy the engine (unless ownsEngine was false). */
  close(): Promise<void>;
}

export async function startServer(options: ServeOptions): Promise<RunningServer> {
  const host = new EngineHost(options.engine, options.ownsEngine ?? true);
  const app = createServerApp(host, options);
  const headersTimeout = options.headersTimeoutMs ?? 10_000;
  const server = createAdaptorServer({
    fetch: app.app.fetch,
    // Leave the process's Request and Response alone (the engine and the caller use them too).
    overrideGlobalObjects: false,
    serverOptions: {
      headersTimeout,
      requestTimeout: Math.max(options.requestTimeoutMs ?? 60_000, headersTimeout),
      keepAliveTimeout: 5_000,
      // Each server-sent event goes out when written, not held back to be merged with the next one.
      noDelay: true,
      // Node checks both timeouts on this period (default 30 s): often enough for the shortest one.
      connectionsCheckingInterval: Math.min(1000, headersTimeout),
    },
  }) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 8000, options.host ?? '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const hostName = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    ...app,
    url: `http://${hostName}:${address.port}`,
    host,
    server,
    async close() {
      host.close();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
