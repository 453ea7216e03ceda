// GPU-layer logic that needs no device: size classes, pooling, pipeline keys, grids, uniform packing.

import { describe, expect, it } from 'vitest';
import { DeviceLimitError } from '../../src/errors';
import { BufferPool, sizeClassBytes } from '../../src/gpu/buffer-pool';
import { GpuMemory, memoryArea } from '../../src/gpu/memory';
import type { GpuContext } from '../../src/gpu/context';
import { pipelineKey } from '../../src/gpu/pipeline-cache';
import { linearGrid } from '../../src/kernels/checks';
import { packParams } from '../../src/kernels/dispatch';

describe('sizeClassBytes', () => {
  it('rounds small sizes to powers of two from 256 bytes', () => {
    expect([1, 256, 257, 1000, 65536].map(sizeClassBytes)).toEqual([256, 256, 512, 1024, 65536]);
  });
  it('rounds large sizes to eighths of a power of two (at most 12.5% slack)', () => {
    expect(sizeClassBytes(65537)).toBe(73728); // 128 KiB / 8 = 16 KiB steps
    expect(sizeClassBytes(3 * 2 ** 20)).toBe(3 * 2 ** 20);
    for (const n of [70_000, 1_234_567, 113_541_120]) {
      const c = sizeClassBytes(n);
      expect(c).toBeGreaterThanOrEqual(n);
      expect(c / n).toBeLessThanOrEqual(1.125);
    }
  });
});

function fakeDevice() {
  let created = 0;
  const device = {
    createBuffer: ({ size, usage, label }: GPUBufferDescriptor) => {
      created++;
      return { size, usage, label, destroy() {} } as unknown as GPUBuffer;
    },
  } as unknown as GPUDevice;
  return { device, created: () => created };
}

describe('BufferPool', () => {
  it('reuses a released buffer of the same size class and usage', () => {
    const { device, created } = fakeDevice();
    const pool = new BufferPool(new GpuMemory(device));
    const a = pool.acquire(1000, 0x80, 'a');
    pool.release(a);
    const b = pool.acquire(900, 0x80, 'b');
    expect(b).toBe(a);
    expect(b.label).toBe('b');
    expect(created()).toBe(1);
    expect(pool.stats()).toEqual({ numCreated: 1, numReused: 1, numLive: 1, bytesLive: 1024, bytesFree: 0 });
  });

  it('keeps usages apart and counts free bytes', () => {
    const { device } = fakeDevice();
    const pool = new BufferPool(new GpuMemory(device));
    const a = pool.acquire(1000, 0x80, 'a');
    pool.release(a);
    const u = pool.acquire(1000, 0x40, 'u');
    expect(u).not.toBe(a);
    expect(pool.stats()).toMatchObject({ numCreated: 2, bytesLive: 1024, bytesFree: 1024 });
    pool.trim();
    expect(pool.stats().bytesFree).toBe(0);
  });

  it('serves readback staging from the smallest free buffer large enough, and drops the smaller ones a larger one replaces', () => {
    const { device, created } = fakeDevice();
    const memory = new GpuMemory(device);
    const pool = new BufferPool(memory);
    const READBACK = 0x0001 | 0x0008;
    // Reads of growing size, one at a time (logits of 1, 2, 3, ... rows): one buffer at a time is kept.
    for (let rows = 1; rows <= 64; rows++) pool.release(pool.acquire(rows * 196_608, READBACK, 'readback'));
    const largest = sizeClassBytes(64 * 196_608);
    expect(pool.stats()).toMatchObject({ bytesLive: 0, bytesFree: largest });
    expect(memory.stats().bytesLive).toBe(largest);
    // Smaller reads now reuse it; two at once need a second buffer, sized for the one that has none.
    const before = created();
    const a = pool.acquire(196_608, READBACK, 'a');
    expect(a.size).toBe(largest);
    const b = pool.acquire(3 * 196_608, READBACK, 'b');
    expect(b.size).toBe(sizeClassBytes(3 * 196_608));
    expect(created()).toBe(before + 1);
    pool.release(a);
    pool.release(b);
    expect(pool.stats()).toMatchObject({ bytesLive: 0, bytesFree: largest + b.size });
    // Other usages keep their exact classes.
    const s = pool.acquire(1000, 0x80, 's');
    pool.release(s);
    expect(pool.acquire(100, 0x80, 't')).not.toBe(s);
  });

  it('ignores a release of a buffer it does not hold', () => {
    const { device } = fakeDevice();
    const pool = new BufferPool(new GpuMemory(device));
    const a = pool.acquire(16, 0x80, 'a');
    pool.release(a);
    pool.release(a);
    expect(pool.stats()).toMatchObject({ numLive: 0, bytesFree: 256 });
  });
});

describe('pipelineKey', () => {
  it('is independent of the order override constants are given in', () => {
    const a = pipelineKey({ label: 'k', code: '', constants: { WG: 64, ACT: 1 } });
    const b = pipelineKey({ label: 'k', code: '', constants: { ACT: 1, WG: 64 } });
    expect(a).toBe(b);
    expect(a).not.toBe(pipelineKey({ label: 'k', code: '', constants: { ACT: 2, WG: 64 } }));
    expect(a).not.toBe(pipelineKey({ label: 'k', code: '', entryPoint: 'other', constants: { ACT: 1, WG: 64 } }));
  });
});

describe('linearGrid', () => {
  const gpu = { limits: { maxComputeWorkgroupsPerDimension: 65535 } } as unknown as GpuContext;
  it('uses x alone while it fits', () => expect(linearGrid(gpu, 'k', 65535)).toEqual([65535, 1, 1]));
  it('splits over y past the per-dimension limit', () => {
    const [x, y] = linearGrid(gpu, 'k', 200_000);
    expect(y).toBe(4);
    expect(x * y).toBeGreaterThanOrEqual(200_000);
    expect(x).toBeLessThanOrEqual(65535);
  });
  it('throws a DeviceLimitError with the numbers past x*y', () => {
    expect(() => linearGrid(gpu, 'copy', 65535 * 65535 + 1)).toThrowError(DeviceLimitError);
    expect(() => linearGrid(gpu, 'copy', 65535 * 65535 + 1)).toThrowError(
      /copy: needs workgroups \(x \* y\) = 4294836226 but this device allows 4294836225/,
    );
  });
});

describe('packParams', () => {
  it('packs u32/i32/f32 little-endian and pads to 16 bytes', () => {
    const buf = packParams([
      ['u32', 7],
      ['f32', 0.5],
      ['i32', -2],
      ['u32', 1],
      ['u32', 9],
    ]);
    expect(buf.byteLength).toBe(32);
    const v = new DataView(buf);
    expect([v.getUint32(0, true), v.getFloat32(4, true), v.getInt32(8, true), v.getUint32(12, true), v.getUint32(16, true)]).toEqual([
      7, 0.5, -2, 1, 9,
    ]);
  });
});

describe('GpuMemory', () => {
  it('counts live bytes and keeps the high-water mark', () => {
    const { device } = fakeDevice();
    const memory = new GpuMemory(device);
    const a = memory.createBuffer({ size: 1000, usage: 0x80, label: 'weight:text.embed' });
    const b = memory.createBuffer({ size: 24, usage: 0x80, label: 'lm.h' });
    memory.destroyBuffer(a);
    expect(memory.stats()).toEqual({
      numBuffers: 1,
      bytesLive: 24,
      peakBytes: 1024,
      byArea: { lm: 24 },
      peakByArea: { weight: 1000, lm: 24 },
    });
    memory.resetPeak();
    expect(memory.stats().peakBytes).toBe(24);
    expect(memory.stats().peakByArea).toEqual({ lm: 24 });
    memory.destroyBuffer(b);
    expect(memory.stats().bytesLive).toBe(0);
    expect(memory.stats().byArea).toEqual({});
  });

  it("names the area of a buffer by its label's first word", () => {
    expect(memoryArea('kv-cache.3.k')).toBe('kv-cache');
    expect(memoryArea('matmul:register-narrow:f32.params')).toBe('matmul');
    expect(memoryArea('vit-attention.scores')).toBe('vit-attention');
    expect(memoryArea('placeholder')).toBe('placeholder');
    expect(memoryArea(undefined)).toBe('unlabelled');
  });
});
