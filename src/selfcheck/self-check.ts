// The whole browser self-check: a device, every default case, the device destroyed again.
// Used on the page's main thread and inside workers/selfcheck.worker.ts.

import { createBrowserGpuContext } from '../gpu/browser';
import type { SelfCheckReport } from '../protocol/selfcheck';
import { defaultKernelCases } from './default-cases';
import { runCases, type CaseResult } from './runner';

export async function runBrowserSelfCheck(onResult?: (result: CaseResult, index: number, total: number) => void): Promise<SelfCheckReport> {
  const gpu = await createBrowserGpuContext();
  try {
    const cases = defaultKernelCases(gpu.features);
    const results = await runCases(gpu, cases, (r, i) => onResult?.(r, i, cases.length));
    return { adapter: gpu.adapter, results };
  } finally {
    gpu.destroy();
  }
}
