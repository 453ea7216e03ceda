// The sampler's figures as a table (bench:sample, and the sample section of bench:kernels).

import { table } from '../harness/table';
import type { SampleFigures } from './sample-runs';

/** The sampler at vocab 49280 per logits row and mode (sample-runs.ts). */
export function formatSampleTable(figures: readonly SampleFigures[]): string {
  const rows = figures.map((f) => [
    f.logits,
    f.mode,
    f.measured.medianMs.toFixed(1),
    f.measured.minMs.toFixed(1),
    f.mode === 'greedy' ? '-' : f.samplerMs.toFixed(1),
    String(f.measured.reps),
    f.matchesReference ? 'yes' : 'NO',
  ]);
  const shape = figures.length > 0 ? `vocab ${figures[0].vocab}, ${figures[0].rows} row(s)` : 'no runs';
  return [
    `sample (${shape}): argmax + sample in one pass (greedy: argmax alone), ms per run, modes interleaved; sampler = median minus greedy's`,
    table(['logits', 'mode', 'median ms', 'min ms', 'sampler ms', 'reps', 'ids = reference'], rows),
    '  temperature 0.7 in every sampled mode; flat = uniform in [-4, 4), peaked = a wide body and 40 strong candidates',
  ].join('\n');
}
