// Node side of `npm run bench:model`: our engine on Dawn's WebGPU (SwiftShader when there is no GPU),
// created with the public createEngine, once per weight dtype, then each dtype's accuracy
// against f32. Loaded by bench/model/model.ts through the Vite dev server's SSR loader (server.ssrLoadModule),
// because the engine imports its WGSL with `?raw`, which only Vite understands; the code that runs is the
// same src/.

import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { createEngine } from '../../src/engine/create-node';
import { adapterName } from '../../src/gpu/adapter-info';
import { createNodeGpuContext, DAWN_EXACT_TIMESTAMPS } from '../../src/gpu/node';
import type { LogitsAgreement } from '../../src/model/weights/accuracy';
import type { WeightDtype } from '../../src/model/weights/dtype';
import { DirWeightStore } from '../../src/model/weights/store-node';
import { BENCH_ENCODER_OPTIONS, describeEncoderOptions } from './model-engine-options';
import { measureAccuracy } from './model-dtypes';
import { measureContextCost, measureOurs, profileOurs } from './model-ours';
import { BENCH_IMAGE } from './model-request';
import type { OursFigures, Skipped } from './model-result';

export interface NodeRunOptions {
  modelDir: string;
  repoRoot: string;
  maxNewTokens: number;
  warmReps: number;
  /** Weight dtypes to run (f32 first: the others are compared with it). */
  dtypes: readonly WeightDtype[];
  /** Measure each dtype's accuracy against f32 (teacher forcing; minutes at this size). */
  accuracy: boolean;
  /** engine.profile() after each dtype's requests (per-kind GPU time). */
  profile: boolean;
  log: (line: string) => void;
}

export interface NodeRunResult {
  byDtype: Record<string, OursFigures | Skipped>;
  accuracy: Record<string, LogitsAgreement> | Skipped;
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

const errorText = (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));

async function runDtype(
  o: NodeRunOptions,
  dtype: WeightDtype,
  weightCacheDir: string,
  adapter: { adapter: string; kernelVariant: string },
) {
  o.log(`ours (node, ${dtype}): adapter ${adapter.adapter}, kernel variant ${adapter.kernelVariant}; loading ${o.modelDir}`);
  rmSync(weightCacheDir, { recursive: true, force: true }); // the first load quantizes and stores
  // Exact GPU timestamps for the profile (Dawn quantizes them to 65.5 µs otherwise); nothing else changes.
  const options = {
    model: o.modelDir,
    encoder: BENCH_ENCODER_OPTIONS,
    dtype,
    weightCacheDir,
    gpu: { dawnOptions: [DAWN_EXACT_TIMESTAMPS] },
    device: 'webgpu' as const,
  };
  const t0 = performance.now();
  const engine = await createEngine(options);
  const loadMs = performance.now() - t0;
  o.log(
    `ours (node, ${dtype}): loaded in ${(loadMs / 1000).toFixed(1)} s, weights ${(engine.stats().weightBytes / 2 ** 20).toFixed(0)} MiB`,
  );
  let figures: OursFigures;
  try {
    const run = {
      env: 'node' as const,
      dtype,
      adapter: adapter.adapter,
      kernelVariant: adapter.kernelVariant,
      engineOptions: `${describeEncoderOptions()}; dtype '${dtype}'`,
      loadMs,
      image: new Uint8Array(readFileSync(join(o.repoRoot, BENCH_IMAGE))),
      maxNewTokens: o.maxNewTokens,
      warmReps: o.warmReps,
      log: o.log,
    };
    figures = await measureOurs(engine, run);
    figures.contextCost = await measureContextCost(engine, run);
    if (o.profile) figures.profile = await profileOurs(engine, run);
  } finally {
    engine.destroy();
  }
  if (dtype !== 'f32') {
    const t1 = performance.now();
    const again = await createEngine(options);
    figures.storedLoadMs = performance.now() - t1;
    again.destroy();
    o.log(`ours (node, ${dtype}): second load from the stored quantized copies in ${(figures.storedLoadMs / 1000).toFixed(1)} s`);
  }
  return figures;
}

export async function runNode(o: NodeRunOptions): Promise<NodeRunResult> {
  const adapter = await describeAdapter();
  const weightCacheDir = join(o.repoRoot, '.cache/bench-weight-cache');
  const byDtype: Record<string, OursFigures | Skipped> = {};
  for (const dtype of o.dtypes) {
    try {
      byDtype[dtype] = await runDtype(o, dtype, weightCacheDir, adapter);
    } catch (e) {
      byDtype[dtype] = { skipped: `Node run failed: ${errorText(e)}` };
      o.log(`ours (node, ${dtype}): ${errorText(e)}`);
    }
  }
  let accuracy: Record<string, LogitsAgreement> | Skipped = { skipped: 'not requested (--no-accuracy, or only f32 ran)' };
  if (o.accuracy && o.dtypes.some((d) => d !== 'f32')) {
    const gpu = await createNodeGpuContext();
    try {
      accuracy = await measureAccuracy(gpu, o.modelDir, o.repoRoot, o.dtypes, new DirWeightStore(weightCacheDir), o.log);
    } catch (e) {
      accuracy = { skipped: `accuracy run failed: ${errorText(e)}` };
      o.log(accuracy.skipped);
    } finally {
      gpu.destroy();
    }
  }
  return { byDtype, accuracy };
}
