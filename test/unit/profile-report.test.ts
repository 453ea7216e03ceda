// engine.profile()'s aggregation (src/engine/profile-report.ts): kernel kinds from labels, per-kind time,
// share, throughput and dispatch counts, and the tables `tessera profile` prints. Exact numbers, no GPU.

import { describe, expect, it } from 'vitest';
import { describeTiming, formatPhase, formatProfileReport, kernelKind, summarizePhase } from '../../src/engine/profile-report';
import type { DispatchTiming } from '../../src/kernels/dispatch-timer';

const t = (label: string, ms: number, flops?: number, bytes?: number): DispatchTiming => ({
  label,
  ms,
  cost: flops === undefined ? undefined : { flops, bytes: bytes ?? 0 },
});

describe('kernelKind', () => {
  it('keeps the kernel name, and for matmul its plan', () => {
    expect(kernelKind('matmul:register-wide:f32')).toBe('matmul:register-wide');
    expect(kernelKind('matmul:register-narrow:q4')).toBe('matmul:register-narrow');
    expect(kernelKind('matmul:gemv:f16:subgroups')).toBe('matmul:gemv');
    expect(kernelKind('matmul:workgroup:q8')).toBe('matmul:workgroup');
    expect(kernelKind('vit-attention[D=64,unrolled]')).toBe('vit-attention');
    expect(kernelKind('paged-attention[D=128,loop]')).toBe('paged-attention');
    expect(kernelKind('embedding-gather:f16')).toBe('embedding-gather');
    expect(kernelKind('quantize:q4')).toBe('quantize');
    for (const k of [
      'rms-norm',
      'layer-norm',
      'residual-add',
      'rope',
      'kv-write',
      'sample',
      'argmax',
      'patch-embed',
      'pixel-shuffle',
      'splice',
      'swiglu',
    ]) {
      expect(kernelKind(k)).toBe(k);
    }
  });
});

describe('summarizePhase', () => {
  const timings = [
    t('embedding-gather:f32', 1, 0, 4000),
    t('matmul:register-wide:f32', 4, 8e6, 2e6),
    t('rms-norm', 2, 0, 1e6),
    t('matmul:register-wide:q4', 4, 8e6, 1e6),
    t('paged-attention[D=64,unrolled]', 3, 3e6, 3e5),
    t('rms-norm', 2, 0, 1e6),
    t('splice', 0.5), // no cost
    t('argmax', 0, 0, 100), // too short to measure
  ];
  const p = summarizePhase('decode-step', '1 token', timings);

  it('adds time and dispatches per kind and sorts by time, largest first', () => {
    expect(p.name).toBe('decode-step');
    expect(p.description).toBe('1 token');
    expect(p.totalMs).toBe(16.5);
    expect(p.dispatches).toBe(8);
    expect(p.rows.map((r) => [r.kind, r.ms, r.dispatches])).toEqual([
      ['matmul:register-wide', 8, 2],
      ['rms-norm', 4, 2],
      ['paged-attention', 3, 1],
      ['embedding-gather', 1, 1],
      ['splice', 0.5, 1],
      ['argmax', 0, 1],
    ]);
    expect(p.rows.reduce((a, r) => a + r.dispatches, 0)).toBe(timings.length);
    expect(p.rows[0].labels).toEqual(['matmul:register-wide:f32', 'matmul:register-wide:q4']);
  });

  it('gives each kind its share of the phase; the shares sum to 1', () => {
    expect(p.rows[0].share).toBeCloseTo(8 / 16.5, 12);
    expect(p.rows.reduce((a, r) => a + r.share, 0)).toBeCloseTo(1, 12);
  });

  it('gives GFLOP/s where the kind computes and GB/s where it moves bytes; none without a cost or a time', () => {
    const row = (kind: string) => p.rows.find((r) => r.kind === kind)!;
    // 16e6 flops in 8 ms = 2 GFLOP/s; 3e6 bytes in 8 ms = 0.375 GB/s.
    expect(row('matmul:register-wide').gflops).toBeCloseTo(2, 12);
    expect(row('matmul:register-wide').gbps).toBeCloseTo(0.375, 12);
    expect(row('paged-attention').gflops).toBeCloseTo(1, 12);
    expect(row('rms-norm').gflops).toBeUndefined();
    expect(row('rms-norm').gbps).toBeCloseTo(0.5, 12);
    expect(row('splice').gbps).toBeUndefined();
    expect(row('argmax').gbps).toBeUndefined();
  });

  it('leaves a kind without a rate when one of its dispatches has no cost', () => {
    const q = summarizePhase('prefill-chunk', '', [t('rms-norm', 1, 0, 1e6), t('rms-norm', 1)]);
    expect(q.rows[0]).toMatchObject({ kind: 'rms-norm', ms: 2, dispatches: 2 });
    expect(q.rows[0].gbps).toBeUndefined();
  });

  it('reports an empty or all-zero phase without dividing by zero', () => {
    expect(summarizePhase('vision-tile', '', [])).toEqual({ name: 'vision-tile', description: '', totalMs: 0, dispatches: 0, rows: [] });
    const z = summarizePhase('vision-tile', '', [t('rope', 0, 0, 10)]);
    expect(z.rows[0]).toMatchObject({ share: 0, ms: 0 });
  });
});

describe('profile tables', () => {
  const phase = summarizePhase('prefill-chunk', '16 tokens', [t('matmul:register-wide:f32', 3, 6e6, 3e5), t('rms-norm', 1, 0, 1234)]);

  it('prints kind, ms, share, GFLOP/s, GB/s and dispatches, with a total row', () => {
    expect(formatPhase(phase)).toEqual([
      'prefill chunk: 16 tokens',
      '  kind                     ms   share  GFLOP/s     GB/s  dispatches',
      '  --------------------  -----  ------  -------  -------  ----------',
      '  matmul:register-wide  3.000   75.0%     2.00    0.100           1',
      '  rms-norm              1.000   25.0%        -  0.00123           1',
      '  --------------------  -----  ------  -------  -------  ----------',
      '  total                 4.000  100.0%                             2',
    ]);
  });

  it('says how the numbers were timed', () => {
    expect(describeTiming('timestamp-query')).toMatch(/^timing: GPU timestamps \(timestamp-query\) around each dispatch/);
    expect(describeTiming('timestamp-query', 65536)).toMatch(/steps of 65\.5 µs \(quantized by the implementation\)/);
    expect(describeTiming('timestamp-query', 1)).not.toMatch(/quantized/);
    expect(describeTiming('submit-and-wait')).toMatch(
      /^timing: submit-and-wait: each dispatch submitted alone, waited for and timed on the CPU/,
    );
  });

  it('prints the device, the timing, each phase and the notes', () => {
    const text = formatProfileReport({
      timing: 'submit-and-wait',
      adapter: 'some adapter',
      kernelVariant: 'register',
      dtype: 'q4',
      phases: [phase],
      notes: ['a note'],
    });
    expect(text[0]).toBe('device: some adapter; kernel variant register; weights q4');
    expect(text[1]).toMatch(/^timing: submit-and-wait/);
    expect(text).toContain('prefill chunk: 16 tokens');
    expect(text.at(-1)).toBe('note: a note');
  });
});
