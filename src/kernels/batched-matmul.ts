// C[z] = A[z] · B[z]ᵀ for z < batch, f32, on the register matmul kernel (matmul-register.wgsl `main`)
// with a strided batch layout: the ViT attention's per-head products (QKᵀ and P·V) are matmuls over views
// of one buffer, so they run at the speed of the tuned weight matmuls instead of in a kernel of their own.
//
//   A: rows of K floats, row r of matrix z at a.offset + z * a.batch + r * a.stride      (M rows)
//   B: rows of K floats, row n of matrix z at b.offset + z * b.batch + n * b.stride      (N rows)
//   C: C[z][r, n] at c.offset + z * c.batch + r * c.stride + n
// A and B are read as vec4 along K: K, their offsets and strides must be multiples of 4.

import { DeviceLimitError, UnsupportedShapeError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { DEFAULT_WORKGROUP_SIZE, expectPositiveInt, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, type KernelDispatch } from './dispatch';
import { packRegisterParams, registerKernelSource, WIDE_COLS, WIDE_ROWS, type StridedMatrix } from './matmul';
import { ACTIVATION_LIB, assembleWgsl, weightLib } from './weight-lib';

export interface BatchedMatmulShape {
  batch: number;
  M: number;
  N: number;
  K: number;
}

export interface BatchedMatmulLayout {
  a: StridedMatrix;
  b: StridedMatrix;
  c: StridedMatrix;
}

/** One past the last element a strided operand touches. */
function extent(m: StridedMatrix, batch: number, rows: number, width: number): number {
  return m.offset + (batch - 1) * m.batch + (rows - 1) * m.stride + width;
}

function expectFits(
  kernel: string,
  name: string,
  t: Tensor,
  m: StridedMatrix,
  batch: number,
  rows: number,
  width: number,
  vec4: boolean,
): void {
  for (const [field, v] of Object.entries(m)) {
    if (!Number.isInteger(v) || v < 0 || (vec4 && v % 4 !== 0)) {
      throw new UnsupportedShapeError(
        `${kernel}: ${name}.${field} = ${v} must be a non-negative integer${vec4 ? ' and a multiple of 4 (read as vec4)' : ''}`,
      );
    }
  }
  const numel = t.shape.reduce((x, y) => x * y, 1);
  const end = extent(m, batch, rows, width);
  if (end > numel) {
    throw new UnsupportedShapeError(
      `${kernel}: ${name} reaches element ${end} but its tensor holds ${numel} (shape [${t.shape.join(', ')}])`,
    );
  }
  if (t.dtype !== 'f32') throw new UnsupportedShapeError(`${kernel}: ${name} must be f32, got ${t.dtype}`);
  if (vec4 && t.offsetBytes % 16 !== 0)
    throw new UnsupportedShapeError(`${kernel}: ${name} offset ${t.offsetBytes} bytes is not 16-byte aligned`);
}

export async function prepareBatchedMatmul(
  gpu: GpuContext,
  io: { a: Tensor; b: Tensor; c: Tensor },
  shape: BatchedMatmulShape,
  layout: BatchedMatmulLayout,
  options: { label?: string; workgroupSize?: number } = {},
): Promise<KernelDispatch> {
  const kernel = options.label ?? 'batched-matmul';
  const { batch, M, N, K } = shape;
  expectPositiveInt(kernel, 'batch', batch);
  expectPositiveInt(kernel, 'M', M);
  expectPositiveInt(kernel, 'N', N);
  expectPositiveInt(kernel, 'K', K);
  if (K % 4 !== 0) throw new UnsupportedShapeError(`${kernel}: K = ${K} must be a multiple of 4 (A and B are read as vec4)`);
  expectFits(kernel, 'a', io.a, layout.a, batch, M, K, true);
  expectFits(kernel, 'b', io.b, layout.b, batch, N, K, true);
  expectFits(kernel, 'c', io.c, layout.c, batch, M, N, false);
  const maxDim = gpu.limits.maxComputeWorkgroupsPerDimension;
  if (batch > maxDim) throw new DeviceLimitError(kernel, 'maxComputeWorkgroupsPerDimension (z)', batch, maxDim);
  const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
  expectWorkgroupSize(gpu, kernel, wg);
  const lib = weightLib('f32', { scalarF32: false, f16Math: false });
  const invocations = Math.ceil(M / WIDE_ROWS) * Math.ceil(N / WIDE_COLS);
  const [gx, gy] = linearGrid(gpu, kernel, Math.ceil(invocations / wg));
  return createDispatch(gpu, {
    label: `${kernel}:register-wide:f32`,
    code: assembleWgsl(lib.enables, lib.source, ACTIVATION_LIB, registerKernelSource(N, io.c, layout.c)),
    entryPoint: 'main',
    constants: { WG: wg, EPILOGUE: 0 }, // no bias, activation or accumulation: plain stores
    // x = A, W = B (f32: no scales binding), no bias, y = C
    resources: [io.a, io.b, null, gpu.placeholder(), io.c],
    params: packRegisterParams({ M, N, K }, 0, { x: layout.a, w: layout.b, y: layout.c }),
    grid: [gx, gy, batch],
    cost: { flops: 2 * batch * M * N * K, bytes: 4 * batch * (M * K + N * K + M * N) },
  });
}
