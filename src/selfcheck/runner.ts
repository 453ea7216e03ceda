// Runs kernel cases and turns each into a pass/fail record with the numbers a report needs.

import type { GpuContext } from '../gpu/context';
import type { KernelCase } from './cases';
import { compareClose, describeComparison } from './compare';

export interface CaseResult {
  kernel: string;
  /** The shader files the case ran (its kernel, and any others its output depends on). */
  shaders: readonly string[];
  label: string;
  ranAs: string;
  pass: boolean;
  maxAbsErr: number;
  worstIndex: number;
  gpuMs: number;
  /** One line: ok with the max error, or the mismatch report (worst index, first pairs). */
  message: string;
}

export async function runCase(gpu: GpuContext, c: KernelCase): Promise<CaseResult> {
  try {
    const out = await c.execute(gpu);
    const cmp = compareClose(out.got, out.want, c.tolerance);
    return {
      kernel: c.kernel,
      shaders: c.shaders ?? [c.kernel],
      label: c.label,
      ranAs: out.ranAs,
      pass: cmp.pass,
      maxAbsErr: cmp.maxAbsErr,
      worstIndex: cmp.worstIndex,
      gpuMs: out.gpuMs,
      message: describeComparison(c.label, cmp, c.tolerance),
    };
  } catch (e) {
    const err = e as Error;
    return {
      kernel: c.kernel,
      shaders: c.shaders ?? [c.kernel],
      label: c.label,
      ranAs: '',
      pass: false,
      maxAbsErr: NaN,
      worstIndex: -1,
      gpuMs: NaN,
      message: `${c.label}: ${err.name}: ${err.message}`,
    };
  }
}

export async function runCases(
  gpu: GpuContext,
  cases: readonly KernelCase[],
  onResult?: (r: CaseResult, index: number) => void,
): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  for (const [i, c] of cases.entries()) {
    const r = await runCase(gpu, c);
    results.push(r);
    onResult?.(r, i);
  }
  return results;
}
