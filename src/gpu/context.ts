// GpuContext: one GPUDevice with its buffer pool, pipeline cache and chosen kernel variant.
// The same object is made in a browser (navigator.gpu) and in Node (Dawn's `webgpu` package).

import { DeviceLostError, InternalError } from '../errors';
import { BufferPool } from './buffer-pool';
import { GpuMemory } from './memory';
import { MapMode, READBACK_USAGE, STORAGE_USAGE } from './flags';
import { PendingGpuOps } from './pending-ops';
import { PipelineCache } from './pipeline-cache';
import { describeAdapter, KEY_LIMITS, OPTIONAL_FEATURES, type AdapterReport, type KernelVariant } from './adapter-info';
import { bytesPerElement, dtypeOfHostArray, numElements, tensorSizeBytes, type DType, type HostArray, type Tensor } from './tensor';

export interface GpuContextOptions {
  /** Force a kernel variant instead of choosing by adapter (benchmarks compare both). */
  kernelVariant?: KernelVariant;
  /** How the adapter was found, for reports. */
  source?: string;
  /** An object that must stay reachable while the device lives (Dawn's GPU instance in Node). */
  keepAlive?: unknown;
  /** Called once if the device is lost for any reason other than destroy(). */
  onLost?: (error: DeviceLostError) => void;
  /**
   * Bind at most this many bytes of a storage buffer at once, below the device's own limit: Tessera then
   * runs as on a GPU with that maxStorageBufferBindingSize (weights larger than it are split by rows), so
   * an app can be tried against a laptop's or a phone's limit on a larger GPU.
   */
  maxStorageBufferBindingSize?: number;
}

export class GpuContext {
  readonly pool: BufferPool;
  /** Every buffer Tessera creates on this device, counted (bytes live, peak). */
  readonly memory: GpuMemory;
  readonly pipelines: PipelineCache;
  /** The device's operations not answered yet (what a stall report names) and how many have finished. */
  readonly pending = new PendingGpuOps();
  readonly features: ReadonlySet<string>;
  readonly limits: GPUSupportedLimits;
  readonly kernelVariant: KernelVariant;
  /** Set once the device is lost; every later use throws it. */
  lostError: DeviceLostError | undefined;
  private destroyed = false;
  private placeholderTensor: Tensor | undefined;

  private constructor(
    readonly device: GPUDevice,
    readonly adapter: AdapterReport,
    private readonly keepAlive: unknown,
    maxBinding?: number,
  ) {
    this.memory = new GpuMemory(device);
    this.pool = new BufferPool(this.memory);
    this.pipelines = new PipelineCache(device, this.pending);
    this.features = new Set(device.features);
    this.limits = maxBinding === undefined ? device.limits : withMaxBinding(device.limits, maxBinding);
    this.kernelVariant = adapter.kernelVariant;
  }

  /** Request a device with the adapter's larger limits and the optional features it has. */
  static async fromAdapter(adapter: GPUAdapter, options: GpuContextOptions = {}): Promise<GpuContext> {
    const requiredLimits: Record<string, number> = {};
    for (const name of KEY_LIMITS) {
      if (name === 'minStorageBufferOffsetAlignment') continue; // a minimum: keep the default
      requiredLimits[name] = adapter.limits[name];
    }
    const requiredFeatures = OPTIONAL_FEATURES.filter((f) => adapter.features.has(f)) as GPUFeatureName[];
    const report = describeAdapter(adapter, options.source ?? 'unknown', options.kernelVariant);
    const device = await adapter.requestDevice({
      label: 'tessera',
      requiredLimits,
      requiredFeatures,
    });
    const ctx = new GpuContext(device, report, options.keepAlive, options.maxStorageBufferBindingSize);
    void device.lost.then((info) => {
      if (ctx.destroyed) return;
      ctx.lostError = new DeviceLostError(String(info.reason), info.message);
      options.onLost?.(ctx.lostError);
    });
    device.addEventListener?.('uncapturederror', (event) => {
      const err = (event as GPUUncapturedErrorEvent).error;
      console.error(`tessera: uncaptured WebGPU error: ${err.message}`);
    });
    return ctx;
  }

  /**
   * The DeviceLostError if the device is lost now or within `ms` (a failed GPU call often reports before
   * the device's lost promise does); undefined otherwise.
   */
  async lostWithin(ms: number): Promise<DeviceLostError | undefined> {
    if (this.lostError || this.destroyed) return this.lostError;
    await Promise.race([this.device.lost, new Promise((r) => setTimeout(r, ms))]);
    await Promise.resolve(); // let the lost handler above record the error first
    return this.lostError;
  }

  /**
   * This context as a GPU that binds at most `bytes` of a storage buffer at once (see
   * GpuContextOptions.maxStorageBufferBindingSize): the same device, memory, pool and pipelines, only the
   * limit lower. Destroying either destroys both.
   */
  withBindingLimit(bytes: number): GpuContext {
    const view = Object.create(this) as GpuContext;
    Object.defineProperty(view, 'limits', { value: withMaxBinding(this.limits, bytes) });
    return view;
  }

  /** Throws the DeviceLostError if the device is gone. Call before encoding work. */
  assertAlive(): void {
    if (this.lostError) throw this.lostError;
    if (this.destroyed) throw new InternalError('GpuContext used after destroy()');
  }

  hasFeature(name: string): boolean {
    return this.features.has(name);
  }

  /** A tensor backed by a pooled buffer; contents are whatever the buffer held (zero when new). */
  createTensor(shape: readonly number[], dtype: DType, label: string, usage = STORAGE_USAGE): Tensor {
    this.assertAlive();
    const size = Math.max(4, Math.ceil((numElements(shape) * bytesPerElement(dtype)) / 4) * 4);
    const buffer = this.pool.acquire(size, usage, label);
    return { buffer, shape: [...shape], dtype, offsetBytes: 0, label };
  }

  /** A 4-element zero tensor bound where a kernel's optional operand is absent (e.g. no bias). */
  placeholder(): Tensor {
    this.placeholderTensor ??= this.upload(new Float32Array(4), [4], 'placeholder');
    return this.placeholderTensor;
  }

  /** A new tensor holding `data`. Uint16Array is taken as raw f16 bits. */
  upload(data: HostArray, shape: readonly number[], label: string, dtype: DType = dtypeOfHostArray(data)): Tensor {
    if (numElements(shape) !== data.length) {
      throw new InternalError(
        `upload '${label}': shape [${shape.join(', ')}] holds ${numElements(shape)} elements but data has ${data.length}`,
      );
    }
    const t = this.createTensor(shape, dtype, label);
    this.write(t, data);
    return t;
  }

  /** Overwrite a tensor's contents from the host. */
  write(t: Tensor, data: HostArray): void {
    this.assertAlive();
    const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    // writeBuffer wants a size that is a multiple of 4 bytes.
    if (bytes.byteLength % 4 !== 0) {
      const padded = new Uint8Array(Math.ceil(bytes.byteLength / 4) * 4);
      padded.set(bytes);
      this.device.queue.writeBuffer(t.buffer, t.offsetBytes, padded);
    } else {
      this.device.queue.writeBuffer(t.buffer, t.offsetBytes, bytes);
    }
  }

  /** Return a tensor's buffer to the pool. Only for tensors this context created. */
  release(t: Tensor): void {
    this.pool.release(t.buffer);
  }

  /** Copy a tensor back to the host (one staging buffer, one map). */
  async read(t: Tensor): Promise<Float32Array | Uint32Array | Int32Array | Uint16Array> {
    const bytes = await this.readBytes(t.buffer, t.offsetBytes, tensorSizeBytes(t));
    switch (t.dtype) {
      case 'f32':
        return new Float32Array(bytes.buffer, 0, numElements(t.shape));
      case 'u32':
        return new Uint32Array(bytes.buffer, 0, numElements(t.shape));
      case 'i32':
        return new Int32Array(bytes.buffer, 0, numElements(t.shape));
      case 'f16':
        return new Uint16Array(bytes.buffer, 0, numElements(t.shape));
    }
  }

  async readF32(t: Tensor): Promise<Float32Array> {
    if (t.dtype !== 'f32') throw new InternalError(`readF32 '${t.label}': tensor is ${t.dtype}`);
    return (await this.read(t)) as Float32Array;
  }

  async readU32(t: Tensor): Promise<Uint32Array> {
    if (t.dtype !== 'u32') throw new InternalError(`readU32 '${t.label}': tensor is ${t.dtype}`);
    return (await this.read(t)) as Uint32Array;
  }

  /** Read `sizeBytes` from `buffer` at `offsetBytes` into a fresh host array. */
  readBytes(buffer: GPUBuffer, offsetBytes: number, sizeBytes: number): Promise<Uint8Array> {
    return this.encodeAndRead(() => {}, buffer, offsetBytes, sizeBytes, 'readback');
  }

  /**
   * Encode work with `encode`, then copy `sizeBytes` of `buffer` to a staging buffer in the same command
   * buffer, submit once, and read the copy back: one submit per step for work + readback.
   */
  async encodeAndRead(
    encode: (encoder: GPUCommandEncoder) => void,
    buffer: GPUBuffer,
    offsetBytes: number,
    sizeBytes: number,
    label: string,
  ): Promise<Uint8Array> {
    this.assertAlive();
    const copySize = Math.ceil(sizeBytes / 4) * 4;
    const staging = this.pool.acquire(copySize, READBACK_USAGE, `${label}.readback`);
    try {
      const encoder = this.device.createCommandEncoder({ label });
      encode(encoder);
      encoder.copyBufferToBuffer(buffer, offsetBytes, staging, 0, copySize);
      this.device.queue.submit([encoder.finish()]);
      await this.pending.track(`mapAsync ${label}`, staging.mapAsync(MapMode.READ, 0, copySize));
      const out = new Uint8Array(copySize);
      out.set(new Uint8Array(staging.getMappedRange(0, copySize)));
      staging.unmap();
      return out.subarray(0, sizeBytes);
    } finally {
      this.pool.release(staging);
    }
  }

  /** Resolves when all submitted work has finished. */
  async sync(): Promise<void> {
    this.assertAlive();
    await this.pending.track('onSubmittedWorkDone', this.device.queue.onSubmittedWorkDone());
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.pool.destroy();
    this.device.destroy();
    void this.keepAlive;
  }
}

/**
 * The device's limits with maxStorageBufferBindingSize lowered to `bytes` (never raised). A view, not a
 * copy: GPUSupportedLimits' fields are getters on its prototype, which spreading would drop.
 */
function withMaxBinding(limits: GPUSupportedLimits, bytes: number): GPUSupportedLimits {
  if (!Number.isInteger(bytes) || bytes < 1024) {
    throw new RangeError(`maxStorageBufferBindingSize ${bytes}: give a whole number of bytes, at least 1024`);
  }
  const value = Math.min(bytes, limits.maxStorageBufferBindingSize);
  return new Proxy(limits, {
    get: (target, name) => (name === 'maxStorageBufferBindingSize' ? value : Reflect.get(target, name, target)),
  });
}
