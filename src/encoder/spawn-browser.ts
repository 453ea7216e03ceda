// Starting encoder Web Workers.
//
// `new Worker(new URL('<relative literal>', import.meta.url), { type: 'module' })` is the form an app's
// bundler (Vite, webpack, Parcel, Rollup's and esbuild's worker plugins) recognises: it bundles the worker
// script with its imports and rewrites the URL. So the expression below must stay exactly in that form.
// From source (the demo, the tests) the literal names workers/encoder.worker.ts; the package build
// (vite.config.ts, `packageEncoderWorker`) turns it into './encoder.worker.js', which sits beside this
// chunk in dist/.

import { EncoderWorkerLoadError } from '../errors';
import type { WorkerHandle } from './worker-pool';

/** The worker script relative to this module (the package build rewrites it, as the literal below). */
const ENCODER_WORKER_FILE = '../../workers/encoder.worker.ts';

const LOAD_HINT =
  "with the dev server of Vite 7 or older, exclude tessera from dependency pre-bundling (optimizeDeps: { exclude: ['tessera', 'onnxruntime-web'] }); " +
  "otherwise make sure the app's bundler emits tessera's encoder.worker.js and the server sends it as JavaScript, " +
  "or set the engine option encoder.mode to 'in-process'";

/**
 * The runtime's Web Worker, as it was when this module loaded. In Deno, onnxruntime-web's WebAssembly glue
 * takes the runtime for Node (Deno defines `process` for npm packages) and sets the global `Worker` to
 * worker_threads' (measured with Deno 2.9), which has no addEventListener; the CPU backend loads it before
 * the encoder workers start.
 */
const webWorker = globalThis.Worker;

export function spawnBrowserEncoderWorker(index: number): WorkerHandle {
  const replaced = globalThis.Worker !== webWorker ? globalThis.Worker : undefined;
  if (replaced) globalThis.Worker = webWorker;
  let worker: Worker;
  try {
    worker = new Worker(new URL('../../workers/encoder.worker.ts', import.meta.url), {
      type: 'module',
      name: `tessera-encoder-${index}`,
    });
  } finally {
    if (replaced) globalThis.Worker = replaced;
  }
  // The worker answers comlink's first call once its script has loaded and run.
  let started = false;
  worker.addEventListener('message', () => (started = true), { once: true });
  return {
    endpoint: worker,
    terminate: () => worker.terminate(),
    onExit: (listener) => {
      worker.addEventListener('error', (e) => {
        // A script that cannot be fetched, or is not JavaScript (a 404, an HTML page in its place), fires a
        // plain Event; an exception thrown by the script fires an ErrorEvent with its message.
        const message = e instanceof ErrorEvent ? e.message : '';
        if (!started) {
          const detail = message || 'not found, or not served as JavaScript';
          listener(`its script did not load: ${detail}`, new EncoderWorkerLoadError(expectedScriptUrl(), detail, LOAD_HINT));
        } else {
          listener(`uncaught error in the worker: ${message || 'unknown'}`);
        }
      });
      worker.addEventListener('messageerror', () => listener('a message could not be deserialized'));
    },
  };
}

/**
 * Where the worker script is when no bundler rewrote the reference above: the URL a browser fetched when
 * it failed to load in the common cases (an app bundler or dev server that did not pick it up). Written
 * without `new URL('literal', import.meta.url)` so that no bundler takes it for another asset.
 */
function expectedScriptUrl(): string {
  const base = import.meta.url;
  return new URL(ENCODER_WORKER_FILE, base).href;
}
