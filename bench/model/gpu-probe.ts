// Counts what a page does with WebGPU, for a library we cannot instrument from inside (the peer):
// GPU buffer bytes live and at the high-water mark (GPUDevice.createBuffer / GPUBuffer.destroy),
// compute dispatches, queue submits and readbacks (mapAsync with MAP_READ). It wraps those prototype
// methods while installed and restores them on uninstall(). Every device in the page is counted, so
// measure one library at a time; reset() starts a new window (a buffer created before reset and destroyed
// after it does not lower the live count).

export interface ProbeCounts {
  bytesLive: number;
  peakBytes: number;
  numDispatches: number;
  numSubmits: number;
  numReadbacks: number;
  readbackBytes: number;
}

export class GpuProbe {
  private sizes = new WeakMap<GPUBuffer, number>();
  private counts: ProbeCounts = GpuProbe.zero();
  private restore: (() => void) | undefined;

  private static zero(): ProbeCounts {
    return { bytesLive: 0, peakBytes: 0, numDispatches: 0, numSubmits: 0, numReadbacks: 0, readbackBytes: 0 };
  }

  install(): void {
    if (this.restore) return;
    const probe = this;
    const device = GPUDevice.prototype;
    const buffer = GPUBuffer.prototype;
    const pass = GPUComputePassEncoder.prototype;
    const queue = GPUQueue.prototype;
    const { createBuffer } = device;
    const { destroy, mapAsync } = buffer;
    const { dispatchWorkgroups, dispatchWorkgroupsIndirect } = pass;
    const { submit } = queue;
    device.createBuffer = function (this: GPUDevice, descriptor: GPUBufferDescriptor) {
      const b = createBuffer.call(this, descriptor);
      probe.sizes.set(b, descriptor.size);
      probe.counts.bytesLive += descriptor.size;
      probe.counts.peakBytes = Math.max(probe.counts.peakBytes, probe.counts.bytesLive);
      return b;
    };
    buffer.destroy = function (this: GPUBuffer) {
      const size = probe.sizes.get(this);
      if (size !== undefined) {
        probe.sizes.delete(this);
        probe.counts.bytesLive -= size;
      }
      return destroy.call(this);
    };
    buffer.mapAsync = function (this: GPUBuffer, mode: GPUMapModeFlags, offset?: number, size?: number) {
      if (mode & GPUMapMode.READ) {
        probe.counts.numReadbacks++;
        probe.counts.readbackBytes += size ?? this.size - (offset ?? 0);
      }
      return mapAsync.call(this, mode, offset, size);
    };
    pass.dispatchWorkgroups = function (this: GPUComputePassEncoder, x: number, y?: number, z?: number) {
      probe.counts.numDispatches++;
      return dispatchWorkgroups.call(this, x, y, z);
    };
    pass.dispatchWorkgroupsIndirect = function (this: GPUComputePassEncoder, b: GPUBuffer, offset: number) {
      probe.counts.numDispatches++;
      return dispatchWorkgroupsIndirect.call(this, b, offset);
    };
    queue.submit = function (this: GPUQueue, buffers: Iterable<GPUCommandBuffer>) {
      probe.counts.numSubmits++;
      return submit.call(this, buffers);
    };
    this.restore = () => {
      device.createBuffer = createBuffer;
      buffer.destroy = destroy;
      buffer.mapAsync = mapAsync;
      pass.dispatchWorkgroups = dispatchWorkgroups;
      pass.dispatchWorkgroupsIndirect = dispatchWorkgroupsIndirect;
      queue.submit = submit;
    };
  }

  uninstall(): void {
    this.restore?.();
    this.restore = undefined;
  }

  /** New window: live bytes and counters from zero; buffers already live are forgotten. */
  reset(): void {
    this.sizes = new WeakMap();
    this.counts = GpuProbe.zero();
  }

  snapshot(): ProbeCounts {
    return { ...this.counts };
  }
}
