// Node side of `npm run bench:model`: our engine on Dawn's WebGPU (SwiftShader when there is no GPU),
// created with the public createEngine. Loaded by bench/model.ts through the Vite dev server's SSR loader
// (server.ssrLoadModule), because the engine imports its WGSL with `?raw`, which only Vite understands;
// the code that runs is the same src/.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine } from '../src/engine/create-node';
import { adapterName } from '../src/gpu/adapter-info';
import { createNodeGpuContext } from '../src/gpu/node';
import { BENCH_ENCODER_OPTIONS, describeEncoderOptions } from './model-engine-options';
import { measureOurs } from './model-ours';
import { BENCH_IMAGE } from './model-request';
import type { OursFigures } from './model-result';

export interface NodeRunOptions {
  modelDir: string;
  repoRoot: string;
  maxNewTokens: number;
  warmReps: number;
  log: (line: string) => void;
}

/** The adapter createEngine will get (same search), for the report; its device is destroyed at once. */
async function describeAdapter(): Promise<{ adapter: string; kernelVariant: string }> {
  const gpu = await createNodeGpuContext();
  try {
    return { adapter: adapterName(gpu.adapter), kernelVariant: gpu.kernelVariant };
  } finally {
    gpu.destroy();
  }
}

export async function runNode(options: NodeRunOptions): Promise<OursFigures> {
  const { adapter, kernelVariant } = await describeAdapter();
  options.log(`ours (node): adapter ${adapter}, kernel variant ${kernelVariant}; loading ${options.modelDir}`);
  const t0 = performance.now();
  const engine = await createEngine({ model: options.modelDir, encoder: BENCH_ENCODER_OPTIONS });
  const loadMs = performance.now() - t0;
  options.log(`ours (node): loaded in ${(loadMs / 1000).toFixed(1)} s`);
  try {
    return await measureOurs(engine, {
      env: 'node',
      adapter,
      kernelVariant,
      engineOptions: describeEncoderOptions(),
      loadMs,
      image: new Uint8Array(readFileSync(join(options.repoRoot, BENCH_IMAGE))),
      maxNewTokens: options.maxNewTokens,
      warmReps: options.warmReps,
      log: options.log,
    });
  } finally {
    engine.destroy();
  }
}
