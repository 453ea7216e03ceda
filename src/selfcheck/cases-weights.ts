// Self-check case for the load-time weight quantizer (quantize.wgsl): a matrix packed on the GPU in row
// chunks, dequantized on the host, compared with the source values. Each value may move by at most the
// format's rounding bound for its group (quantizationBound); the tolerance is the largest bound of the
// matrix, so a wrong scale, a swapped nibble or a misplaced row fails by far more.

import { prepareQuantize } from '../kernels/quantize';
import {
  dequantizeReference,
  packedLayout,
  QUANT_GROUP,
  quantizationBound,
  type PackedFormat,
  type PackedWeight,
} from '../kernels/weight-format';
import type { CommonOptions, KernelCase } from './cases';
import { wgLabel } from './cases';
import { runTimed, withScratch } from './harness';
import { randomUniform } from './random';

export function quantizeCase(format: PackedFormat, N: number, K: number, o: CommonOptions & { chunkRows?: number } = {}): KernelCase {
  const seed = o.seed ?? 11;
  const chunkRows = o.chunkRows ?? Math.max(1, Math.ceil(N / 3));
  const w = randomUniform(N * K, seed, -2, 2);
  let atol = 0;
  for (let n = 0; n < N; n++) {
    for (let g = 0; g < K; g += QUANT_GROUP)
      atol = Math.max(atol, quantizationBound(format, w.subarray(n * K + g, n * K + Math.min(K, g + QUANT_GROUP))));
  }
  return {
    kernel: 'quantize',
    label: `quantize ${format} [${N}, ${K}] in chunks of ${chunkRows} rows${wgLabel(o)}`,
    tolerance: { atol, rtol: 0 },
    execute: (gpu) =>
      withScratch(gpu, async (s) => {
        const layout = packedLayout(format, N, K);
        const dst: PackedWeight = {
          format,
          shape: [N, K],
          data: s.zeros([layout.dataWords], 'u32', 'q.data'),
          scales: layout.scaleWords ? s.zeros([layout.scaleWords], 'u32', 'q.scales') : undefined,
          label: 'q',
        };
        let gpuMs = 0;
        let ranAs = 'quantize';
        for (let r0 = 0; r0 < N; r0 += chunkRows) {
          const rows = Math.min(chunkRows, N - r0);
          const src = s.upload(w.slice(r0 * K, (r0 + rows) * K), [rows, K], 'q.src');
          const d = await prepareQuantize(gpu, { src, dst }, { rows, rowOffset: r0 }, { workgroupSize: o.workgroupSize });
          try {
            ranAs = d.label;
            gpuMs += await runTimed(gpu, d);
          } finally {
            d.release();
          }
        }
        const packed = { data: await gpu.readU32(dst.data), scales: dst.scales ? await gpu.readU32(dst.scales) : undefined };
        return { got: Float64Array.from(dequantizeReference(format, packed, N, K)), want: Float64Array.from(w), gpuMs, ranAs };
      }),
  };
}
