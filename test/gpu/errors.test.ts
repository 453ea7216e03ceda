// Bad input to the GPU layer and kernels: named errors with the numbers, raised before any dispatch.

import { describe, expect, it } from 'vitest';
import {
  BufferSizeError,
  DeviceLimitError,
  DeviceLostError,
  DtypeMismatchError,
  GpuValidationError,
  HeadDimError,
  ShaderCompileError,
  ShapeMismatchError,
  UnsupportedShapeError,
} from '../../src/errors';
import { createNodeGpuContext } from '../../src/gpu/node';
import type { Tensor } from '../../src/gpu/tensor';
import { prepareMatmul } from '../../src/kernels/matmul';
import { prepareRmsNorm } from '../../src/kernels/rms-norm';
import { prepareVitAttention } from '../../src/kernels/vit-attention';
import { useGpu } from './gpu';

const gpu = useGpu();

function f32(shape: number[], label: string): Tensor {
  return gpu().createTensor(shape, 'f32', label);
}

describe('kernel input checks', () => {
  it('a wrong operand shape is a ShapeMismatchError naming kernel, operand and both shapes', async () => {
    const io = { x: f32([4, 8], 'x'), weight: f32([16, 9], 'w'), y: f32([4, 16], 'y') };
    const err = await prepareMatmul(gpu(), io, { M: 4, N: 16, K: 8 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ShapeMismatchError);
    expect((err as Error).message).toBe(
      "matmul: 'weight' has shape [16, 9] but the kernel needs [16, 8]; check the tensor you passed for this operand.",
    );
  });

  it('a wrong dtype is a DtypeMismatchError', async () => {
    const io = { x: gpu().createTensor([2, 8], 'u32', 'x'), weight: f32([8], 'w'), y: f32([2, 8], 'y') };
    const err = await prepareRmsNorm(gpu(), io, { rows: 2, dim: 8 }, { eps: 1e-5 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DtypeMismatchError);
    expect((err as Error).message).toContain("rms-norm: 'x' has dtype u32 but the kernel needs f32");
  });

  it('a tensor bigger than one binding is a DeviceLimitError with both byte counts', async () => {
    const small = f32([4], 'small');
    const rows = 1 << 20;
    const huge: Tensor = { ...small, shape: [rows, 1024], label: 'huge' };
    const io = { x: huge, weight: f32([1024], 'w'), y: huge };
    const err = await prepareRmsNorm(gpu(), io, { rows, dim: 1024 }, { eps: 1e-5 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DeviceLimitError);
    const max = gpu().limits.maxStorageBufferBindingSize;
    expect((err as Error).message).toContain(
      `needs maxStorageBufferBindingSize (bytes of 'x') = ${rows * 4096} but this device allows ${max}`,
    );
  });

  it('a tensor that claims more bytes than its buffer holds is a BufferSizeError', async () => {
    const t = f32([16], 't');
    const liar: Tensor = { ...t, shape: [16, 1000] };
    const io = { x: liar, weight: f32([1000], 'w'), y: liar };
    const err = await prepareRmsNorm(gpu(), io, { rows: 16, dim: 1000 }, { eps: 1e-5 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BufferSizeError);
    expect((err as Error).message).toContain("rms-norm: 'x' needs 64000 bytes from offset 0 but its buffer holds 256");
  });

  it('a workgroup size above the device limit is a DeviceLimitError', async () => {
    const io = { x: f32([2, 8], 'x'), weight: f32([8], 'w'), y: f32([2, 8], 'y') };
    await expect(prepareRmsNorm(gpu(), io, { rows: 2, dim: 8 }, { eps: 1e-5, workgroupSize: 1024 })).rejects.toThrowError(DeviceLimitError);
  });

  it('a head size the attention kernels cannot hold is a HeadDimError with the number', async () => {
    for (const headDim of [70, 260]) {
      const io = { qkv: f32([4, 3 * headDim], 'qkv'), mask: gpu().createTensor([4], 'u32', 'm'), out: f32([4, headDim], 'o') };
      const err = await prepareVitAttention(gpu(), io, { batch: 1, tokens: 4, heads: 1, headDim }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(HeadDimError);
      expect((err as HeadDimError).name).toBe('HeadDimError');
      expect((err as Error).message).toContain(`head_dim ${headDim}`);
      expect((err as Error).message).toMatch(headDim > 256 ? /above the largest supported head size, 256/ : /not a multiple of 4/);
    }
  });

  it('a vec4 matmul plan with K % 4 != 0 is refused with the numbers', async () => {
    const io = { x: f32([2, 6], 'x'), weight: f32([3, 6], 'w'), y: f32([2, 3], 'y') };
    await expect(prepareMatmul(gpu(), io, { M: 2, N: 3, K: 6 }, { plan: 'register-wide' })).rejects.toThrowError(UnsupportedShapeError);
  });
});

describe('shader and pipeline errors', () => {
  it('a WGSL compile error carries the label and the compiler messages', async () => {
    const code = '@compute @workgroup_size(1) fn main() { let x: f32 = undefined_thing; }';
    const err = await gpu()
      .pipelines.get({ label: 'broken-kernel', code })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ShaderCompileError);
    const e = err as ShaderCompileError;
    expect(e.label).toBe('broken-kernel');
    expect(e.messages.some((m) => m.type === 'error' && m.message.includes('undefined_thing'))).toBe(true);
    expect(e.message).toMatch(/WGSL for 'broken-kernel' did not compile:\n {2}broken-kernel:1:\d+ error: .*undefined_thing/);
  });

  it('a pipeline that fails validation is a GpuValidationError naming the pipeline', async () => {
    const code = 'override WG: u32 = 64; @compute @workgroup_size(WG) fn main() {}';
    const err = await gpu()
      .pipelines.get({ label: 'too-wide', code, constants: { WG: 100000 } })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GpuValidationError);
    expect((err as Error).message).toContain("WebGPU rejected 'too-wide[main|WG=100000]'");
  });

  it('the pipeline cache returns the same pipeline for the same key and compiles a module once', async () => {
    const code = 'override WG: u32 = 64; @compute @workgroup_size(WG) fn main() {}';
    const before = gpu().pipelines.size;
    const a = await gpu().pipelines.get({ label: 'cached', code, constants: { WG: 32 } });
    const b = await gpu().pipelines.get({ label: 'cached', code, constants: { WG: 32 } });
    const c = await gpu().pipelines.get({ label: 'cached', code, constants: { WG: 64 } });
    expect(a).toBe(b);
    expect(c).not.toBe(a);
    expect(gpu().pipelines.size).toBe(before + 2);
  });
});

describe('device loss', () => {
  it('turns device.lost into a DeviceLostError that every later call throws', async () => {
    const ctx = await createNodeGpuContext();
    const lost = new Promise<DeviceLostError>((resolve) => {
      void ctx.device.lost.then(() => setTimeout(() => resolve(ctx.lostError!), 0));
    });
    ctx.device.destroy();
    const err = await lost;
    expect(err).toBeInstanceOf(DeviceLostError);
    expect(err.message).toMatch(/GPU device lost \(reason: destroyed\)/);
    expect(() => ctx.createTensor([4], 'f32', 't')).toThrowError(DeviceLostError);
  });
});

describe('buffer pool on a device', () => {
  it('a released tensor buffer is reused by the next tensor of its size class', () => {
    const a = gpu().createTensor([1000], 'f32', 'a');
    gpu().release(a);
    const b = gpu().createTensor([900], 'f32', 'b');
    expect(b.buffer).toBe(a.buffer);
    expect(b.buffer.label).toBe('b');
    gpu().release(b);
  });
});
