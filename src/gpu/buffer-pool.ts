// Reuses GPUBuffers by (usage, size class) so per-call scratch and uniforms cost no allocations after
// warm-up. Sizes round up to a size class (powers of two, then eighths of a power of two above 64 KiB),
// which bounds slack to 12.5% for large buffers.
//
// Readback staging buffers (MAP_READ) are the exception: reads come in every size (logits for as many rows
// as sampled in a step, embeddings for as many tiles as encoded), and keeping one buffer per size class met
// would hold about six times the largest read in host-visible memory for ever. A read takes the smallest
// free staging buffer that is large enough, whatever its class; when none is, a new one is made and the
// free staging buffers smaller than it are destroyed (a larger one now serves their reads). Staging memory
// then stays within the largest read times the reads in flight at once.

import { BufferUsage } from './flags';
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
  /** Free readback staging buffers (MAP_READ), whatever their size (a handful at most). */
  private staging: GPUBuffer[] = [];
  private readonly live = new Set<GPUBuffer>();
  private numCreated = 0;
  private numReused = 0;
  private bytesFree = 0;
  private bytesLive = 0;

  constructor(private readonly memory: GpuMemory) {}

  /** A buffer of at least `sizeBytes` with exactly `usage` (GPUBufferUsage flags); return it with release(). */
  acquire(sizeBytes: number, usage: number, label: string): GPUBuffer {
    const size = sizeClassBytes(sizeBytes);
    if (usage & BufferUsage.MAP_READ) return this.acquireStaging(size, usage, label);
    const key = `${usage}:${size}`;
    const list = this.free.get(key);
    let buffer = list?.pop();
    if (buffer) {
      this.numReused++;
      this.bytesFree -= buffer.size;
      buffer.label = label;
    } else {
      buffer = this.memory.createBuffer({ size, usage, label });
      this.numCreated++;
    }
    this.live.add(buffer);
    this.bytesLive += buffer.size;
    return buffer;
  }

  /**
   * A staging buffer for a read of `size` bytes: the smallest free one of this usage that is large enough;
   * none, a new one of this size, after destroying the free ones smaller than it.
   */
  private acquireStaging(size: number, usage: number, label: string): GPUBuffer {
    let best = -1;
    for (let i = 0; i < this.staging.length; i++) {
      const b = this.staging[i]!;
      if (b.usage === usage && b.size >= size && (best < 0 || b.size < this.staging[best]!.size)) best = i;
    }
    let buffer: GPUBuffer;
    if (best >= 0) {
      buffer = this.staging.splice(best, 1)[0]!;
      this.numReused++;
      this.bytesFree -= buffer.size;
      buffer.label = label;
    } else {
      this.staging = this.staging.filter((b) => {
        if (b.usage !== usage || b.size >= size) return true;
        this.memory.destroyBuffer(b);
        this.bytesFree -= b.size;
        return false;
      });
      buffer = this.memory.createBuffer({ size, usage, label });
      this.numCreated++;
    }
    this.live.add(buffer);
    this.bytesLive += buffer.size;
    return buffer;
  }

  /** Give a buffer back for reuse. Releasing a buffer this pool does not hold is a no-op. */
  release(buffer: GPUBuffer): void {
    if (!this.live.delete(buffer)) return;
    this.bytesLive -= buffer.size;
    this.bytesFree += buffer.size;
    if (buffer.usage & BufferUsage.MAP_READ) {
      this.staging.push(buffer);
      return;
    }
    const key = `${buffer.usage}:${buffer.size}`;
    let list = this.free.get(key);
    if (!list) this.free.set(key, (list = []));
    list.push(buffer);
  }

  /** Destroy every free buffer (live ones stay). */
  trim(): void {
    for (const list of this.free.values()) for (const b of list) this.memory.destroyBuffer(b);
    for (const b of this.staging) this.memory.destroyBuffer(b);
    this.free.clear();
    this.staging = [];
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
