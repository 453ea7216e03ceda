// Shared set-up for the GPU tests: one Dawn device per test file, and a check that fails with the
// case's mismatch report (kernel, shape, worst index, max error, first pairs).

import { afterAll, beforeAll } from 'vitest';
import type { GpuContext } from '../../src/gpu/context';
import { createNodeGpuContext } from '../../src/gpu/node';
import type { KernelCase } from '../../src/selfcheck/cases';
import { runCase } from '../../src/selfcheck/runner';

export function useGpu(): () => GpuContext {
  let gpu: GpuContext | undefined;
  beforeAll(async () => {
    gpu = await createNodeGpuContext();
  });
  afterAll(() => gpu?.destroy());
  return () => {
    if (!gpu) throw new Error('GPU context not ready');
    return gpu;
  };
}

export async function expectCasePasses(gpu: GpuContext, c: KernelCase): Promise<void> {
  const r = await runCase(gpu, c);
  if (!r.pass) throw new Error(r.message);
}
