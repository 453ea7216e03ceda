// Starting encoder worker threads in Node. The worker script is the built dist/encoder-worker.js (Vite
// inlines the WGSL there); callers running from source pass its path explicitly.

import { Worker, type WorkerOptions } from 'node:worker_threads';
import nodeEndpoint from 'comlink/dist/esm/node-adapter.mjs';
import { EncoderWorkerLoadError } from '../errors';
import type { WorkerHandle } from './worker-pool';

const LOAD_HINT = "reinstall tessera, pass the engine option encoder.workerScript, or set the engine option encoder.mode to 'in-process'";

/** `options`: passed to each Worker (resourceLimits, env, workerData, ...). */
export function nodeEncoderWorkerSpawner(script: URL | string, options: Omit<WorkerOptions, 'name'> = {}) {
  return (index: number): WorkerHandle => {
    const worker = new Worker(script, { ...options, name: `tessera-encoder-${index}` });
    // The worker answers comlink's first call once its script has loaded and run.
    let started = false;
    worker.once('message', () => (started = true));
    return {
      endpoint: nodeEndpoint(worker),
      terminate: () => void worker.terminate(),
      onExit: (listener) => {
        worker.on('error', (e: Error) => {
          if (started) listener(`uncaught error in the worker: ${e.message}`);
          else listener(`its script did not load: ${e.message}`, new EncoderWorkerLoadError(String(script), e.message, LOAD_HINT));
        });
        worker.on('exit', (code) => listener(`exited with code ${code}`));
      },
    };
  };
}
