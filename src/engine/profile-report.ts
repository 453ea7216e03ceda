// engine.profile()'s numbers: dispatch timings grouped by kernel kind, and the tables `tessera profile`
// and bench:model print. Pure functions (no GPU), unit-tested.
//
//   label (kernels/*.ts)                      kind
//   matmul:register-wide:q4, matmul:gemv:f32:subgroups  -> matmul:register-wide, matmul:gemv  (by plan)
//   vit-attention[D=64,unrolled]              -> vit-attention      (head_dim and code style dropped)
//   embedding-gather:f16, quantize:q8         -> embedding-gather, quantize    (format dropped)
//   rms-norm, residual-add, ...               -> themselves
// The full labels stay in each row's `labels`.

import type { DispatchTiming, TimingMethod } from '../model/runner/model-runner';
import type { ProfilePhase, ProfileReport, ProfileRow } from './types';

/** The kernel kind of a dispatch label: its kernel name, and for matmul its plan. */
export function kernelKind(label: string): string {
  const [name, plan] = label.replace(/\[.*$/, '').split(':');
  return name === 'matmul' && plan ? `${name}:${plan}` : name;
}

/** One phase's rows: time, share, throughput and dispatch count per kind, largest time first. */
export function summarizePhase(name: ProfilePhase['name'], description: string, timings: readonly DispatchTiming[]): ProfilePhase {
  const byKind = new Map<
    string,
    { ms: number; flops: number; bytes: number; dispatches: number; labels: Set<string>; uncosted: boolean }
  >();
  for (const t of timings) {
    const kind = kernelKind(t.label);
    let k = byKind.get(kind);
    if (!k) byKind.set(kind, (k = { ms: 0, flops: 0, bytes: 0, dispatches: 0, labels: new Set(), uncosted: false }));
    k.ms += t.ms;
    k.dispatches++;
    k.labels.add(t.label);
    if (t.cost) {
      k.flops += t.cost.flops;
      k.bytes += t.cost.bytes;
    } else {
      k.uncosted = true;
    }
  }
  const totalMs = timings.reduce((a, t) => a + t.ms, 0);
  const rows: ProfileRow[] = [...byKind].map(([kind, k]) => {
    const row: ProfileRow = {
      kind,
      ms: k.ms,
      share: totalMs > 0 ? k.ms / totalMs : 0,
      dispatches: k.dispatches,
      labels: [...k.labels].sort(),
    };
    // A rate only where every dispatch of the kind has a cost and some time was measured.
    if (!k.uncosted && k.ms > 0) {
      if (k.flops > 0) row.gflops = k.flops / (k.ms * 1e6);
      if (k.bytes > 0) row.gbps = k.bytes / (k.ms * 1e6);
    }
    return row;
  });
  rows.sort((a, b) => b.ms - a.ms || a.kind.localeCompare(b.kind));
  return { name, description, totalMs, dispatches: timings.length, rows };
}

const PHASE_TITLES: Record<ProfilePhase['name'], string> = {
  'vision-tile': 'vision tile',
  'vision-image': 'vision image',
  'prefill-chunk': 'prefill chunk',
  'decode-step': 'decode step',
};

/** How the numbers were taken, in words (the first line under a report's header). */
export function describeTiming(timing: TimingMethod, quantumNs?: number): string {
  if (timing === 'submit-and-wait') {
    return 'timing: submit-and-wait: each dispatch submitted alone, waited for and timed on the CPU (no GPU timestamps; each time includes a submit and a wake-up, so small kernels read high)';
  }
  const quantum =
    quantumNs !== undefined && quantumNs >= 1000
      ? `; timestamps come in steps of ${(quantumNs / 1000).toFixed(1)} µs (quantized by the implementation), so kernels shorter than that read 0 or one step`
      : '';
  return `timing: GPU timestamps (timestamp-query) around each dispatch, one compute pass per dispatch${quantum}`;
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  return [
    line(header),
    widths.map((w) => '-'.repeat(w)).join('  '),
    ...rows.slice(0, -1).map(line),
    widths.map((w) => '-'.repeat(w)).join('  '),
    line(rows[rows.length - 1]),
  ];
}

/** Three significant digits (0.0123, 1.23, 123), whole numbers from 1000 up. */
const rate = (x: number | undefined) => (x === undefined ? '-' : x >= 1000 || x === 0 ? x.toFixed(0) : x.toPrecision(3));

/** One phase as a table: kind, ms, share, GFLOP/s, GB/s, dispatches; a total row last. */
export function formatPhase(p: ProfilePhase): string[] {
  const rows = p.rows.map((r) => [
    r.kind,
    r.ms.toFixed(3),
    `${(r.share * 100).toFixed(1)}%`,
    rate(r.gflops),
    rate(r.gbps),
    String(r.dispatches),
  ]);
  rows.push(['total', p.totalMs.toFixed(3), p.totalMs > 0 ? '100.0%' : '-', '', '', String(p.dispatches)]);
  return [
    `${PHASE_TITLES[p.name]}: ${p.description}`,
    ...table(['kind', 'ms', 'share', 'GFLOP/s', 'GB/s', 'dispatches'], rows).map((l) => `  ${l}`),
  ];
}

/** The whole report as text: device, timing method, the three tables and the notes. */
export function formatProfileReport(r: ProfileReport): string[] {
  const out = [
    `device: ${r.adapter}; kernel variant ${r.kernelVariant}; weights ${r.dtype}`,
    describeTiming(r.timing, r.timestampQuantumNs),
    '',
  ];
  for (const p of r.phases) out.push(...formatPhase(p), '');
  for (const n of r.notes) out.push(`note: ${n}`);
  return out;
}
