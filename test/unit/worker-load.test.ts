// An encoder worker whose script does not load fails with EncoderWorkerLoadError naming the script, and
// is not restarted (a restart would load the same script); no GPU is involved since nothing loads.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { nodeEncoderWorkerSpawner } from '../../src/encoder/spawn-node';
import { EncoderWorkerPool } from '../../src/encoder/worker-pool';
import { EncoderWorkerLoadError } from '../../src/errors';

const dir = mkdtempSync(join(tmpdir(), 'tessera-worker-load-'));
const init = { model: { kind: 'dir' as const, path: dir }, modelId: 'none', maxBatchTiles: 1 };

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function startError(script: URL): Promise<unknown> {
  return EncoderWorkerPool.start(nodeEncoderWorkerSpawner(script), init, 2).then(
    (pool) => {
      pool.destroy();
      throw new Error('the pool started');
    },
    (e: unknown) => e,
  );
}

describe('encoder worker load failures', () => {
  it('a missing script: EncoderWorkerLoadError with its path, not a crash to retry', async () => {
    const script = pathToFileURL(join(dir, 'missing-worker.js'));
    const e = await startError(script);
    expect(e).toBeInstanceOf(EncoderWorkerLoadError);
    expect((e as EncoderWorkerLoadError).url).toBe(script.href);
    expect((e as Error).message).toMatch(/^the encoder worker script file:.*missing-worker\.js did not load \(.*Cannot find module/);
  });

  it('a script that throws while loading: the same error, with what it threw', async () => {
    const script = join(dir, 'throwing-worker.mjs');
    writeFileSync(script, "throw new Error('broken at load');\n");
    const e = await startError(pathToFileURL(script));
    expect(e).toBeInstanceOf(EncoderWorkerLoadError);
    expect((e as Error).message).toContain('broken at load');
  });
});
