// Weight storage formats on the GPU: the load-time quantizer (quantize.wgsl) against the host reference
// quantizer, and every kernel that reads weights (matmul in all four plans, embedding gather) in every
// format against its float64 reference on the DEQUANTIZED weights (exact math, f32 tolerances).

import { describe, expect, it } from 'vitest';
import { prepareQuantize } from '../../src/kernels/quantize';
import { submitDispatches } from '../../src/kernels/dispatch';
import {
  dequantizeReference,
  packedLayout,
  QUANT_GROUP,
  quantizationBound,
  quantizeReference,
  type PackedFormat,
  type PackedWeight,
} from '../../src/kernels/weight-format';
import { embeddingGatherCase, matmulCase } from '../../src/selfcheck/cases';
import { quantizeCase } from '../../src/selfcheck/cases-weights';
import { randomUniform } from '../../src/selfcheck/random';
import { expectCasePasses, useGpu } from './gpu';

const gpu = useGpu();
const PACKED: readonly PackedFormat[] = ['f16', 'q8', 'q4'];
/** Every format kernels read besides f32: the packed ones and bf16 (a BF16 checkpoint's values, never packed here). */
const READ: readonly PackedFormat[] = [...PACKED, 'bf16'];

describe('quantize (load-time packing on the GPU)', () => {
  // The self-check's case (doctor, the demo page): every value within its group's rounding bound.
  for (const format of PACKED) it(`self-check case: ${format} [70, 200]`, () => expectCasePasses(gpu(), quantizeCase(format, 70, 200)));

  // K = 36: a last group of 4; K = 4: one partial group; N = 70 rows packed in chunks at row offsets.
  for (const format of PACKED) {
    for (const [N, K] of [
      [5, 36],
      [70, 64],
      [3, 4],
      [9, 200],
    ] as const) {
      it(`${format} [${N}, ${K}] in chunks of 3 rows`, async () => {
        const g = gpu();
        // Rows with different ranges, one constant row (scale 0), one all-positive row.
        const w = randomUniform(N * K, N + K, -2, 2);
        for (let k = 0; k < K; k++) {
          w[k] *= 0.01;
          if (N > 1) w[K + k] = 0.75;
          if (N > 2) w[2 * K + k] = 3 + Math.abs(w[2 * K + k]);
        }
        const layout = packedLayout(format, N, K);
        const dst: PackedWeight = {
          format,
          shape: [N, K],
          data: g.upload(new Uint32Array(layout.dataWords), [layout.dataWords], 'q.data'),
          scales: layout.scaleWords ? g.upload(new Uint32Array(layout.scaleWords), [layout.scaleWords], 'q.scales') : undefined,
          label: 'q',
        };
        try {
          for (let r0 = 0; r0 < N; r0 += 3) {
            const rows = Math.min(3, N - r0);
            const src = g.upload(w.slice(r0 * K, (r0 + rows) * K), [rows, K], 'q.src');
            const d = await prepareQuantize(g, { src, dst }, { rows, rowOffset: r0 });
            submitDispatches(g, [d]);
            await g.sync();
            d.release();
            g.release(src);
          }
          const got = { data: await g.readU32(dst.data), scales: dst.scales ? await g.readU32(dst.scales) : undefined };
          const want = quantizeReference(format, w, N, K);
          const deq = dequantizeReference(format, got, N, K);
          // Every value within the format's bound of the source, group by group.
          let worst = 0;
          for (let n = 0; n < N; n++) {
            for (let g0 = 0; g0 < K; g0 += QUANT_GROUP) {
              const group = w.subarray(n * K + g0, n * K + Math.min(K, g0 + QUANT_GROUP));
              const bound = quantizationBound(format, group);
              for (let j = 0; j < group.length; j++) {
                const err = Math.abs(deq[n * K + g0 + j] - group[j]);
                worst = Math.max(worst, err / bound);
                expect(err, `${format} W[${n}, ${g0 + j}] = ${group[j]} came back as ${deq[n * K + g0 + j]}`).toBeLessThanOrEqual(bound);
              }
            }
          }
          // And the same packing as the host reference, up to rounding ties (the GPU's 1/scale may differ
          // from the host's by an ulp): at least 99% of the words are identical, f16 all of them.
          const same = got.data.reduce((a, v, i) => a + (v === want.data[i] ? 1 : 0), 0);
          if (format === 'f16') expect(same).toBe(want.data.length);
          else expect(same / want.data.length).toBeGreaterThanOrEqual(0.99);
          expect(worst).toBeLessThanOrEqual(1);
        } finally {
          g.release(dst.data);
          if (dst.scales) g.release(dst.scales);
        }
      });
    }
  }
});

describe('matmul with packed weights (every plan, every format)', () => {
  const ragged = [
    { M: 1, N: 1, K: 4 },
    { M: 3, N: 37, K: 36 },
    { M: 17, N: 33, K: 64 },
    { M: 70, N: 65, K: 132 },
  ];
  for (const format of READ) {
    for (const plan of ['register-wide', 'register-narrow', 'workgroup', 'gemv'] as const) {
      for (const shape of ragged) {
        if (plan === 'gemv' && shape.M > 8) continue;
        it(`${format} ${plan} ${shape.M}x${shape.N}x${shape.K} +bias`, () =>
          expectCasePasses(gpu(), matmulCase(shape, { plan, format, bias: true })));
      }
    }
    it(`${format} fused SiLU, register-narrow`, () =>
      expectCasePasses(gpu(), matmulCase({ M: 2, N: 40, K: 96 }, { plan: 'register-narrow', format, activation: 'silu' })));
    it(`${format} decode shape 1x1536x576 (device plan)`, () => expectCasePasses(gpu(), matmulCase({ M: 1, N: 1536, K: 576 }, { format })));
  }
});

describe('gemv (split-K decode rows for the workgroup variant)', () => {
  for (const subgroups of [false, true]) {
    for (const wg of [32, 64, 128, 256]) {
      it(`WG=${wg} ${subgroups ? 'subgroup' : 'workgroup-memory'} reduction, M=5`, () =>
        expectCasePasses(gpu(), matmulCase({ M: 5, N: 27, K: 520 }, { plan: 'gemv', workgroupSize: wg, subgroups, bias: true })));
    }
    for (const M of [1, 2, 8]) {
      it(`M=${M} ${subgroups ? 'subgroups' : 'no subgroups'}, q4, fused GELU`, () =>
        expectCasePasses(gpu(), matmulCase({ M, N: 50, K: 100 }, { plan: 'gemv', subgroups, format: 'q4', activation: 'gelu_tanh' })));
    }
  }
  it('K shorter than the workgroup (most invocations add nothing)', () =>
    expectCasePasses(gpu(), matmulCase({ M: 3, N: 9, K: 8 }, { plan: 'gemv', workgroupSize: 256 })));
  it('an lm_head-like row: 1 x 4099 x 576, q8 (many workgroups, a ragged last one)', () =>
    expectCasePasses(gpu(), matmulCase({ M: 1, N: 4099, K: 576 }, { format: 'q8', plan: 'gemv' })));
});

describe('embedding gather from packed tables', () => {
  for (const format of READ) {
    for (const wg of [32, 64, 256]) {
      it(`${format} WG=${wg}, a bad id flagged`, () =>
        expectCasePasses(gpu(), embeddingGatherCase({ numTokens: 7, vocab: 50, dim: 36 }, { format, workgroupSize: wg, badId: true })));
    }
    it(`${format} SmolVLM-256M width, 3 tokens of a 1000-row table`, () =>
      expectCasePasses(gpu(), embeddingGatherCase({ numTokens: 3, vocab: 1000, dim: 576 }, { format })));
  }
});
