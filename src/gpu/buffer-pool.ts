// Reuses GPUBuffers by (usage, size class) so per-call scratch and uniforms cost no allocations after
// warm-up. Sizes round up to a size class (powers of two, then eighths of a power of two above 64 KiB),
// which bounds slack to 12.5% for large buffers. Accounting only counts; it never frees on its own.

import type { GpuMemory } from './memory';

export interface BufferPoolStats {
  numCreated: number;
  numReused: number;
  numLive: number;
  bytesLive: number;
  bytesFree: number;
}

const MIN_BYTES = 256;

/** The size class a request of `sizeBytes` is served from. */
export function sizeClassBytes(sizeBytes: number): number {
  if (sizeBytes <= MIN_BYTES) return MIN_BYTES;
  const pow2 = 2 ** Math.ceil(Math.log2(sizeBytes));
  if (pow2 <= 65536) return pow2;
  const step = pow2 / 16; // an eighth of the power of two below sizeBytes
  return Math.ceil(sizeBytes / step) * step;
}

export class BufferPool {
  private readonly free = new Map<string, GPUBuffer[]>();
  private readonly live = new Set<GPUBuffer>();
  private numCreated = 0;
  private numReused = 0;
  private bytesFree = 0;
  private bytesLive = 0;

  constructor(private readonly memory: GpuMemory) {}

  /** A buffer of at least `sizeBytes` with exactly `usage` (GPUBufferUsage flags); return it with release(). */
  acquire(sizeBytes: number, usage: number, label: string): GPUBuffer {
    const size = sizeClassBytes(sizeBytes);
    const key = `${usage}:${size}`;
    const list = this.free.get(key);
    let buffer = list?.pop();
    if (buffer) {
      this.numReused++;
      this.bytesFree -= size;
      buffer.label = label;
    } else {
      buffer = this.memory.createBuffer({ size, usage, label });
      this.numCreated++;
    }
    this.live.add(buffer);
    this.bytesLive += size;
    return buffer;
  }

  /** Give a buffer back for reuse. Releasing a buffer this pool does not hold is a no-op. */
  release(buffer: GPUBuffer): void {
    if (!this.live.delete(buffer)) return;
    const key = `${buffer.usage}:${buffer.size}`;
    let list = this.free.get(key);
    if (!list) this.free.set(key, (list = []));
    list.push(buffer);
    this.bytesLive -= buffer.size;
    this.bytesFree += buffer.size;
  }

  /** Destroy every free buffer (live ones stay). */
  trim(): void {
    for (const list of this.free.values()) for (const b of list) this.memory.destroyBuffer(b);
    this.free.clear();
    this.bytesFree = 0;
  }

  stats(): BufferPoolStats {
    return {
      numCreated: this.numCreated,
      numReused: this.numReused,
      numLive: this.live.size,
      bytesLive: this.bytesLive,
      bytesFree: this.bytesFree,
    };
  }

  destroy(): void {
    this.trim();
    for (const b of this.live) this.memory.destroyBuffer(b);
    this.live.clear();
    this.bytesLive = 0;
  }
}
