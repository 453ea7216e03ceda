// Prints a BenchResult as readable tables (Node side). The JSON line is printed by the runner.

import { isSkipped, type BenchResult, type Measured, type Skipped } from './result';

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const ms = (m: Measured | Skipped) => (isSkipped(m) ? '-' : m.medianMs.toFixed(1));
const gf = (m: Measured | Skipped) => (isSkipped(m) || m.gflops === undefined ? '-' : m.gflops.toFixed(3));
const reps = (m: Measured | Skipped) => (isSkipped(m) ? '-' : String(m.reps));
const ratio = (r: number | null) => (r === null ? '-' : `${r.toFixed(2)}x`);
const diff = (d: number | null) => (d === null ? '-' : d.toExponential(1));

export function formatReport(r: BenchResult): string {
  const out: string[] = [];
  out.push(`Adapter: ${r.adapter}`);
  out.push(`Kernel variant: ${r.kernelVariant} (device's choice); compared with: ${r.otherVariant}`);
  out.push(`Peer: onnxruntime-web ${r.ort.version}, ${r.ort.executionProvider} execution provider`);
  for (const note of r.ort.notes) out.push(`  - ${note}`);
  out.push(`Browser: ${r.userAgent}`);
  out.push(`Timed: ${r.timed}`);
  out.push('');
  out.push('matmul y = x·Wᵀ (W: [N, K]), flops = 2·M·N·K; ours/ORT = our GFLOP/s ÷ ORT GFLOP/s (>1: ours faster)');
  out.push(
    table(
      ['M×K×N', 'ours plan', 'ms', 'GFLOP/s', 'reps', 'other plan', 'ms', 'GFLOP/s', 'reps', 'ORT ms', 'GFLOP/s', 'reps', 'ours/ORT', 'max|Δ|'],
      r.matmul.map((m) => [
        `${m.M}×${m.K}×${m.N}`,
        m.ours.label,
        ms(m.ours),
        gf(m.ours),
        reps(m.ours),
        m.other.label,
        ms(m.other),
        gf(m.other),
        reps(m.other),
        ms(m.ort),
        gf(m.ort),
        reps(m.ort),
        ratio(m.oursOverOrt),
        diff(m.maxAbsDiffVsOrt),
      ]),
    ),
  );
  for (const m of r.matmul) {
    if (isSkipped(m.ort)) out.push(`  ORT ${m.M}×${m.K}×${m.N}: ${m.ort.skipped}`);
  }
  const a = r.attention;
  out.push('');
  out.push(
    `vit-attention (fused qkv, batch ${a.batch}, ${a.tokens} tokens, ${a.heads} heads, head_dim ${a.headDim}), flops = 4·T²·D·H`,
  );
  const peerLabel = isSkipped(a.peer) ? 'none' : a.peer.label;
  out.push(
    table(
      ['kernel', 'ms', 'GFLOP/s', 'reps', 'peer', 'ms', 'GFLOP/s', 'reps', 'ours/peer', 'max|Δ|'],
      [[a.ours.label, ms(a.ours), gf(a.ours), reps(a.ours), peerLabel, ms(a.peer), gf(a.peer), reps(a.peer), ratio(a.oursOverPeer), diff(a.maxAbsDiffVsPeer)]],
    ),
  );
  if (isSkipped(a.peer)) out.push(`  peer: none (${a.peer.skipped})`);
  const c = r.copy;
  out.push('');
  out.push(`copy ${c.sizeBytes / 2 ** 20} MiB (GB/s counts ${c.bytesMoved / 2 ** 20} MiB read + written per run)`);
  out.push(
    table(
      ['kernel', 'ms', 'GB/s', 'reps'],
      [[c.ours.label, ms(c.ours), (c.ours.gbps ?? 0).toFixed(2), reps(c.ours)]],
    ),
  );
  out.push('');
  out.push(`Page time: ${r.pageSeconds.toFixed(1)} s`);
  return out.join('\n');
}
