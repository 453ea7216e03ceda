// Plain-text reports shared by `tessera doctor` and the demo page.

import { adapterName, type AdapterReport } from '../gpu/adapter-info';
import type { CaseResult } from './runner';

function human(n: number): string {
  if (n >= 2 ** 30) return `${(n / 2 ** 30).toFixed(n % 2 ** 30 === 0 ? 0 : 1)} GiB`;
  if (n >= 2 ** 20) return `${(n / 2 ** 20).toFixed(n % 2 ** 20 === 0 ? 0 : 1)} MiB`;
  if (n >= 2 ** 10) return `${(n / 2 ** 10).toFixed(n % 2 ** 10 === 0 ? 0 : 1)} KiB`;
  return String(n);
}

/** What the adapter means for weight dtypes: f16 storage everywhere, f16 math only with shader-f16. */
function dtypeLines(r: AdapterReport): string[] {
  const f16 = r.features.includes('shader-f16');
  const subgroups = r.features.includes('subgroups');
  return [
    `shader-f16     ${f16 ? "yes: compute 'f16' multiplies f16 weights in f16 (opt-in; f32 otherwise)" : "no: f16 weights are unpacked to f32 in the shaders; compute 'f16' falls back to f32 with a warning"}`,
    `weight dtypes  f32 (default), f16, q8, q4 on this adapter (createEngine({ dtype }), tessera run --dtype);`,
    `               q8: int8 + f32 scale per 32 along K, q4: 4 bits + f16 scale and min per 32, dequantized in registers`,
    `decode matmul  ${r.kernelVariant === 'register' ? 'register-narrow (1 row x 8 columns per invocation; 2 or 4 rows x 8 columns, sharing each load of W, for batched decode)' : `gemv: split-K, ${subgroups ? 'subgroup' : 'workgroup-memory'} reduction`}`,
  ];
}

export function formatAdapterReport(r: AdapterReport): string[] {
  const lines = [
    `adapter        ${adapterName(r)}${r.isCpu ? ' (CPU emulation)' : ''}`,
    `found via      ${r.source}`,
    `kernel variant ${r.kernelVariant} (${r.kernelVariant === 'register' ? 'register tiling, no barriers: suits CPU adapters' : 'workgroup-memory tiling: suits GPUs'})`,
    `features       ${r.features.join(', ') || '(none)'}`,
    ...dtypeLines(r),
    'limits',
  ];
  for (const [name, value] of Object.entries(r.limits)) {
    const bytes = /Size|Alignment/.test(name);
    lines.push(`  ${name.padEnd(34)} ${bytes ? human(value) : value}`);
  }
  return lines;
}

export function formatCaseLine(r: CaseResult): string {
  const status = r.pass ? 'PASS' : 'FAIL';
  const err = Number.isNaN(r.maxAbsErr) ? '-' : r.maxAbsErr.toExponential(2);
  const ms = Number.isNaN(r.gpuMs) ? '-' : r.gpuMs.toFixed(1);
  return `${status}  ${r.label.padEnd(64)} max err ${err.padStart(9)}  ${ms.padStart(8)} ms  ${r.ranAs}`;
}

export function formatSummary(results: readonly CaseResult[]): string {
  const failed = results.filter((r) => !r.pass);
  const kernels = new Set(results.map((r) => r.kernel)).size;
  return failed.length === 0
    ? `all ${results.length} checks passed (${kernels} kernels)`
    : `${failed.length} of ${results.length} checks FAILED:\n${failed.map((r) => `  ${r.message}`).join('\n')}`;
}
