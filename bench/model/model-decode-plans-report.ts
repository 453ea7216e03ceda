// The decode plans' table (model-decode-plans.ts), fused over separate as ratios. Its own file: model.ts
// runs under tsx, which cannot import the engine (WGSL `?raw`), so it may import only this.

import type { DecodePlansResult, VitAttentionFigures } from './model-decode-plans';

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
    `decode plans in ${r.env === 'node' ? 'Node (Dawn)' : 'Chromium'}, ${fused.layers} layers (goal for fused: <= ${goal} dispatches per step, <= 0.3 ms to encode one; timer resolution ${(r.timerResolutionMs * 1000).toFixed(1)} us)`,
    '| | separate | fused | fused / separate |',
    '|---|---|---|---|',
    ...rows.map((row) => `| ${row.join(' | ')} |`),
    `same greedy tokens: ${r.sameTokens ? 'yes' : `NO (separate ${separate.tokens.join(',')}; fused ${fused.tokens.join(',')})`}`,
    ...(r.vitAttention ? [formatVitAttention(r.vitAttention)] : []),
  ].join('\n');
}

function formatVitAttention(v: VitAttentionFigures): string {
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(2)} MiB`;
  const plans = Object.entries(v.scratchBytes).map(([plan, bytes]) => `${plan} ${mib(bytes)}`);
  return (
    `one vision tile's attention (${v.tokens} tokens x ${v.heads} heads x ${v.headDim}), global scratch (goal <= 1 MiB on GPUs): ` +
    `${plans.join(', ')}; GPUs run ${v.chosen.workgroup} (${mib(v.scratchBytes[v.chosen.workgroup])}), CPU adapters ${v.chosen.register}`
  );
}
