// The sampler at the decode head's shape (vocab 49280, one row), timed the way a decode step runs it:
// argmax then sample in one compute pass, submit, wait for the queue; the modes take turns, one run each
// per round, and each reports the median (and min) of its runs. "greedy" is argmax alone, as a decode
// step with no sampling row runs it (LanguageModel leaves the sampler out), so each mode's sampler cost
// is its time minus greedy's.
// Two logit rows: "flat" (uniform in [-4, 4), the self-check's: top-p 0.9 keeps about a fifth of the
// vocabulary) and "peaked" (a trained LM's shape: a wide body and a few dozen strong candidates, so the
// nucleus is small). After its timed runs, each mode's id is checked against sampleReference. Used by
// bench:kernels (browser) and bench:sample (Node).

import type { GpuContext } from '../../src/gpu/context';
import { argmaxReference, prepareArgmax } from '../../src/kernels/argmax';
import { submitDispatches } from '../../src/kernels/dispatch';
import { packRowParams, prepareSample, ROW_PARAMS_BYTES, sampleReference, type SamplingParams } from '../../src/kernels/sample';
import { mulberry32, randomUniform } from '../../src/selfcheck/random';
import type { Measured } from '../harness/timing';
import { median } from '../harness/timing';

export const SAMPLE_VOCAB = 49280;

type Mode = Omit<SamplingParams, 'seed' | 'step'>;

/** The modes timed; the first (argmax alone) is the baseline. */
export const SAMPLE_MODES: readonly (readonly [string, Mode])[] = [
  ['greedy', { temperature: 0, topK: 0, topP: 1 }],
  ['temperature 0.7', { temperature: 0.7, topK: 0, topP: 1 }],
  ['top-k 50', { temperature: 0.7, topK: 50, topP: 1 }],
  ['top-p 0.9', { temperature: 0.7, topK: 0, topP: 0.9 }],
  ['top-k 50 + top-p 0.9', { temperature: 0.7, topK: 50, topP: 0.9 }],
];

export type SampleLogits = 'flat' | 'peaked';

export interface SampleFigures {
  logits: SampleLogits;
  mode: string;
  params: Mode;
  vocab: number;
  rows: number;
  /** argmax + sample (greedy: argmax alone), per run. */
  measured: Measured;
  /** measured minus the greedy run's median (the sampler's own cost), ms. */
  samplerMs: number;
  /** The sampled ids equal sampleReference's. */
  matchesReference: boolean;
}

/** One logits row of `vocab` entries, seeded. */
export function sampleLogits(kind: SampleLogits, vocab: number, seed: number): Float32Array {
  if (kind === 'flat') return randomUniform(vocab, seed, -4, 4);
  const next = mulberry32(seed);
  const out = new Float32Array(vocab);
  // Body: a sum of three uniforms (roughly normal, sd 2 around -2); then 40 candidates between 6 and 14.
  for (let i = 0; i < vocab; i++) out[i] = -2 + 4 * (next() + next() + next() - 1.5);
  for (let j = 0; j < 40; j++) out[Math.floor(next() * vocab)] = 6 + 8 * next();
  return out;
}

/** Timed runs per mode, interleaved (one of each mode per round) so a change in machine load hits all alike. */
const ROUNDS = 30;

export async function benchSample(
  gpu: GpuContext,
  options: { logits: readonly SampleLogits[]; vocab?: number; rows?: number; rounds?: number; log: (line: string) => void },
): Promise<SampleFigures[]> {
  const vocab = options.vocab ?? SAMPLE_VOCAB;
  const rows = options.rows ?? 1;
  const rounds = options.rounds ?? ROUNDS;
  const figures: SampleFigures[] = [];
  for (const kind of options.logits) {
    const logits = new Float32Array(rows * vocab);
    for (let r = 0; r < rows; r++) logits.set(sampleLogits(kind, vocab, 50 + r), r * vocab);
    const greedy = argmaxReference(logits, { rows, cols: vocab });
    const x = gpu.upload(logits, [rows, vocab], 'bench.sample-logits');
    const out = gpu.createTensor([rows], 'u32', 'bench.sample-out');
    const argmax = await prepareArgmax(gpu, { x, out }, { rows, cols: vocab });
    const modes = await Promise.all(
      SAMPLE_MODES.map(async ([mode, p]) => {
        const params = Array.from({ length: rows }, (_, r) => ({ ...p, seed: 1234 + r, step: 7 }));
        const rowParams = gpu.upload(new Uint32Array(packRowParams(params)), [rows, ROW_PARAMS_BYTES / 4], 'bench.sample-row-params');
        const sample = await prepareSample(gpu, { logits: x, rowParams, out }, { rows, vocab });
        return { mode, p, params, rowParams, sample, samples: [] as number[], warmupMs: 0 };
      }),
    );
    const run = async (m: (typeof modes)[number]) => {
      const t0 = performance.now();
      submitDispatches(gpu, m.p.temperature > 0 ? [argmax, m.sample] : [argmax], 'bench.sample');
      await gpu.sync();
      return performance.now() - t0;
    };
    try {
      for (const m of modes) m.warmupMs = await run(m);
      for (let i = 0; i < rounds; i++) for (const m of modes) m.samples.push(await run(m));
      const baseline = median(modes[0].samples);
      for (const m of modes) {
        await run(m);
        const got = await gpu.readU32(out);
        const want = sampleReference(logits, { rows, vocab }, m.params, greedy);
        const t = {
          medianMs: median(m.samples),
          minMs: Math.min(...m.samples),
          maxMs: Math.max(...m.samples),
          reps: m.samples.length,
          warmupMs: m.warmupMs,
        };
        const f: SampleFigures = {
          logits: kind,
          mode: m.mode,
          params: m.p,
          vocab,
          rows,
          measured: { label: m.p.temperature > 0 ? 'argmax+sample' : 'argmax', ...t },
          samplerMs: t.medianMs - baseline,
          matchesReference: got.every((v, i) => v === want[i]),
        };
        figures.push(f);
        options.log(
          `sample ${kind} ${m.mode}: ${t.medianMs.toFixed(1)} ms median, ${t.minMs.toFixed(1)} min of ${t.reps} ` +
            `(argmax + sample; sampler ${f.samplerMs.toFixed(1)} ms), ids ${f.matchesReference ? 'match' : 'DIFFER from'} the reference`,
        );
      }
    } finally {
      argmax.release();
      for (const m of modes) {
        m.sample.release();
        gpu.release(m.rowParams);
      }
      for (const t of [x, out]) gpu.release(t);
    }
  }
  return figures;
}
