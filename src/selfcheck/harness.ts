// Runs one prepared dispatch on fresh tensors and reads the outputs back; every tensor it made is
// released afterwards, whatever happens.

import type { GpuContext } from '../gpu/context';
import type { DType, HostArray, Tensor } from '../gpu/tensor';
import { submitDispatches, type Dispatch } from '../kernels/dispatch';
import { quantizeReference, type PackedFormat, type PackedWeight, type Weight, type WeightFormat } from '../kernels/weight-format';

export class Scratch {
  private readonly tensors: Tensor[] = [];

  constructor(private readonly gpu: GpuContext) {}

  upload(data: HostArray, shape: readonly number[], label: string): Tensor {
    const t = this.gpu.upload(data, shape, label);
    this.tensors.push(t);
    return t;
  }

  /** A zero-filled tensor (pooled buffers are reused, so clear explicitly). */
  zeros(shape: readonly number[], dtype: DType, label: string): Tensor {
    const t = this.gpu.createTensor(shape, dtype, label);
    this.tensors.push(t);
    const n = shape.reduce((a, b) => a * b, 1);
    this.gpu.write(t, dtype === 'f32' ? new Float32Array(n) : new Uint32Array(n));
    return t;
  }

  /**
   * W [N, K] in `format`, packed on the host by the reference quantizer (f32: uploaded as it is).
   * Kernels reading it must match their reference on dequantizeReference() of the same packing.
   */
  weight(format: WeightFormat, w: Float32Array, N: number, K: number, label: string): Weight {
    if (format === 'f32') return this.upload(w, [N, K], label);
    return this.packed(format, w, N, K, label);
  }

  packed(format: PackedFormat, w: Float32Array, N: number, K: number, label: string): PackedWeight {
    const host = quantizeReference(format, w, N, K);
    const data = this.upload(host.data, [host.data.length], `${label}.data`);
    const scales = host.scales ? this.upload(host.scales, [host.scales.length], `${label}.scales`) : undefined;
    return { format, shape: [N, K], data, scales, label };
  }

  releaseAll(): void {
    for (const t of this.tensors.splice(0)) this.gpu.release(t);
  }
}

/** Encode, submit, wait; returns the wall time from submit to completion in ms. */
export async function runTimed(gpu: GpuContext, dispatch: Dispatch): Promise<number> {
  const t0 = performance.now();
  submitDispatches(gpu, [dispatch], dispatch.label);
  await gpu.sync();
  return performance.now() - t0;
}

export async function withScratch<T>(gpu: GpuContext, body: (s: Scratch) => Promise<T>): Promise<T> {
  const scratch = new Scratch(gpu);
  try {
    return await body(scratch);
  } finally {
    scratch.releaseAll();
  }
}

/** Concatenate several readbacks (e.g. outputs and error flags) so one comparison covers them. */
export function concat(...parts: ArrayLike<number>[]): Float64Array {
  const n = parts.reduce((a, p) => a + p.length, 0);
  const out = new Float64Array(n);
  let o = 0;
  for (const p of parts) {
    for (let i = 0; i < p.length; i++) out[o + i] = p[i];
    o += p.length;
  }
  return out;
}

/** Run a prepared dispatch, read its outputs (concatenated), release it. */
export function runDispatch(
  gpu: GpuContext,
  dispatch: Dispatch,
  read: () => Promise<ArrayLike<number>[]>,
): Promise<{ got: Float64Array; gpuMs: number; ranAs: string }> {
  return runDispatches(gpu, [dispatch], read);
}

/** Run prepared dispatches in order in one submission (e.g. one per part of a weight split by rows), read, release them. */
export async function runDispatches(
  gpu: GpuContext,
  dispatches: readonly Dispatch[],
  read: () => Promise<ArrayLike<number>[]>,
): Promise<{ got: Float64Array; gpuMs: number; ranAs: string }> {
  try {
    const t0 = performance.now();
    submitDispatches(gpu, [...dispatches], dispatches[0]!.label);
    await gpu.sync();
    const gpuMs = performance.now() - t0;
    const labels = [...new Set(dispatches.map((d) => d.label))];
    return { got: concat(...(await read())), gpuMs, ranAs: labels.join(' + ') };
  } finally {
    for (const d of dispatches) d.release();
  }
}
