// Starting encoder Web Workers (module workers bundled by Vite from workers/encoder.worker.ts).

import type { WorkerHandle } from './worker-pool';

export function spawnBrowserEncoderWorker(index: number): WorkerHandle {
  const worker = new Worker(new URL('../../workers/encoder.worker.ts', import.meta.url), {
    type: 'module',
    name: `tessera-encoder-${index}`,
  });
  return {
    endpoint: worker,
    terminate: () => worker.terminate(),
    onExit: (listener) => {
      worker.addEventListener('error', (e) => listener(`uncaught error in the worker: ${e.message || 'unknown'}`));
      worker.addEventListener('messageerror', () => listener('a message could not be deserialized'));
    },
  };
}
