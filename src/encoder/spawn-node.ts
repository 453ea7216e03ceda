// Starting encoder worker threads in Node. The worker script is the built dist/encoder-worker.js (Vite
// inlines the WGSL there); callers running from source pass its path explicitly.

import { Worker, type WorkerOptions } from 'node:worker_threads';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import type { WorkerHandle } from './worker-pool';

/** `options`: passed to each Worker (resourceLimits, env, workerData, ...). */
export function nodeEncoderWorkerSpawner(script: URL | string, options: Omit<WorkerOptions, 'name'> = {}) {
  return (index: number): WorkerHandle => {
    const worker = new Worker(script, { ...options, name: `tessera-encoder-${index}` });
    return {
      endpoint: nodeEndpoint(worker),
      terminate: () => void worker.terminate(),
      onExit: (listener) => {
        worker.on('error', (e: Error) => listener(`uncaught error in the worker: ${e.message}`));
        worker.on('exit', (code) => listener(`exited with code ${code}`));
      },
    };
  };
}
