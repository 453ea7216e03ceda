// Engines made by the test helpers are watched for stalls twice over: the engine's own watchdog
// (stallTimeoutMs, TESSERA_TEST_ENGINE_STALL_MS, default 120 s) fails a stuck request or creation with
// EngineStalledError, which names what it waited on; and each engine registers with the tests' stall
// watchdog (stall-watch.ts), so the worker's backstop can print its state if anything else hangs.

import type { Engine } from '../../src/engine/engine';
import { watch } from './stall-watch';

export const TEST_ENGINE_STALL_MS = Number(process.env.TESSERA_TEST_ENGINE_STALL_MS ?? 120_000);

/** Creates an engine through `create` (given an onProgress to pass on), registered while it lives. */
export async function watchedEngine<E extends Engine>(label: string, create: (onProgress: () => void) => Promise<E>): Promise<E> {
  let events = 0;
  const creating = watch({ label: `${label} (being created)`, progress: () => events, report: () => ({ progressEvents: events }) });
  let engine: E;
  try {
    engine = await create(() => events++);
  } finally {
    creating();
  }
  const unwatch = watch({
    label,
    progress: () => {
      const s = engine.stats();
      return `${s.requests}|${s.scheduler.numSteps}|${s.encoder.encodes}|${JSON.stringify(s.lifecycle)}`;
    },
    report: () => engine.waitState(),
  });
  const destroy = engine.destroy.bind(engine);
  engine.destroy = () => {
    unwatch();
    destroy();
  };
  return engine;
}
