// The tests' stall watchdog (test/helpers/stall-watchdog.ts) ends a deliberately stuck test run within its
// limit, printing what was registered as waiting, instead of letting it sit until the test's timeout
// (test/fixtures/stall-watchdog/: a test awaiting a promise nothing settles). It ends the Vitest process
// with SIGTERM; this test's own limit kills with SIGKILL, so the two cannot be confused.

import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');

it('a stuck test fails within the limit and prints what it waited on', () => {
  const t0 = performance.now();
  const run = spawnSync(
    process.execPath,
    [resolve(root, 'node_modules/vitest/vitest.mjs'), 'run', '--config', 'test/fixtures/stall-watchdog/vitest.config.ts'],
    {
      cwd: root,
      env: { ...process.env, TESSERA_TEST_STALL_MS: '2000', CI: 'true' },
      encoding: 'utf8',
      timeout: 120_000,
      killSignal: 'SIGKILL',
    },
  );
  const seconds = (performance.now() - t0) / 1000;
  const output = `${run.stdout}\n${run.stderr}`;
  expect(run.signal, output).not.toBe('SIGKILL'); // not this test's limit
  expect(run.status, output).not.toBe(0); // Vitest exits 143 on the watchdog's SIGTERM
  expect(output).toContain('[stall watchdog] no progress for');
  expect(output).toContain('in "waits for ever"');
  expect(output).toContain('a pretend engine');
  expect(output).toContain('an encode that never settles');
  // Vitest's own start-up takes seconds; the test's 600 s timeout is nowhere near.
  expect(seconds).toBeLessThan(90);
}, 150_000);
