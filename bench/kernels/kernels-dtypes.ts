// bench:kernels, weight dtypes (page side): our matmul for every weight dtype and both kernel variants
// (GFLOP/s at the ViT shapes, effective weight bandwidth of decode rows beside the copy roofline), and
// the attention kernels at other head sizes with both head codes. Each output is checked against the
// float64 reference on the DEQUANTIZED weights (the kernels' exact math), like the rest of the page.

import type { KernelVariant } from '../../src/gpu/adapter-info';
import type { GpuContext } from '../../src/gpu/context';
import type { HeadCode } from '../../src/kernels/attention-head';
import { submitDispatches, type Dispatch } from '../../src/kernels/dispatch';
import { prepareMatmul, type MatmulShape } from '../../src/kernels/matmul';
import {
  prepareVitAttention,
  vitAttentionScratchBytes,
  type VitAttentionPlan,
  type VitAttentionShape,
} from '../../src/kernels/vit-attention';
import {
  dequantizeReference,
  packedSizeBytes,
  quantizeReference,
  WEIGHT_FORMATS,
  type Weight,
  type WeightFormat,
} from '../../src/kernels/weight-format';
import { Scratch } from '../../src/selfcheck/harness';
import { randomUniform } from '../../src/selfcheck/random';
import { maxAbsDiff } from './host-arrays';
import { attentionReference, matmulCheck } from './reference-check';
import type { DtypeAttentionFigures, DtypeMatmulFigures } from './result';
import { gbPerSecond, gflops, timeRuns, type RepPolicy } from '../harness/timing';

/** The ViT's matmuls (one 512 px tile: 1024 patches) and SmolVLM-256M's decode rows, M×K×N. */
export const DTYPE_VIT_SHAPES: readonly (readonly [number, number, number])[] = [
  [1024, 768, 768],
  [1024, 768, 3072],
  [1024, 3072, 768],
];
export const DTYPE_DECODE_SHAPES: readonly (readonly [number, number, number])[] = [
  [1, 576, 3072],
  [1, 1536, 576],
  [1, 576, 49280],
];
/** Head sizes: SigLIP-base / SmolVLM (64), so400m (72), Idefics3-8B's text (128). */
export const HEAD_DIM_SHAPES: readonly VitAttentionShape[] = [
  { batch: 1, tokens: 1024, heads: 12, headDim: 64 },
  { batch: 1, tokens: 729, heads: 16, headDim: 72 },
  { batch: 1, tokens: 512, heads: 8, headDim: 128 },
];

/** Median run time of a prepared dispatch (submit, wait), per the policy. */
function timeIt(gpu: GpuContext, d: Dispatch, policy: RepPolicy) {
  return timeRuns(async () => {
    submitDispatches(gpu, [d], d.label);
    await gpu.sync();
  }, policy);
}

function packed(s: Scratch, format: WeightFormat, w: Float32Array, N: number, K: number): { weight: Weight; stored: Float32Array } {
  if (format === 'f32') return { weight: s.upload(w, [N, K], 'bench.w'), stored: w };
  const host = quantizeReference(format, w, N, K);
  const weight = s.weight(format, w, N, K, 'bench.w');
  return { weight, stored: dequantizeReference(format, host, N, K) };
}

export async function benchDtypeMatmul(
  gpu: GpuContext,
  [M, K, N]: readonly [number, number, number],
  variants: readonly KernelVariant[],
  policyFor: (variant: KernelVariant) => RepPolicy,
  log: (line: string) => void,
  formats: readonly WeightFormat[] = WEIGHT_FORMATS,
): Promise<DtypeMatmulFigures[]> {
  const out: DtypeMatmulFigures[] = [];
  const s = new Scratch(gpu);
  try {
    const x = randomUniform(M * K, 300 + K);
    const w = randomUniform(N * K, 301 + N);
    const xt = s.upload(x, [M, K], 'bench.x');
    const y = s.zeros([M, N], 'f32', 'bench.y');
    for (const format of formats) {
      const { weight, stored } = packed(s, format, w, N, K);
      const check = matmulCheck(x, stored, M, K, N);
      const weightBytes = packedSizeBytes(format, N, K);
      for (const variant of variants) {
        const shape: MatmulShape = { M, N, K };
        const d = await prepareMatmul(gpu, { x: xt, weight, y }, shape, { variant });
        try {
          const t = await timeIt(gpu, d, policyFor(variant));
          const f: DtypeMatmulFigures = {
            M,
            K,
            N,
            format,
            variant,
            weightBytes,
            measured: {
              label: d.label,
              ...t,
              gflops: gflops(2 * M * N * K, t.medianMs),
              gbps: gbPerSecond(weightBytes, t.medianMs),
              maxAbsErr: check.maxAbsErr(await gpu.readF32(y)),
            },
          };
          log(
            `matmul ${M}×${K}×${N} ${format} ${variant} (${d.label}): ${t.medianMs.toFixed(1)} ms, ` +
              `${f.measured.gflops!.toFixed(3)} GFLOP/s, weights ${f.measured.gbps!.toFixed(2)} GB/s, max|err| ${f.measured.maxAbsErr!.toExponential(1)}`,
          );
          out.push(f);
        } finally {
          d.release();
        }
      }
    }
  } finally {
    s.releaseAll();
  }
  return out;
}

export async function benchHeadDims(
  gpu: GpuContext,
  policy: RepPolicy,
  log: (line: string) => void,
  shapes: readonly VitAttentionShape[] = HEAD_DIM_SHAPES,
): Promise<DtypeAttentionFigures[]> {
  const out: DtypeAttentionFigures[] = [];
  for (const shape of shapes) {
    const s = new Scratch(gpu);
    try {
      const rows = shape.batch * shape.tokens;
      const width = shape.heads * shape.headDim;
      const qkv = randomUniform(rows * 3 * width, 40 + shape.headDim);
      const io = {
        qkv: s.upload(qkv, [rows, 3 * width], 'bench.qkv'),
        mask: s.upload(new Uint32Array(rows).fill(1), [rows], 'bench.mask'),
        out: s.zeros([rows, width], 'f32', 'bench.attn-out'),
      };
      const ref = attentionReference(qkv, shape);
      // Each plan: matmuls (CPU adapters), tiled (GPUs) and the streaming kernel in both head codes.
      const configs: { plan: VitAttentionPlan; headCode?: HeadCode }[] = [
        { plan: 'matmuls' },
        { plan: 'tiled' },
        { plan: 'stream', headCode: 'unrolled' },
        { plan: 'stream', headCode: 'loop' },
      ];
      for (const { plan, headCode } of configs) {
        const how = headCode ? `${plan} ${headCode}` : plan;
        const t0 = performance.now();
        const d = await prepareVitAttention(gpu, io, shape, { plan, headCode });
        const compileMs = performance.now() - t0;
        try {
          const t = await timeIt(gpu, d, policy);
          const flops = 4 * shape.batch * shape.tokens * shape.tokens * shape.headDim * shape.heads;
          const f: DtypeAttentionFigures = {
            ...shape,
            plan: how,
            compileMs,
            scratchBytes: vitAttentionScratchBytes(gpu, shape, plan),
            measured: { label: d.label, ...t, gflops: gflops(flops, t.medianMs), maxAbsErr: maxAbsDiff(await gpu.readF32(io.out), ref) },
          };
          log(
            `vit-attention D=${shape.headDim} T=${shape.tokens} H=${shape.heads} ${how}: pipeline ${compileMs.toFixed(0)} ms, ` +
              `${t.medianMs.toFixed(1)} ms, ${f.measured.gflops!.toFixed(3)} GFLOP/s, max|err| ${f.measured.maxAbsErr!.toExponential(1)}`,
          );
          out.push(f);
        } finally {
          d.release();
        }
      }
    } finally {
      s.releaseAll();
    }
  }
  return out;
}
