// Accounting for every GPUBuffer Tessera creates: bytes live now and the high-water mark, in total and
// per area (the label's first word: `weight`, `kv-cache`, `lm`, `vision`, `vit-attention`, ...), so reports
// can say how much GPU memory a model and its requests took and what held it at the peak (WebGPU has no
// memory query of its own).

export interface GpuMemoryStats {
  numBuffers: number;
  bytesLive: number;
  peakBytes: number;
  /** Bytes live per area now. */
  byArea: Record<string, number>;
  /** Bytes live per area at the moment of the peak (they sum to peakBytes). */
  peakByArea: Record<string, number>;
}

/** The area a buffer is counted under: its label up to the first ':' or '.' (`lm.h` -> `lm`). */
export function memoryArea(label: string | undefined): string {
  if (!label) return 'unlabelled';
  const cut = label.search(/[:.]/);
  return cut > 0 ? label.slice(0, cut) : label;
}

export class GpuMemory {
  private readonly buffers = new Map<GPUBuffer, { size: number; area: string }>();
  private readonly live = new Map<string, number>();
  private bytesLive = 0;
  private peakBytes = 0;
  private peakByArea: Record<string, number> = {};

  constructor(private readonly device: GPUDevice) {}

  createBuffer(descriptor: GPUBufferDescriptor): GPUBuffer {
    const buffer = this.device.createBuffer(descriptor);
    const area = memoryArea(descriptor.label);
    this.buffers.set(buffer, { size: descriptor.size, area });
    this.live.set(area, (this.live.get(area) ?? 0) + descriptor.size);
    this.bytesLive += descriptor.size;
    if (this.bytesLive > this.peakBytes) {
      this.peakBytes = this.bytesLive;
      this.peakByArea = Object.fromEntries(this.live);
    }
    return buffer;
  }

  destroyBuffer(buffer: GPUBuffer): void {
    const entry = this.buffers.get(buffer);
    if (entry !== undefined) {
      this.buffers.delete(buffer);
      this.bytesLive -= entry.size;
      const left = (this.live.get(entry.area) ?? 0) - entry.size;
      if (left > 0) this.live.set(entry.area, left);
      else this.live.delete(entry.area);
    }
    buffer.destroy();
  }

  /** Forget the high-water mark (benchmarks measure one phase at a time). */
  resetPeak(): void {
    this.peakBytes = this.bytesLive;
    this.peakByArea = Object.fromEntries(this.live);
  }

  stats(): GpuMemoryStats {
    return {
      numBuffers: this.buffers.size,
      bytesLive: this.bytesLive,
      peakBytes: this.peakBytes,
      byArea: Object.fromEntries(this.live),
      peakByArea: { ...this.peakByArea },
    };
  }
}
