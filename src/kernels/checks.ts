// Checks every kernel runs before it builds anything: shapes, dtypes and device limits.
// Each failure is a named error with the numbers (see src/errors/gpu.ts).

import { BufferSizeError, DeviceLimitError, DtypeMismatchError, InternalError, ShapeMismatchError } from '../errors';
import type { GpuContext } from '../gpu/context';
import { tensorSizeBytes, type DType, type Tensor } from '../gpu/tensor';
import type { Grid } from './dispatch';
import { isPacked, packedLayout, type Weight } from './weight-format';

/** `tensor` must have exactly `shape` and `dtype`, and fit in one storage binding. */
export function expectTensor(
  gpu: GpuContext,
  kernel: string,
  operand: string,
  tensor: Tensor,
  shape: readonly number[],
  dtype: DType = 'f32',
): void {
  if (tensor.dtype !== dtype) throw new DtypeMismatchError(kernel, operand, dtype, tensor.dtype);
  const same = tensor.shape.length === shape.length && tensor.shape.every((d, i) => d === shape[i]);
  if (!same) throw new ShapeMismatchError(kernel, operand, shape, tensor.shape);
  expectBindable(gpu, kernel, operand, tensor);
}

/**
 * A weight operand: an f32 tensor of exactly `shape`, or a packed matrix of that logical shape whose data
 * (u32) and scales hold the format's layout for it.
 */
export function expectWeight(gpu: GpuContext, kernel: string, operand: string, w: Weight, shape: readonly [number, number]): void {
  if (!isPacked(w)) {
    expectTensor(gpu, kernel, operand, w, shape);
    return;
  }
  const same = w.shape[0] === shape[0] && w.shape[1] === shape[1];
  if (!same) throw new ShapeMismatchError(kernel, operand, shape, w.shape);
  const layout = packedLayout(w.format, shape[0], shape[1]);
  expectTensor(gpu, kernel, `${operand} (${w.format} data)`, w.data, [layout.dataWords], 'u32');
  if (layout.scaleWords > 0) {
    if (!w.scales) throw new ShapeMismatchError(kernel, `${operand} (${w.format} scales)`, [layout.scaleWords], []);
    expectTensor(gpu, kernel, `${operand} (${w.format} scales)`, w.scales, [layout.scaleWords], 'u32');
  }
}

/** The value of `const NAME: u32 = <n>u;` in a WGSL source: the one definition the host reads. */
/**
 * Invocations per workgroup of a kernel whose caller names none: 64, a multiple of every subgroup size
 * the adapters Tessera has met (SwiftShader 4 or 8, NVIDIA 32, AMD 32/64, Intel 8-32, Apple 32), and within
 * the WebGPU default limit of 256. The GPU tests check every kernel at 32, 64, 128 and 256.
 */
export const DEFAULT_WORKGROUP_SIZE = 64;

export function wgslConstant(source: string, name: string): number {
  const m = new RegExp(`const\\s+${name}\\s*:\\s*[iu]32\\s*=\\s*(\\d+)u?\\s*;`).exec(source);
  if (!m) throw new InternalError(`the WGSL source has no constant ${name}`);
  return Number(m[1]);
}

/** The tensor's bytes fit in one binding, inside its buffer, at an allowed offset. */
export function expectBindable(gpu: GpuContext, kernel: string, operand: string, tensor: Tensor): void {
  const size = tensorSizeBytes(tensor);
  const maxBinding = gpu.limits.maxStorageBufferBindingSize;
  if (size > maxBinding) {
    throw new DeviceLimitError(kernel, `maxStorageBufferBindingSize (bytes of '${operand}')`, size, maxBinding);
  }
  if (tensor.offsetBytes + size > tensor.buffer.size) {
    throw new BufferSizeError(kernel, operand, size, tensor.buffer.size, tensor.offsetBytes);
  }
  const align = gpu.limits.minStorageBufferOffsetAlignment;
  if (tensor.offsetBytes % align !== 0) {
    throw new DeviceLimitError(kernel, `minStorageBufferOffsetAlignment (offset of '${operand}')`, tensor.offsetBytes, align);
  }
}

export function expectPositiveInt(kernel: string, name: string, value: number): void {
  if (!Number.isInteger(value) || value < 1) throw new ShapeMismatchError(kernel, name, 1, value);
}

export function expectWorkgroupSize(gpu: GpuContext, kernel: string, size: number): void {
  const max = gpu.limits.maxComputeInvocationsPerWorkgroup;
  if (size > max) throw new DeviceLimitError(kernel, 'maxComputeInvocationsPerWorkgroup', size, max);
  if (size > gpu.limits.maxComputeWorkgroupSizeX) {
    throw new DeviceLimitError(kernel, 'maxComputeWorkgroupSizeX', size, gpu.limits.maxComputeWorkgroupSizeX);
  }
  if (!Number.isInteger(Math.log2(size))) throw new ShapeMismatchError(kernel, 'workgroup size (a power of two)', 64, size);
}

/**
 * Spread `numWorkgroups` over x and y so neither exceeds maxComputeWorkgroupsPerDimension.
 * Shaders recover the linear ids with shaders/lib/grid.wgsl (grid_workgroup, grid_invocation), which
 * createDispatch appends to every kernel; ids past the end exit early.
 */
export function linearGrid(gpu: GpuContext, kernel: string, numWorkgroups: number): Grid {
  const maxDim = gpu.limits.maxComputeWorkgroupsPerDimension;
  const n = Math.max(1, numWorkgroups);
  if (n <= maxDim) return [n, 1, 1];
  const y = Math.ceil(n / maxDim);
  if (y > maxDim) throw new DeviceLimitError(kernel, 'workgroups (x * y)', n, maxDim * maxDim);
  return [Math.ceil(n / y), y, 1];
}

/** A 2-D grid (x = column tiles, y = row tiles) within the per-dimension limit. */
export function tileGrid(gpu: GpuContext, kernel: string, tilesX: number, tilesY: number): Grid {
  const maxDim = gpu.limits.maxComputeWorkgroupsPerDimension;
  if (tilesX > maxDim) throw new DeviceLimitError(kernel, 'maxComputeWorkgroupsPerDimension (x)', tilesX, maxDim);
  if (tilesY > maxDim) throw new DeviceLimitError(kernel, 'maxComputeWorkgroupsPerDimension (y)', tilesY, maxDim);
  return [Math.max(1, tilesX), Math.max(1, tilesY), 1];
}
