// Node side of `npm run bench:sample`: the sampler bench (bench/sample/sample-runs.ts) on Dawn's WebGPU.
// Loaded through Vite's SSR loader by bench/sample/sample.ts, because the kernels import their WGSL with `?raw`.

import { adapterName } from '../../src/gpu/adapter-info';
import { createNodeGpuContext } from '../../src/gpu/node';
import { benchSample, type SampleFigures, type SampleLogits } from './sample-runs';

export interface SampleNodeResult {
  adapter: string;
  figures: SampleFigures[];
}

export async function runSampleNode(o: {
  logits: readonly SampleLogits[];
  rows: number;
  log: (line: string) => void;
}): Promise<SampleNodeResult> {
  const gpu = await createNodeGpuContext();
  try {
    const adapter = adapterName(gpu.adapter);
    o.log(`adapter: ${adapter}`);
    return { adapter, figures: await benchSample(gpu, { logits: o.logits, rows: o.rows, log: o.log }) };
  } finally {
    gpu.destroy();
  }
}
