// The tests' stall watchdog (a setupFiles entry of the gpu and cpu projects in vite.config.ts). Every few
// seconds it checks whether the test worker got anywhere: a part registered in test/helpers/stall-watch.ts
// (engines, engines being created, GPU devices) progressed, or the process used CPU (a GPU on SwiftShader
// computes on the worker's threads). After TESSERA_TEST_STALL_MS (default 240 s) without either, it prints
// what each part waits on and the process's active handles, and ends the worker with exit code 1: a hang
// fails CI in minutes with a reason instead of sitting until a test's timeout (often 15 minutes here).
// Engines made by the test helpers also have the engine's own stall timeout (stallTimeoutMs), which fails
// the stuck request or creation alone, sooner; this is the backstop for everything else a test waits on.

import { readFileSync } from 'node:fs';
import { expect } from 'vitest';
import { progressFingerprint, stallReport } from './stall-watch';

const LIMIT_MS = Number(process.env.TESSERA_TEST_STALL_MS ?? 240_000);
const CHECK_MS = Math.min(5_000, Math.max(50, LIMIT_MS / 8));
/** CPU time (user + system) per check that counts as work, in microseconds: 2% of one core. */
const CPU_WORK_US = CHECK_MS * 1000 * 0.02;

const KEY = Symbol.for('tessera.test.stall-watchdog');
const host = globalThis as { [KEY]?: true };

// One watchdog per worker: with isolation off, this file runs again for every test file in the worker.
if (!host[KEY]) {
  host[KEY] = true;
  let last = progressFingerprint();
  let cpu = process.cpuUsage();
  let since = Date.now();
  const timer = setInterval(() => {
    const fingerprint = progressFingerprint();
    const used = process.cpuUsage(cpu);
    cpu = process.cpuUsage();
    if (fingerprint !== last || used.user + used.system > CPU_WORK_US) {
      last = fingerprint;
      since = Date.now();
      return;
    }
    if (Date.now() - since < LIMIT_MS) return;
    clearInterval(timer);
    const test = expect.getState().currentTestName ?? '(between tests, or in a hook)';
    process.stderr.write(
      `\n[stall watchdog] no progress for ${Math.round((Date.now() - since) / 1000)} s in "${test}" ` +
        `(no registered part progressed and the process was idle; limit TESSERA_TEST_STALL_MS=${LIMIT_MS}). ` +
        `What it waits on:\n${stallReport()}\n` +
        `active resources: ${JSON.stringify(process.getActiveResourcesInfo())}\n` +
        '[stall watchdog] ending the test run\n',
    );
    endRun();
  }, CHECK_MS);
  timer.unref();
}

/**
 * Ends the whole run: Vitest does not notice a forks-pool worker that exits in the middle of a test (the run
 * then sits until its own limit), so the worker ends its parent, the Vitest process (checked by its command
 * line), then itself, both with a failure.
 */
function endRun(): never {
  try {
    const parent = readFileSync(`/proc/${process.ppid}/cmdline`, 'utf8');
    if (parent.includes('vitest')) process.kill(process.ppid, 'SIGTERM');
  } catch {
    // not Linux, or the parent is gone: this worker's exit is all there is
  }
  process.exit(1);
}
