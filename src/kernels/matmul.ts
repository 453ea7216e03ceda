// y = act(x · Wᵀ + b) for HF Linear weights W: [out, in]. Batched over rows of x.
//
//   x: [M, K] f32   W: [N, K] f32   b: [N] f32 (optional)   y: [M, N] f32
//
// Three plans, chosen from the device's kernel variant and the shape:
//   register-wide    matmul-register.wgsl `main`: 16x16 outputs per invocation (CPU adapters, M > 8)
//   register-narrow  matmul-register.wgsl `main_narrow`: 1x8 outputs per invocation (CPU adapters, M <= 8)
//   workgroup        matmul.wgsl: 64x64 tiles in workgroup memory (GPUs, and any shape with K % 4 != 0)
// The register plans read x and W as vec4, so they need K % 4 == 0 and 16-byte aligned offsets.

import registerSource from '../../shaders/matmul-register.wgsl?raw';
import tiledSource from '../../shaders/matmul.wgsl?raw';
import { UnsupportedShapeError } from '../errors';
import type { KernelVariant } from '../gpu/adapter-info';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { ACTIVATION_CODE, activate, type Activation } from './activations';
import { expectPositiveInt, expectTensor, expectWorkgroupSize, linearGrid, tileGrid } from './checks';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';

export interface MatmulShape {
  M: number;
  N: number;
  K: number;
}

export interface MatmulIO {
  x: Tensor;
  weight: Tensor;
  bias?: Tensor;
  y: Tensor;
}

export type MatmulPlan = 'register-wide' | 'register-narrow' | 'workgroup';

export interface MatmulOptions {
  activation?: Activation;
  /** Override the device's kernel variant (benchmarks compare both). */
  variant?: KernelVariant;
  /** Force a plan (tests cover each). */
  plan?: MatmulPlan;
  /** Invocations per workgroup for the register plans (power of two, default 64). */
  workgroupSize?: number;
}

/** Rows at or below which the register variant uses the narrow (decode) entry point. */
export const NARROW_MAX_ROWS = 8;

/** Plain-TS reference with float64 accumulation. */
export function matmulReference(
  x: Float32Array,
  w: Float32Array,
  b: Float32Array | undefined,
  shape: MatmulShape,
  activation: Activation = 'none',
): Float32Array {
  const { M, N, K } = shape;
  const y = new Float32Array(M * N);
  for (let m = 0; m < M; m++) {
    const xo = m * K;
    for (let n = 0; n < N; n++) {
      const wo = n * K;
      let acc = b ? b[n] : 0;
      for (let k = 0; k < K; k++) acc += x[xo + k] * w[wo + k];
      y[m * N + n] = activate(acc, activation);
    }
  }
  return y;
}

function vec4Ok(io: MatmulIO, K: number): boolean {
  return K % 4 === 0 && io.x.offsetBytes % 16 === 0 && io.weight.offsetBytes % 16 === 0;
}

export function chooseMatmulPlan(gpu: GpuContext, io: MatmulIO, shape: MatmulShape, options: MatmulOptions = {}): MatmulPlan {
  if (options.plan) return options.plan;
  const variant = options.variant ?? gpu.kernelVariant;
  if (variant === 'workgroup' || !vec4Ok(io, shape.K)) return 'workgroup';
  return shape.M <= NARROW_MAX_ROWS ? 'register-narrow' : 'register-wide';
}

export async function prepareMatmul(
  gpu: GpuContext,
  io: MatmulIO,
  shape: MatmulShape,
  options: MatmulOptions = {},
): Promise<KernelDispatch> {
  const kernel = 'matmul';
  const { M, N, K } = shape;
  expectPositiveInt(kernel, 'M', M);
  expectPositiveInt(kernel, 'N', N);
  expectPositiveInt(kernel, 'K', K);
  expectTensor(gpu, kernel, 'x', io.x, [M, K]);
  expectTensor(gpu, kernel, 'weight', io.weight, [N, K]);
  if (io.bias) expectTensor(gpu, kernel, 'bias', io.bias, [N]);
  expectTensor(gpu, kernel, 'y', io.y, [M, N]);
  const plan = chooseMatmulPlan(gpu, io, shape, options);
  if (plan !== 'workgroup' && !vec4Ok(io, K)) {
    throw new UnsupportedShapeError(
      `matmul: plan '${plan}' reads vec4 along K and needs K % 4 == 0 and 16-byte aligned offsets ` +
        `(K = ${K}, x offset ${io.x.offsetBytes}, weight offset ${io.weight.offsetBytes}); use plan 'workgroup'.`,
    );
  }
  const epilogue = (io.bias ? 1 : 0) | (ACTIVATION_CODE[options.activation ?? 'none'] << 1);
  const params = packParams([
    ['u32', M],
    ['u32', N],
    ['u32', K],
    ['u32', epilogue],
  ]);
  const resources = [io.x, io.weight, io.bias ?? gpu.placeholder(), io.y];
  const label = `${kernel}:${plan}`;
  if (plan === 'workgroup') {
    return createDispatch(gpu, {
      label,
      code: tiledSource,
      resources,
      params,
      grid: tileGrid(gpu, kernel, Math.ceil(N / 64), Math.ceil(M / 64)),
    });
  }
  const wg = options.workgroupSize ?? 64;
  expectWorkgroupSize(gpu, kernel, wg);
  const narrow = plan === 'register-narrow';
  const numInvocations = narrow ? M * Math.ceil(N / 8) : Math.ceil(M / 16) * Math.ceil(N / 16);
  return createDispatch(gpu, {
    label,
    code: registerSource,
    entryPoint: narrow ? 'main_narrow' : 'main',
    constants: { WG: wg },
    resources,
    params,
    grid: linearGrid(gpu, kernel, Math.ceil(numInvocations / wg)),
  });
}

