// Accounting for every GPUBuffer Tessera creates: bytes live now and the high-water mark, so reports can
// say how much GPU memory a model and its requests took (WebGPU has no memory query of its own).

export interface GpuMemoryStats {
  numBuffers: number;
  bytesLive: number;
  peakBytes: number;
}

export class GpuMemory {
  private readonly sizes = new Map<GPUBuffer, number>();
  private bytesLive = 0;
  private peakBytes = 0;

  constructor(private readonly device: GPUDevice) {}

  createBuffer(descriptor: GPUBufferDescriptor): GPUBuffer {
    const buffer = this.device.createBuffer(descriptor);
    this.sizes.set(buffer, descriptor.size);
    this.bytesLive += descriptor.size;
    this.peakBytes = Math.max(this.peakBytes, this.bytesLive);
    return buffer;
  }

  destroyBuffer(buffer: GPUBuffer): void {
    const size = this.sizes.get(buffer);
    if (size !== undefined) {
      this.sizes.delete(buffer);
      this.bytesLive -= size;
    }
    buffer.destroy();
  }

  /** Forget the high-water mark (benchmarks measure one phase at a time). */
  resetPeak(): void {
    this.peakBytes = this.bytesLive;
  }

  stats(): GpuMemoryStats {
    return { numBuffers: this.sizes.size, bytesLive: this.bytesLive, peakBytes: this.peakBytes };
  }
}
