// Prints a BenchResult as readable tables (Node side). The JSON line is printed by the runner.

import { isSkipped, type BenchResult, type DtypeMatmulFigures, type KernelsBenchResult, type Measured, type Skipped } from './result';
import { table } from '../harness/table';
import { formatSampleTable } from '../sample/sample-report';

/** Errors above this (inputs in [-1, 1), K <= 3072, f32) mean a wrong result, not rounding. */
const ERR_WARN = 1e-3;

const ms = (m: Measured | Skipped) => (isSkipped(m) ? '-' : m.medianMs.toFixed(1));
const gf = (m: Measured | Skipped) => (isSkipped(m) || m.gflops === undefined ? '-' : m.gflops.toFixed(3));
const reps = (m: Measured | Skipped) => (isSkipped(m) ? '-' : String(m.reps));
const ratio = (r: number | null) => (r === null ? '-' : `${r.toFixed(2)}x`);
const err = (m: Measured | Skipped) => (isSkipped(m) || m.maxAbsErr === undefined ? '-' : m.maxAbsErr.toExponential(1));

const FORMATS = ['f32', 'f16', 'q8', 'q4'];

/** The weight-dtype tables: matmul per dtype and variant (ViT GFLOP/s, decode weight GB/s vs copy), head sizes. */
function formatDtypes(r: BenchResult): string[] {
  const out: string[] = [];
  const variants = [r.kernelVariant, r.otherVariant];
  const cell = (list: DtypeMatmulFigures[], M: number, K: number, N: number, format: string, variant: string, what: 'gflops' | 'gbps') => {
    const f = list.find((d) => d.M === M && d.K === K && d.N === N && d.format === format && d.variant === variant);
    return f ? (f.measured[what] ?? 0).toFixed(what === 'gflops' ? 3 : 2) : '-';
  };
  const shapes = (list: DtypeMatmulFigures[]) => [...new Set(list.map((d) => `${d.M}×${d.K}×${d.N}`))].map((s) => s.split('×').map(Number));
  const header = ['M×K×N', ...variants.flatMap((v) => FORMATS.map((f) => `${v} ${f}`))];
  out.push('matmul by weight dtype: GFLOP/s at the ViT shapes (W dequantized in registers; err vs float64 on the dequantized W)');
  out.push(
    table(
      header,
      shapes(r.dtypes.vit).map(([M, K, N]) => [
        `${M}×${K}×${N}`,
        ...variants.flatMap((v) => FORMATS.map((f) => cell(r.dtypes.vit, M, K, N, f, v, 'gflops'))),
      ]),
    ),
  );
  out.push('');
  out.push(
    `decode rows by weight dtype: effective weight bandwidth GB/s (bytes of W in its format / time); copy roofline ${(r.copy.ours.gbps ?? 0).toFixed(2)} GB/s (read + write)`,
  );
  out.push(
    table(
      header,
      shapes(r.dtypes.decode).map(([M, K, N]) => [
        `${M}×${K}×${N}`,
        ...variants.flatMap((v) => FORMATS.map((f) => cell(r.dtypes.decode, M, K, N, f, v, 'gbps'))),
      ]),
    ),
  );
  out.push(
    table(
      ['decode ms', ...header.slice(1)],
      shapes(r.dtypes.decode).map(([M, K, N]) => [
        `${M}×${K}×${N}`,
        ...variants.flatMap((v) =>
          FORMATS.map((f) => {
            const d = r.dtypes.decode.find((x) => x.M === M && x.K === K && x.N === N && x.format === f && x.variant === v);
            return d ? d.measured.medianMs.toFixed(1) : '-';
          }),
        ),
      ]),
    ),
  );
  out.push('  plans: ' + [...new Set([...r.dtypes.vit, ...r.dtypes.decode].map((d) => d.measured.label))].join(', '));
  out.push('');
  out.push(
    'vit-attention by head size and plan (matmuls: QKᵀ, softmax, PV on the register matmul, the CPU-adapter default; ' +
      'tiled: K/V tiles in workgroup memory, a workgroup per block of queries, the GPU default; ' +
      'stream: one invocation per query, head held unrolled or in an indexed array; scratch: global memory besides qkv and out)',
  );
  out.push(
    table(
      ['T×H×D', 'plan', 'scratch MiB', 'pipeline ms', 'ms', 'GFLOP/s', 'err'],
      r.headDims.map((h) => [
        `${h.tokens}×${h.heads}×${h.headDim}`,
        h.plan,
        (h.scratchBytes / 2 ** 20).toFixed(2),
        h.compileMs.toFixed(0),
        ms(h.measured),
        gf(h.measured),
        err(h.measured),
      ]),
    ),
  );
  return out;
}

export function formatReport(result: KernelsBenchResult): string {
  const out: string[] = [];
  if (result.only === 'sample') {
    out.push(`Adapter: ${result.adapter}`);
    out.push(`Browser: ${result.userAgent}`);
    out.push(formatSampleTable(result.sample));
    out.push('');
    out.push(`Page time: ${result.pageSeconds.toFixed(1)} s`);
    return out.join('\n');
  }
  const r: BenchResult = result;
  out.push(`Adapter: ${r.adapter}`);
  out.push(`Kernel variant: ${r.kernelVariant} (device's choice); compared with: ${r.otherVariant}`);
  out.push(`Peer: onnxruntime-web ${r.ort.version}, ${r.ort.executionProvider} execution provider`);
  for (const note of r.ort.notes) out.push(`  - ${note}`);
  out.push(`Browser: ${r.userAgent}`);
  out.push(`Timed: ${r.timed}`);
  out.push(`Checked: ${r.checked}`);
  out.push('');
  out.push('matmul y = x·Wᵀ (W: [N, K]), flops = 2·M·N·K; ours/ORT = our GFLOP/s ÷ ORT GFLOP/s (>1: ours faster)');
  out.push(
    table(
      ['M×K×N', 'ours plan', 'ms', 'GFLOP/s', 'err', 'other plan', 'ms', 'GFLOP/s', 'err', 'ORT ms', 'GFLOP/s', 'err', 'ours/ORT'],
      r.matmul.map((m) => [
        `${m.M}×${m.K}×${m.N}`,
        m.ours.label,
        ms(m.ours),
        gf(m.ours),
        err(m.ours),
        m.other.label,
        ms(m.other),
        gf(m.other),
        err(m.other),
        ms(m.ort),
        gf(m.ort),
        err(m.ort),
        ratio(m.oursOverOrt),
      ]),
    ),
  );
  out.push(
    '  ms = median per run; timed reps ours/other/ORT: ' +
      r.matmul.map((m) => `${m.M}×${m.K}×${m.N} ${reps(m.ours)}/${reps(m.other)}/${reps(m.ort)}`).join(', '),
  );
  out.push('  err = max |y - float64 reference| over up to 4 sampled rows of y (first, last, two between)');
  for (const m of r.matmul) {
    const shape = `${m.M}×${m.K}×${m.N}`;
    out.push(`  ORT ${shape}: ${isSkipped(m.ort) ? m.ort.skipped : `dispatches ${(m.ort.dispatches ?? []).join(', ')}`}`);
  }
  const a = r.attention;
  out.push('');
  out.push(`vit-attention (fused qkv, batch ${a.batch}, ${a.tokens} tokens, ${a.heads} heads, head_dim ${a.headDim}), flops = 4·T²·D·H`);
  out.push(
    table(
      ['kernel', 'ms', 'GFLOP/s', 'reps', 'err', 'ours/this'],
      [
        [`ours ${a.ours.label}`, ms(a.ours), gf(a.ours), reps(a.ours), err(a.ours), '-'],
        ...a.peers.map((p) => [`peer ${p.peer.label}`, ms(p.peer), gf(p.peer), reps(p.peer), err(p.peer), ratio(p.oursOverPeer)]),
      ],
    ),
  );
  if (a.peers.length === 0) out.push('  peer: none');
  for (const p of a.peers) {
    if (isSkipped(p.peer)) out.push(`  peer ${p.peer.label}: none (${p.peer.skipped})`);
    else out.push(`  peer ${p.peer.label}: dispatches ${(p.peer.dispatches ?? []).join(', ')}`);
  }
  const c = r.copy;
  out.push('');
  out.push(`copy ${c.sizeBytes / 2 ** 20} MiB (GB/s counts ${c.bytesMoved / 2 ** 20} MiB read + written per run)`);
  out.push(table(['kernel', 'ms', 'GB/s', 'reps'], [[c.ours.label, ms(c.ours), (c.ours.gbps ?? 0).toFixed(2), reps(c.ours)]]));
  out.push('');
  out.push(...formatDtypes(r));
  out.push('');
  out.push(formatSampleTable(r.sample));
  const all = [
    ...r.matmul.flatMap((m) => [m.ours, m.other, m.ort]),
    a.ours,
    ...a.peers.map((p) => p.peer),
    ...r.dtypes.vit.map((d) => d.measured),
    ...r.dtypes.decode.map((d) => d.measured),
    ...r.headDims.map((h) => h.measured),
  ];
  const wrong = all.filter((m): m is Measured => !isSkipped(m) && m.maxAbsErr !== undefined && !(m.maxAbsErr <= ERR_WARN));
  if (wrong.length > 0) out.push('');
  for (const m of wrong) {
    out.push(
      `WARNING: ${m.label} differs from the float64 reference by ${m.maxAbsErr!.toExponential(2)}; its timing is of a wrong result.`,
    );
  }
  out.push('');
  out.push(`Page time: ${r.pageSeconds.toFixed(1)} s`);
  return out.join('\n');
}
