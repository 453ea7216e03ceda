// `npm run bench:sample`: the sampler alone (sample-runs.ts) in Node on Dawn's WebGPU, a quick
// view of what bench:kernels reports from the browser (`npm run bench:kernels -- --only=sample`).
// Prints one line per mode, a table, then one JSON line. Flags: --rows=N (default 1), --logits=flat,peaked.

import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBenchServer } from '../harness/server';
import { formatSampleTable } from './sample-report';
import type { SampleNodeResult } from './sample-node';
import type { SampleLogits } from './sample-runs';

const suiteDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(suiteDir, '..', '..');
const log = (line: string) => console.log(`[bench] ${line}`);

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const value = (name: string) => argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
  const rows = Number(value('rows') ?? 1);
  const logits = (value('logits') ?? 'flat,peaked').split(',') as SampleLogits[];
  if (!Number.isInteger(rows) || rows < 1) throw new Error(`--rows must be a positive integer, got ${value('rows')}`);
  if (logits.some((l) => l !== 'flat' && l !== 'peaked')) throw new Error(`--logits takes flat and/or peaked, got ${value('logits')}`);
  const server = await startBenchServer({ root: suiteDir, repoRoot, listen: false });
  try {
    const mod = await server.load<typeof import('./sample-node')>(join(suiteDir, 'sample-node.ts'));
    const result: SampleNodeResult = await mod.runSampleNode({ logits, rows, log });
    console.log('');
    console.log(`Adapter: ${result.adapter}`);
    console.log(formatSampleTable(result.figures));
    console.log(JSON.stringify({ bench: 'sample', ...result }));
  } finally {
    await server.close();
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : e);
  process.exitCode = 1;
});
