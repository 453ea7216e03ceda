// `tessera doctor`: which adapter Tessera gets, what it offers, and every kernel run once against its
// CPU reference with pass/fail and the max error.

import type { GpuContext } from '../gpu/context';
import { defaultKernelCases } from '../selfcheck/default-cases';
import { formatAdapterReport, formatCaseLine, formatSummary } from '../selfcheck/report';
import { runCases, type CaseResult } from '../selfcheck/runner';

export interface DoctorResult {
  pass: boolean;
  results: CaseResult[];
}

export async function doctor(gpu: GpuContext, print: (line: string) => void): Promise<DoctorResult> {
  for (const line of formatAdapterReport(gpu.adapter)) print(line);
  print('');
  print('kernel self-check (each kernel against its float64 CPU reference)');
  const results = await runCases(gpu, defaultKernelCases(gpu.features), (r) => print(formatCaseLine(r)));
  print('');
  print(formatSummary(results));
  return { pass: results.every((r) => r.pass), results };
}
