// The decode plans' table (model-decode-plans.ts), fused over separate as ratios. Its own file: model.ts
// runs under tsx, which cannot import the engine (WGSL `?raw`), so it may import only this.

import type { DecodePlansResult } from './model-decode-plans';

export function formatDecodePlans(r: DecodePlansResult): string {
  const separate = r.plans.find((p) => p.plan === 'separate');
  const fused = r.plans.find((p) => p.plan === 'fused');
  if (!separate || !fused) return `decode plans: only ${r.plans.map((p) => p.plan).join(', ')} ran`;
  const ratio = (a: number, b: number) => (b > 0 ? `${(a / b).toFixed(2)}x` : '-');
  const rows: Array<[string, string, string, string]> = [
    [
      'dispatches per decode step',
      String(separate.dispatchesPerDecodeStep),
      String(fused.dispatchesPerDecodeStep),
      ratio(fused.dispatchesPerDecodeStep, separate.dispatchesPerDecodeStep),
    ],
    ['JS ms to encode a decode step', separate.encodeMs.toFixed(3), fused.encodeMs.toFixed(3), ratio(fused.encodeMs, separate.encodeMs)],
    [
      `decode step ms (${fused.kernelVariant} kernels)`,
      separate.stepMs.toFixed(1),
      fused.stepMs.toFixed(1),
      ratio(fused.stepMs, separate.stepMs),
    ],
  ];
  const goal = 4 * fused.layers + 3;
  return [
    `decode plans, ${fused.layers} layers (goal for fused: <= ${goal} dispatches per step, <= 0.3 ms to encode one)`,
    '| | separate | fused | fused / separate |',
    '|---|---|---|---|',
    ...rows.map((row) => `| ${row.join(' | ')} |`),
    `same greedy tokens: ${r.sameTokens ? 'yes' : `NO (separate ${separate.tokens.join(',')}; fused ${fused.tokens.join(',')})`}`,
  ].join('\n');
}
