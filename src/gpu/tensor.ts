// A small tensor type: a GPUBuffer region plus shape and dtype. Tensors do not own memory policy;
// whoever created one (usually GpuContext.createTensor) releases it.

export type DType = 'f32' | 'f16' | 'u32' | 'i32';

export interface Tensor {
  readonly buffer: GPUBuffer;
  /** Row-major shape in elements, outermost first. */
  readonly shape: readonly number[];
  readonly dtype: DType;
  /** Byte offset of element 0 inside `buffer` (a multiple of minStorageBufferOffsetAlignment when bound). */
  readonly offsetBytes: number;
  readonly label: string;
}

export type HostArray = Float32Array | Uint32Array | Int32Array | Uint16Array;

const BYTES: Record<DType, number> = { f32: 4, f16: 2, u32: 4, i32: 4 };

export function bytesPerElement(dtype: DType): number {
  return BYTES[dtype];
}

export function numElements(shape: readonly number[]): number {
  let n = 1;
  for (const d of shape) n *= d;
  return n;
}

export function tensorSizeBytes(t: Pick<Tensor, 'shape' | 'dtype'>): number {
  return numElements(t.shape) * bytesPerElement(t.dtype);
}

/** The dtype a host array holds, for uploads. Uint16Array carries raw f16 bits. */
export function dtypeOfHostArray(a: HostArray): DType {
  if (a instanceof Float32Array) return 'f32';
  if (a instanceof Uint32Array) return 'u32';
  if (a instanceof Int32Array) return 'i32';
  return 'f16';
}

/** A binding resource covering exactly the tensor's bytes (pooled buffers may be larger). */
export function tensorBinding(t: Tensor): GPUBufferBinding {
  // Bound sizes must be multiples of 4; f16 tensors with an odd count round up into pool slack.
  const size = Math.ceil(tensorSizeBytes(t) / 4) * 4;
  return { buffer: t.buffer, offset: t.offsetBytes, size };
}
