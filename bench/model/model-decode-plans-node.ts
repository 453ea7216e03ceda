// The decode plans (model-decode-plans.ts) in Node, on Dawn: loaded through the benchmarks' Vite server, as
// model-node.ts is.

import { createNodeGpuContext } from '../../src/gpu/node';
import { NodeDirSource } from '../../src/io/model-source-node';
import { type DecodePlansResult, runDecodePlans } from './model-decode-plans';

export async function runDecodePlansNode(o: { modelDir: string; steps: number; log: (line: string) => void }): Promise<DecodePlansResult> {
  const gpu = await createNodeGpuContext();
  try {
    return await runDecodePlans({ env: 'node', gpu, source: () => new NodeDirSource(o.modelDir), steps: o.steps, log: o.log });
  } finally {
    gpu.destroy();
  }
}
