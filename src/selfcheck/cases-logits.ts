// Check case for the logit processors: logit-adjust (penalties, then a token mask) followed by argmax and
// the sampler, as the language model's head runs them, against their references.

import type { GpuContext } from '../gpu/context';
import { argmaxReference, prepareArgmax } from '../kernels/argmax';
import {
  adjustLogitsReference,
  maskWords,
  packLogitAdjust,
  prepareLogitAdjust,
  ROW_ADJUST_WORDS,
  type LogitAdjust,
} from '../kernels/logit-adjust';
import { packRowParams, prepareSample, ROW_PARAMS_BYTES, sampleReference, type SamplingParams } from '../kernels/sample';
import { wgLabel, type CommonOptions, type KernelCase } from './cases';
import { EXACT } from './compare';
import { concat, runTimed, withScratch } from './harness';
import { mulberry32, randomUniform } from './random';

/** What each row of a logitAdjustCase gets. */
type AdjustRowKind = 'none' | 'penalties' | 'mask' | 'both' | 'one-allowed';

export interface LogitAdjustCaseOptions extends CommonOptions {
  /** One per row (default: every kind once, cycling). */
  rows?: readonly AdjustRowKind[];
  /** Sampling for every row (default: temperature 0.9, top-k 20, top-p 0.95). */
  sampling?: Omit<SamplingParams, 'step' | 'seed'>;
}

function adjustFor(kind: AdjustRowKind, vocab: number, next: () => number): LogitAdjust | undefined {
  if (kind === 'none') return undefined;
  const words = maskWords(vocab);
  const a: LogitAdjust = {};
  if (kind === 'penalties' || kind === 'both') {
    // Distinct ids, some of them the row's best tokens' neighbours; amounts of both signs.
    const ids = [...new Set(Array.from({ length: Math.min(vocab, 40) }, () => Math.floor(next() * vocab)))];
    a.penalties = { ids: Uint32Array.from(ids), amounts: Float32Array.from(ids, () => (next() - 0.3) * 6) };
  }
  if (kind === 'mask' || kind === 'both') {
    // Roughly one token in eight allowed, and whole words of either kind (the kernel skips full words).
    const m = new Uint32Array(words);
    for (let w = 0; w < words; w++) {
      const r = next();
      m[w] =
        r < 0.1
          ? 0xffffffff
          : r < 0.2
            ? 0
            : Array.from({ length: 4 }, () => (1 << Math.floor(next() * 32)) >>> 0).reduce((x, y) => (x | y) >>> 0, 0);
    }
    m[0] = (m[0]! | 1) >>> 0; // never an empty mask
    a.allowed = m;
  }
  if (kind === 'one-allowed') {
    const m = new Uint32Array(words);
    const id = Math.floor(next() * vocab);
    m[id >>> 5] = (1 << (id & 31)) >>> 0;
    a.allowed = m;
  }
  return a;
}

/**
 * Penalties and masks per row, then argmax and the sampler: the adjusted logits must equal the reference's
 * exactly, and the sampled ids must be allowed tokens equal to the reference's for the same seeds.
 */
export function logitAdjustCase(shape: { rows: number; vocab: number }, o: LogitAdjustCaseOptions = {}): KernelCase {
  const { rows, vocab } = shape;
  const seed = o.seed ?? 31;
  const kinds: AdjustRowKind[] = Array.from(
    { length: rows },
    (_, r) => o.rows?.[r] ?? (['none', 'penalties', 'mask', 'both', 'one-allowed'] as const)[r % 5],
  );
  const sampling = o.sampling ?? { temperature: 0.9, topK: 20, topP: 0.95 };
  return {
    kernel: 'logit-adjust',
    shaders: ['logit-adjust', 'argmax', 'sample'],
    label: `logit-adjust rows=${rows} vocab=${vocab} ${kinds.join(',')} T=${sampling.temperature} topK=${sampling.topK} topP=${sampling.topP}${wgLabel(o)}`,
    tolerance: EXACT,
    execute: (gpu: GpuContext) =>
      withScratch(gpu, async (s) => {
        const next = mulberry32(seed);
        const logits = randomUniform(rows * vocab, seed, -4, 4);
        const adjust = kinds.map((k) => adjustFor(k, vocab, next));
        const params = kinds.map((_, r): SamplingParams => ({ ...sampling, seed: seed + r, step: r }));
        const packed = packLogitAdjust(adjust, rows, vocab);
        const io = {
          logits: s.upload(logits, [rows, vocab], 'logits'),
          rowAdjust: s.upload(packed.rowAdjust, [rows, ROW_ADJUST_WORDS], 'row-adjust'),
          masks: s.upload(
            packed.masks.length ? packed.masks : new Uint32Array(maskWords(vocab)),
            [Math.max(1, packed.masks.length / maskWords(vocab)), maskWords(vocab)],
            'masks',
          ),
          penalties: s.upload(
            packed.penalties.length ? packed.penalties : new Uint32Array(2),
            [Math.max(1, packed.penalties.length / 2), 2],
            'penalties',
          ),
          rowParams: s.upload(new Uint32Array(packRowParams(params)), [rows, ROW_PARAMS_BYTES / 4], 'row-params'),
          out: s.zeros([rows], 'u32', 'out'),
        };
        const wg = { workgroupSize: o.workgroupSize };
        const dispatches = [
          await prepareLogitAdjust(gpu, io, shape, wg),
          await prepareArgmax(gpu, { x: io.logits, out: io.out }, { rows, cols: vocab }, wg),
          await prepareSample(gpu, { logits: io.logits, rowParams: io.rowParams, out: io.out }, shape, wg),
        ];
        let gpuMs = 0;
        try {
          for (const d of dispatches) gpuMs += await runTimed(gpu, d);
        } finally {
          for (const d of dispatches) d.release();
        }
        const got = concat(await gpu.readF32(io.logits), await gpu.readU32(io.out));
        const want = Float32Array.from(logits);
        adjustLogitsReference(want, vocab, adjust);
        const greedy = argmaxReference(want, { rows, cols: vocab });
        return { got, gpuMs, ranAs: 'logit-adjust+argmax+sample', want: concat(want, sampleReference(want, shape, params, greedy)) };
      }),
  };
}
