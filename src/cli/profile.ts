// `tessera profile`: GPU time per kernel kind for one vision tile, one prefill chunk and one decode step
// (engine.profile()), as three tables or, with --json, one JSON object.
//
// The engine's device is created with Dawn's timestamps unquantized (DAWN_EXACT_TIMESTAMPS): by default
// they come in steps of 65.5 µs, coarser than most kernels of a small model. Nothing else changes.

import { readFile } from 'node:fs/promises';
import { createEngine } from '../engine/create-node';
import { formatProfileReport } from '../engine/profile-report';
import { DAWN_EXACT_TIMESTAMPS } from '../gpu/node';
import type { ProfileArgs } from './args';

export interface ProfileCliOptions extends Omit<ProfileArgs, 'command' | 'verbose'> {
  out: (text: string) => void;
  err: (text: string) => void;
}

export async function profile(o: ProfileCliOptions): Promise<number> {
  const image = await readFile(o.image); // a wrong path fails before the model loads
  if (!o.json) o.err(`loading ${o.model}\n`);
  const t0 = performance.now();
  const engine = await createEngine({
    model: o.model,
    mmproj: o.mmproj,
    // A profile times WGSL dispatches: WebGPU whatever 'auto' would take.
    device: 'webgpu',
    dtype: o.dtype,
    compute: o.compute,
    weightCacheDir: o.weightCache === false ? false : undefined,
    gpu: { kernelVariant: o.variant, dawnOptions: [DAWN_EXACT_TIMESTAMPS] },
    decodePlan: o.decodePlan,
    // The profile sends the encoder no work (it loads the vision tower on the engine's device itself), so
    // the encoder stays on this thread rather than starting a worker.
    encoder: { mode: 'in-process', persistentCacheBytes: 0 },
  });
  try {
    if (!o.json) o.err(`loaded in ${((performance.now() - t0) / 1000).toFixed(1)} s; profiling\n\n`);
    const report = await engine.profile({ image, prompt: o.prompt, timing: o.timing });
    if (o.json) o.out(`${JSON.stringify({ model: o.model, ...report })}\n`);
    else o.out(`${formatProfileReport(report).join('\n')}\n`);
    return 0;
  } finally {
    engine.destroy();
  }
}
