// Shared set-up for the GPU tests: one Dawn device for the whole run (the gpu project runs its files in
// one worker without isolation), so pipelines compiled by one file are reused by the next: the unrolled
// register kernels take seconds each to compile on SwiftShader. And a check that fails with the case's
// mismatch report (kernel, shape, worst index, max error, first pairs).

import { beforeAll } from 'vitest';
import type { GpuContext } from '../../src/gpu/context';
import { createNodeGpuContext } from '../../src/gpu/node';
import type { KernelCase } from '../../src/selfcheck/cases';
import { runCase } from '../../src/selfcheck/runner';
import { watch } from '../helpers/stall-watch';

let shared: Promise<GpuContext> | undefined;

export function useGpu(): () => GpuContext {
  let gpu: GpuContext | undefined;
  beforeAll(async () => {
    shared ??= createNodeGpuContext().then((g) => {
      watch({ label: 'the shared GPU device', progress: () => g.pending.settled, report: () => ({ pending: g.pending.list() }) });
      return g;
    });
    gpu = await shared;
  });
  return () => {
    if (!gpu) throw new Error('GPU context not ready');
    return gpu;
  };
}

export async function expectCasePasses(gpu: GpuContext, c: KernelCase): Promise<void> {
  const r = await runCase(gpu, c);
  if (!r.pass) throw new Error(r.message);
}
