// Our kernels, prepared once and timed as "encode one compute pass, submit, wait for the queue".
// Each function owns the tensors it creates and returns them to the pool before it returns.

import type { KernelVariant } from '../../src/gpu/adapter-info';
import type { GpuContext } from '../../src/gpu/context';
import type { Tensor } from '../../src/gpu/tensor';
import { prepareCopy } from '../../src/kernels/copy';
import { submitDispatches, type Dispatch } from '../../src/kernels/dispatch';
import { prepareMatmul, type MatmulShape } from '../../src/kernels/matmul';
import { prepareVitAttention, type VitAttentionShape } from '../../src/kernels/vit-attention';
import type { Measured } from './result';
import { gbPerSecond, gflops, timeRuns, type RepPolicy } from '../harness/timing';

async function timeDispatch(gpu: GpuContext, dispatch: Dispatch, policy: RepPolicy) {
  try {
    return await timeRuns(async () => {
      submitDispatches(gpu, [dispatch], dispatch.label);
      await gpu.sync();
    }, policy);
  } finally {
    dispatch.release();
  }
}

export interface OurMatmul {
  /** Time the kernel with one variant; the output tensor holds its result afterwards. */
  time(variant: KernelVariant, policy: RepPolicy): Promise<Measured>;
  readOutput(): Promise<Float32Array>;
  release(): void;
}

/** y[M, N] = x[M, K] · w[N, K]ᵀ with the given host data uploaded once. */
export function ourMatmul(gpu: GpuContext, shape: MatmulShape, x: Float32Array, w: Float32Array): OurMatmul {
  const { M, N, K } = shape;
  const io = {
    x: gpu.upload(x, [M, K], 'bench.x'),
    weight: gpu.upload(w, [N, K], 'bench.w'),
    y: gpu.createTensor([M, N], 'f32', 'bench.y'),
  };
  const flops = 2 * M * N * K;
  return {
    async time(variant, policy) {
      const dispatch = await prepareMatmul(gpu, io, shape, { variant });
      const t = await timeDispatch(gpu, dispatch, policy);
      return { label: dispatch.label, ...t, gflops: gflops(flops, t.medianMs) };
    },
    readOutput: () => gpu.readF32(io.y),
    release() {
      for (const t of Object.values(io)) gpu.release(t);
    },
  };
}

export interface OurAttentionRun {
  measured: Measured;
  /** [batch * tokens, heads * headDim] */
  out: Float32Array;
}

/** Fused-qkv ViT attention with every key unmasked (a full 32x32-patch image has no padding). */
export async function timeOurAttention(
  gpu: GpuContext,
  shape: VitAttentionShape,
  qkv: Float32Array,
  policy: RepPolicy,
): Promise<OurAttentionRun> {
  const rows = shape.batch * shape.tokens;
  const width = shape.heads * shape.headDim;
  const tensors: Tensor[] = [];
  try {
    const io = {
      qkv: gpu.upload(qkv, [rows, 3 * width], 'bench.qkv'),
      mask: gpu.upload(new Uint32Array(rows).fill(1), [rows], 'bench.mask'),
      out: gpu.createTensor([rows, width], 'f32', 'bench.attn-out'),
    };
    tensors.push(io.qkv, io.mask, io.out);
    const dispatch = await prepareVitAttention(gpu, io, shape);
    const t = await timeDispatch(gpu, dispatch, policy);
    const flops = 4 * shape.batch * shape.tokens * shape.tokens * shape.headDim * shape.heads;
    return {
      measured: { label: dispatch.label, ...t, gflops: gflops(flops, t.medianMs) },
      out: await gpu.readF32(io.out),
    };
  } finally {
    for (const t of tensors) gpu.release(t);
  }
}

/** Plain copy of `sizeBytes`; GB/s counts the bytes read plus the bytes written. */
export async function timeOurCopy(gpu: GpuContext, sizeBytes: number, policy: RepPolicy): Promise<Measured> {
  const n = sizeBytes / 4;
  const x = gpu.createTensor([n], 'f32', 'bench.copy-x');
  const y = gpu.createTensor([n], 'f32', 'bench.copy-y');
  try {
    const dispatch = await prepareCopy(gpu, { x, y });
    const t = await timeDispatch(gpu, dispatch, policy);
    return { label: dispatch.label, ...t, gbps: gbPerSecond(2 * sizeBytes, t.medianMs) };
  } finally {
    gpu.release(x);
    gpu.release(y);
  }
}
