// y = act(x · Wᵀ + b) for HF Linear weights W: [out, in]. Batched over rows of x.
//
//   x: [M, K] f32   W: [N, K] in any storage format (weight-format.ts)   b: [N] f32 (optional)   y: [M, N] f32
//
// Four plans, chosen from the device's kernel variant and the shape:
//   register-wide    matmul-register.wgsl `main`: 16x16 outputs per invocation (CPU adapters, M > 8)
//   register-narrow  matmul-register.wgsl `main_narrow`: 1x8 outputs per invocation (CPU adapters, M = 1),
//                    `main_narrow_rows`: 2x8 or 4x8, each load of W shared by the rows (M 2..8)
//   workgroup        matmul.wgsl: 64x64 tiles in workgroup memory (GPUs, and any shape with K % 4 != 0)
//   gemv             gemv.wgsl: split-K over a workgroup per 4 columns (GPUs, M <= 8: decode rows)
// The register and gemv plans read x and W as vec4, so they need K % 4 == 0 and 16-byte aligned offsets.
// Every plan reads W through the lib/weights-*.wgsl of its format, which dequantizes in registers: there
// is never an f32 copy of a packed weight.

import registerSource from '../../shaders/matmul-register.wgsl?raw';
import storeF32Source from '../../shaders/lib/store-y-f32.wgsl?raw';
import storeVec4Source from '../../shaders/lib/store-y-vec4.wgsl?raw';
import tiledSource from '../../shaders/matmul.wgsl?raw';
import gemvSource from '../../shaders/gemv.wgsl?raw';
import reduceRowsSource from '../../shaders/lib/reduce-rows.wgsl?raw';
import reduceRowsSubgroupsSource from '../../shaders/lib/reduce-rows-subgroups.wgsl?raw';
import { UnsupportedShapeError } from '../errors';
import type { KernelVariant } from '../gpu/adapter-info';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { ACTIVATION_CODE, activate, type Activation } from './activations';
import {
  DEFAULT_WORKGROUP_SIZE,
  expectPositiveInt,
  expectTensor,
  expectWeight,
  expectWorkgroupSize,
  linearGrid,
  tileGrid,
  wgslConstant,
} from './checks';
import { createDispatch, packParams, type DispatchCost, type KernelDispatch } from './dispatch';
import { isKQuant } from './k-quants';
import { isPacked, packedSizeBytes, weightFormatOf, type Weight, type WeightFormat } from './weight-format';
import { ACTIVATION_LIB, assembleWgsl, weightBindings, weightLib } from './weight-lib';

export interface MatmulShape {
  M: number;
  N: number;
  K: number;
}

export interface MatmulIO {
  x: Tensor;
  weight: Weight;
  bias?: Tensor;
  y: Tensor;
}

export type MatmulPlan = 'register-wide' | 'register-narrow' | 'workgroup' | 'gemv';
export const MATMUL_PLANS: readonly MatmulPlan[] = ['register-wide', 'register-narrow', 'workgroup', 'gemv'];

export interface MatmulOptions {
  activation?: Activation;
  /** Override the device's kernel variant (benchmarks compare both). */
  variant?: KernelVariant;
  /** Force a plan (tests cover each). */
  plan?: MatmulPlan;
  /** Invocations per workgroup for the register and gemv plans (power of two; default: registerWorkgroupSize for register plans, 64 for gemv). */
  workgroupSize?: number;
  /** gemv: reduce with subgroup operations (default: when the device has `subgroups`). */
  subgroups?: boolean;
  /** y += act(x · Wᵀ + b): add the result to what y holds (a residual connection), instead of overwriting it. */
  accumulate?: boolean;
  /**
   * y is [M, stride] and this product fills its columns [offset, offset + N): a weight split by rows
   * (weights larger than one binding, src/model/weights/row-split.ts) writes each part's columns of one y.
   */
  yColumns?: { offset: number; stride: number };
}

/** Rows at or below which decode plans (register-narrow, gemv) are used. */
export const NARROW_MAX_ROWS = 8;
// Work split constants, defined once in the shaders.
const TILE = wgslConstant(tiledSource, 'TILE');
const GEMV_COLS = wgslConstant(gemvSource, 'COLS');
export const WIDE_ROWS = wgslConstant(registerSource, 'WIDE_ROWS');
export const WIDE_COLS = wgslConstant(registerSource, 'WIDE_COLS');
/** Columns per main_narrow_rows invocation (two column quads, fixed in the shader). */
const NARROW_ROWS_COLS = 8;
/**
 * Column quads per register-narrow invocation, per weight format (matmul-register.wgsl NARROW_QUADS):
 * 4 for q4, whose unpacking is cheap next to the loads of x that more columns share (bench:kernels on
 * SwiftShader: 1×576×49280 in 209 ms against 263 ms with 2), 2 for the others (4 was slower for f32 and
 * q8: 548 vs 488 ms, 427 vs 416 ms).
 */
export function narrowQuads(format: WeightFormat): number {
  return format === 'q4' ? 4 : 2;
}

/**
 * Plain-TS reference with float64 accumulation (W as f32 values: dequantize packed weights first).
 * With `residual`, returns residual + act(x · Wᵀ + b) (the accumulate epilogue).
 */
export function matmulReference(
  x: Float32Array,
  w: Float32Array,
  b: Float32Array | undefined,
  shape: MatmulShape,
  activation: Activation = 'none',
  residual?: Float32Array,
): Float32Array {
  const { M, N, K } = shape;
  const y = new Float32Array(M * N);
  for (let m = 0; m < M; m++) {
    const xo = m * K;
    for (let n = 0; n < N; n++) {
      const wo = n * K;
      let acc = b ? b[n] : 0;
      for (let k = 0; k < K; k++) acc += x[xo + k] * w[wo + k];
      y[m * N + n] = activate(acc, activation) + (residual ? residual[m * N + n] : 0);
    }
  }
  return y;
}

/**
 * Where matrix z of a batch lives in the register kernel's bindings (matmul-register.wgsl Params), in
 * elements: x row r at x.offset + z * x.batch + r * x.stride, likewise W row n, y[r, c] at
 * y.offset + z * y.batch + r * y.stride + c. x's and W's offsets and strides must be multiples of 4.
 */
export interface RegisterLayout {
  x: StridedMatrix;
  w: StridedMatrix;
  y: StridedMatrix;
}

export interface StridedMatrix {
  offset: number;
  stride: number;
  batch: number;
}

/** The fused epilogue's bits (lib/activation.wgsl EPILOGUE_*): bias, activation, accumulate into y. */
const EPILOGUE_BIAS = wgslConstant(ACTIVATION_LIB, 'EPILOGUE_BIAS');
const EPILOGUE_ACTIVATION_SHIFT = wgslConstant(ACTIVATION_LIB, 'EPILOGUE_ACTIVATION_SHIFT');
const EPILOGUE_ACCUMULATE = wgslConstant(ACTIVATION_LIB, 'EPILOGUE_ACCUMULATE');

/** The epilogue uniform (or the wide kernel's EPILOGUE constant) of a matmul. */
export function matmulEpilogue(bias: boolean, activation: Activation, accumulate: boolean): number {
  return (bias ? EPILOGUE_BIAS : 0) | (ACTIVATION_CODE[activation] << EPILOGUE_ACTIVATION_SHIFT) | (accumulate ? EPILOGUE_ACCUMULATE : 0);
}

/** One matrix of dense rows: x [M, K], W [N, K], y [M, N]. */
export function denseLayout(shape: MatmulShape): RegisterLayout {
  return {
    x: { offset: 0, stride: shape.K, batch: 0 },
    w: { offset: 0, stride: shape.K, batch: 0 },
    y: { offset: 0, stride: shape.N, batch: 0 },
  };
}

export function packRegisterParams(shape: MatmulShape, epilogue: number, layout: RegisterLayout): ArrayBuffer {
  return packParams([
    ['u32', shape.M],
    ['u32', shape.N],
    ['u32', shape.K],
    ['u32', epilogue],
    ['u32', layout.x.offset / 4],
    ['u32', layout.x.stride / 4],
    ['u32', layout.x.batch / 4],
    ['u32', layout.w.offset / 4],
    ['u32', layout.w.stride],
    ['u32', layout.w.batch / 4],
    ['u32', layout.y.offset],
    ['u32', layout.y.stride],
    ['u32', layout.y.batch],
  ]);
}

/**
 * The register kernel with the store lib its output layout allows: vec4 stores when every 4 output
 * columns start on a vec4 (N and y's offset, stride and batch step multiples of 4, y bound at a 16-byte
 * offset), f32 stores otherwise. The entry point and constants are the caller's.
 */
export function registerKernelSource(N: number, y: Tensor, layout: StridedMatrix): string {
  const vec4 = N % 4 === 0 && y.offsetBytes % 16 === 0 && [layout.offset, layout.stride, layout.batch].every((v) => v % 4 === 0);
  return [vec4 ? storeVec4Source : storeF32Source, registerSource].join('\n');
}

function vec4Ok(io: MatmulIO, K: number): boolean {
  const weightOffset = isPacked(io.weight) ? io.weight.data.offsetBytes : io.weight.offsetBytes;
  return K % 4 === 0 && io.x.offsetBytes % 16 === 0 && weightOffset % 16 === 0;
}

export function chooseMatmulPlan(gpu: GpuContext, io: MatmulIO, shape: MatmulShape, options: MatmulOptions = {}): MatmulPlan {
  if (options.plan) return options.plan;
  const variant = options.variant ?? gpu.kernelVariant;
  if (!vec4Ok(io, shape.K)) return 'workgroup';
  if (variant === 'workgroup') return shape.M <= NARROW_MAX_ROWS ? 'gemv' : 'workgroup';
  return shape.M <= NARROW_MAX_ROWS ? 'register-narrow' : 'register-wide';
}

/** 2·M·N·K flops; bytes of x, of W as stored (packed data and scales), of the bias and of y (read too when accumulating). */
export function matmulCost(io: MatmulIO, { M, N, K }: MatmulShape, accumulate = false): DispatchCost {
  const yBytes = 4 * M * N * (accumulate ? 2 : 1);
  return { flops: 2 * M * N * K, bytes: 4 * (M * K + (io.bias ? N : 0)) + yBytes + packedSizeBytes(weightFormatOf(io.weight), N, K) };
}

/** The matmul of the plan chooseMatmulPlan picks (or options.plan), with its cost for profiles. */
export async function prepareMatmul(
  gpu: GpuContext,
  io: MatmulIO,
  shape: MatmulShape,
  options: MatmulOptions = {},
): Promise<KernelDispatch> {
  const d = await prepareMatmulPlan(gpu, io, shape, options);
  d.cost = matmulCost(io, shape, options.accumulate);
  return d;
}

async function prepareMatmulPlan(gpu: GpuContext, io: MatmulIO, shape: MatmulShape, options: MatmulOptions = {}): Promise<KernelDispatch> {
  const kernel = 'matmul';
  const { M, N, K } = shape;
  expectPositiveInt(kernel, 'M', M);
  expectPositiveInt(kernel, 'N', N);
  expectPositiveInt(kernel, 'K', K);
  expectTensor(gpu, kernel, 'x', io.x, [M, K]);
  expectWeight(gpu, kernel, 'weight', io.weight, [N, K]);
  if (io.bias) expectTensor(gpu, kernel, 'bias', io.bias, [N]);
  const yc = options.yColumns;
  if (yc && (!Number.isInteger(yc.offset) || yc.offset < 0 || yc.offset + N > yc.stride)) {
    throw new UnsupportedShapeError(`matmul: columns [${yc.offset}, ${yc.offset + N}) do not fit rows of ${yc.stride}`);
  }
  expectTensor(gpu, kernel, 'y', io.y, [M, yc?.stride ?? N]);
  const plan = chooseMatmulPlan(gpu, io, shape, options);
  if (plan !== 'workgroup' && !vec4Ok(io, K)) {
    throw new UnsupportedShapeError(
      `matmul: plan '${plan}' reads vec4 along K and needs K % 4 == 0 and 16-byte aligned offsets ` +
        `(K = ${K}, x offset ${io.x.offsetBytes}); use plan 'workgroup'.`,
    );
  }
  if (plan === 'gemv' && M > NARROW_MAX_ROWS) {
    throw new UnsupportedShapeError(`matmul: plan 'gemv' is for at most ${NARROW_MAX_ROWS} rows of x, got M = ${M}`);
  }
  const epilogue = matmulEpilogue(io.bias !== undefined, options.activation ?? 'none', options.accumulate === true);
  // The register kernel's Params carry a batch layout after these four fields; a weight matmul is one
  // dense matrix, its y rows offset and strided only with yColumns (matmul.wgsl and gemv.wgsl read y's).
  const layout = denseLayout(shape);
  if (yc) layout.y = { offset: yc.offset, stride: yc.stride, batch: 0 };
  const params = packRegisterParams(shape, epilogue, layout);
  const format = weightFormatOf(io.weight);
  const lib = weightLib(format, {
    scalarF32: plan === 'workgroup',
    f16Math: isPacked(io.weight) && io.weight.f16Math === true && plan !== 'workgroup',
  });
  const [wData, wScales] = weightBindings(io.weight);
  const resources = [io.x, wData, wScales, io.bias ?? gpu.placeholder(), io.y];
  const label = `${kernel}:${plan}:${format}`;
  if (plan === 'workgroup') {
    return createDispatch(gpu, {
      label,
      code: assembleWgsl(lib.enables, lib.source, ACTIVATION_LIB, tiledSource),
      resources,
      params,
      grid: tileGrid(gpu, kernel, Math.ceil(N / TILE), Math.ceil(M / TILE)),
    });
  }
  if (plan === 'gemv') {
    const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
    expectWorkgroupSize(gpu, kernel, wg);
    const subgroups = options.subgroups ?? gpu.hasFeature('subgroups');
    return createDispatch(gpu, {
      label: `${label}${subgroups ? ':subgroups' : ''}`,
      code: assembleWgsl(
        [...lib.enables, ...(subgroups ? ['subgroups'] : [])],
        lib.source,
        ACTIVATION_LIB,
        subgroups ? reduceRowsSubgroupsSource : reduceRowsSource,
        gemvSource,
      ),
      constants: { WG: wg, ROWS: M },
      resources,
      params,
      grid: linearGrid(gpu, kernel, Math.ceil(N / GEMV_COLS)),
    });
  }
  const { entryPoint, constants, numInvocations } = registerEntry(plan, format, M, N, epilogue);
  const wg = options.workgroupSize ?? registerWorkgroupSize(plan, numInvocations, format);
  expectWorkgroupSize(gpu, kernel, wg);
  return createDispatch(gpu, {
    label,
    code: assembleWgsl(lib.enables, lib.source, ACTIVATION_LIB, registerKernelSource(N, io.y, layout.y)),
    entryPoint,
    constants: { ...constants, WG: wg },
    resources,
    params,
    grid: linearGrid(gpu, kernel, Math.ceil(numInvocations / wg)),
  });
}

/**
 * Rows per register-narrow invocation: one decode row alone (main_narrow), else main_narrow_rows with 2
 * or 4 rows sharing each load of W (a batched decode step: one row per sequence).
 */
export function narrowRows(M: number): 1 | 2 | 4 {
  return M === 1 ? 1 : M === 2 ? 2 : 4;
}

/**
 * Invocations per workgroup of a register-kernel matmul. A CPU adapter runs a workgroup on one core, so a
 * matmul of few invocations (a decode row's 576 columns are 72; a 16-row batch's wide tiles over them 36)
 * in workgroups of 64 ran on one core of two; in eights they spread over every core. The wide plan always
 * takes 8 (its invocations are long; at ViT shapes 8 and 64 measured the same within noise on SwiftShader),
 * so it stays one pipeline per epilogue; the narrow plans take 64 from 1024 invocations (the LM head's
 * 49280 columns), both sizes compiled by the engine's warm-up. Each size is a pipeline of its own.
 * The K-quant formats keep 8 at every size: their narrow pipelines are the slowest to compile (q6k's 2 to 4 s
 * each on SwiftShader alone, against under 0.6 s for f32's), and on SwiftShader 8 and 64 decoded a Q6_K
 * head (1 and 2 rows x 32768 x 2048) and a Q4_K MLP matrix (1 and 4 rows x 11008 x 2048) equally within
 * noise, with identical outputs, so one size saves a pipeline per variant at load.
 */
export function registerWorkgroupSize(plan: MatmulPlan, numInvocations: number, format: WeightFormat): number {
  return plan === 'register-narrow' && numInvocations >= 1024 && !isKQuant(format) ? 64 : 8;
}

/** Entry point, override constants (but WG) and invocation count of a register-kernel matmul. */
function registerEntry(
  plan: MatmulPlan,
  format: WeightFormat,
  M: number,
  N: number,
  epilogue: number,
): { entryPoint: string; constants: Record<string, number>; numInvocations: number } {
  if (plan === 'register-wide') {
    // A pipeline per epilogue (matmul-register.wgsl EPILOGUE): the wide kernel's 64 stores shrink to the
    // epilogue they do; the narrow ones read it from the uniform (one pipeline for every layer).
    return { entryPoint: 'main', constants: { EPILOGUE: epilogue }, numInvocations: Math.ceil(M / WIDE_ROWS) * Math.ceil(N / WIDE_COLS) };
  }
  const rows = narrowRows(M);
  if (rows === 1) {
    const quads = narrowQuads(format);
    return { entryPoint: 'main_narrow', constants: { NARROW_QUADS: quads }, numInvocations: M * Math.ceil(N / (4 * quads)) };
  }
  return {
    entryPoint: 'main_narrow_rows',
    constants: { NARROW_ROWS: rows },
    numInvocations: Math.ceil(M / rows) * Math.ceil(N / NARROW_ROWS_COLS),
  };
}
