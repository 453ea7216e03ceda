// What the fused decode kernels share (decode-qkv.ts, decode-gate-up.ts, decode-head.ts): each is an RMSNorm
// followed by gemv.wgsl's product and an epilogue of its own, built from lib/decode-gemv.wgsl. Their small
// operands come through two bindings the language model packs once (src/model/decode-operands.ts), so a
// kernel stays within the 8 storage buffers every WebGPU device allows:
//   consts  f32: the RoPE cos | sin table, then the norms' weights and the biases, at element offsets
//   ints    u32: the step's positions, slots and head rows, at element offsets

import reduceRowsSource from '../../shaders/lib/reduce-rows.wgsl?raw';
import reduceRowsSubgroupsSource from '../../shaders/lib/reduce-rows-subgroups.wgsl?raw';
import workgroupReduceSource from '../../shaders/lib/workgroup-reduce.wgsl?raw';
import decodeGemvSource from '../../shaders/lib/decode-gemv.wgsl?raw';
import { UnsupportedShapeError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { DEFAULT_WORKGROUP_SIZE, expectBindable, expectPositiveInt, expectWeight, expectWorkgroupSize } from './checks';
import { isPacked, weightFormatOf, type Weight } from './weight-format';
import { ACTIVATION_LIB, assembleWgsl, weightLib } from './weight-lib';
import { NARROW_MAX_ROWS } from './matmul';

export interface DecodeGemvOptions {
  /** Invocations per workgroup (power of two; default 64, gemv.wgsl's). */
  workgroupSize?: number;
  /** Reduce with subgroup operations (default: when the device has `subgroups`), as gemv does. */
  subgroups?: boolean;
}

/**
 * Checks shared by the fused decode kernels: M rows (1..8, a pipeline each), K a multiple of 4 with x bound
 * at a 16-byte offset (read as vec4), W [N, K] in any format, and the packed operands' buffers bindable.
 */
export function expectDecodeGemv(
  gpu: GpuContext,
  kernel: string,
  io: { x: Tensor; weight: Weight; consts: Tensor; ints?: Tensor },
  shape: { M: number; N: number; K: number },
): void {
  const { M, N, K } = shape;
  expectPositiveInt(kernel, 'M', M);
  expectPositiveInt(kernel, 'N', N);
  expectPositiveInt(kernel, 'K', K);
  if (M > NARROW_MAX_ROWS) throw new UnsupportedShapeError(`${kernel}: at most ${NARROW_MAX_ROWS} rows, got M = ${M}`);
  const weightOffset = isPacked(io.weight) ? io.weight.data.offsetBytes : io.weight.offsetBytes;
  if (K % 4 !== 0 || io.x.offsetBytes % 16 !== 0 || weightOffset % 16 !== 0) {
    throw new UnsupportedShapeError(
      `${kernel}: reads x and W as vec4 along K and needs K % 4 == 0 and 16-byte aligned offsets (K = ${K}, x offset ${io.x.offsetBytes}, W offset ${weightOffset})`,
    );
  }
  expectWeight(gpu, kernel, 'weight', io.weight, [N, K]);
  expectBindable(gpu, kernel, 'x', io.x);
  expectBindable(gpu, kernel, 'consts', io.consts);
  if (io.ints) expectBindable(gpu, kernel, 'ints', io.ints);
}

/** The shader of a fused decode kernel, its label, WG and ROWS constants. */
export function decodeGemvProgram(
  gpu: GpuContext,
  kernel: string,
  source: string,
  weight: Weight,
  M: number,
  options: DecodeGemvOptions,
): { label: string; code: string; constants: Record<string, number> } {
  const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
  expectWorkgroupSize(gpu, kernel, wg);
  const subgroups = options.subgroups ?? gpu.hasFeature('subgroups');
  const format = weightFormatOf(weight);
  const lib = weightLib(format, { f16Math: isPacked(weight) && weight.f16Math === true });
  return {
    label: `${kernel}:${format}${subgroups ? ':subgroups' : ''}`,
    code: assembleWgsl(
      [...lib.enables, ...(subgroups ? ['subgroups'] : [])],
      lib.source,
      ACTIVATION_LIB,
      subgroups ? reduceRowsSubgroupsSource : reduceRowsSource,
      workgroupReduceSource,
      decodeGemvSource,
      source,
    ),
    constants: { WG: wg, ROWS: M },
  };
}
