// Several tensors of one dtype in one GPU buffer, each at an offset a binding accepts
// (minStorageBufferOffsetAlignment): kernels bind each as a view of its own, and a fused kernel binds the
// whole buffer once and finds each by its element offset, which keeps it within the 8 storage buffers every
// WebGPU device allows (src/kernels/decode-gemv.ts).

import { InternalError } from '../../errors';
import type { GpuContext } from '../../gpu/context';
import type { DType, Tensor } from '../../gpu/tensor';
import { bytesPerElement, numElements } from '../../gpu/tensor';

export class PackedTensors {
  /** The whole buffer as one flat tensor. */
  readonly whole: Tensor;
  private readonly views = new Map<string, Tensor>();

  constructor(gpu: GpuContext, label: string, dtype: DType, entries: ReadonlyArray<readonly [name: string, shape: readonly number[]]>) {
    const align = gpu.limits.minStorageBufferOffsetAlignment;
    const size = bytesPerElement(dtype);
    let offset = 0;
    const placed: Array<[string, readonly number[], number]> = [];
    for (const [name, shape] of entries) {
      placed.push([name, shape, offset]);
      offset = Math.ceil((offset + numElements(shape) * size) / align) * align;
    }
    this.whole = gpu.createTensor([Math.max(1, offset / size)], dtype, label);
    for (const [name, shape, offsetBytes] of placed) {
      this.views.set(name, { buffer: this.whole.buffer, shape: [...shape], dtype, offsetBytes, label: `${label}.${name}` });
    }
  }

  has(name: string): boolean {
    return this.views.has(name);
  }

  /** The view named `name`. */
  get(name: string): Tensor {
    const t = this.views.get(name);
    if (!t) throw new InternalError(`no packed tensor '${name}' in ${this.whole.label}`);
    return t;
  }

  /** Where `name` starts in the whole buffer, in elements. */
  offsetOf(name: string): number {
    const t = this.get(name);
    return t.offsetBytes / bytesPerElement(t.dtype);
  }

  names(): string[] {
    return [...this.views.keys()];
  }
}
