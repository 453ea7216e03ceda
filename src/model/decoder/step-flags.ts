// The language model's one readback buffer: a region per kernel that flags out-of-range indices (a count
// and the largest index), then the sampled ids, so one copy brings all of them back after a step. The fused
// decode kernels flag nothing on the GPU, so what the separate kernels would flag is counted on the host
// before a fused step (outOfRange, countOutOfRange).

import { GpuBoundsError } from '../../errors';
import type { GpuContext } from '../../gpu/context';
import { STORAGE_USAGE } from '../../gpu/flags';
import type { Tensor } from '../../gpu/tensor';
import type { StepInput } from './step-input';

/** Kernels that flag out-of-range indices, in the order of their regions in the buffer. */
const FLAG_KERNELS = ['embedding-gather', 'rope', 'kv-write', 'splice', 'head-gather'] as const;

export type FlagKernel = (typeof FLAG_KERNELS)[number];

type BoundsFlag = { kernel: string; count: number; maxIndex: number };

export class StepFlags {
  readonly buffer: GPUBuffer;
  /** Bytes a step reads back: every flag region, then `maxRows` sampled ids. */
  readonly readBytes: number;
  /** Byte offsets in `buffer`: one region per flagging kernel, then the sampled ids. */
  private readonly stride: number;
  private readonly idsOffset: number;

  constructor(
    private readonly gpu: GpuContext,
    maxRows: number,
  ) {
    this.stride = Math.max(16, gpu.limits.minStorageBufferOffsetAlignment);
    this.idsOffset = FLAG_KERNELS.length * this.stride;
    this.readBytes = this.idsOffset + maxRows * 4;
    const size = Math.ceil(this.readBytes / 4) * 4;
    this.buffer = gpu.memory.createBuffer({ label: 'lm.flags+ids', size, usage: STORAGE_USAGE });
    gpu.device.queue.writeBuffer(this.buffer, 0, new Uint8Array(size));
  }

  /** A kernel's region: [count, largest index]. */
  of(kernel: FlagKernel): Tensor {
    const i = FLAG_KERNELS.indexOf(kernel);
    return { buffer: this.buffer, shape: [2], dtype: 'u32', offsetBytes: i * this.stride, label: `lm.flags.${kernel}` };
  }

  /** Where the head writes its sampled ids. */
  nextIds(rows: number): Tensor {
    return { buffer: this.buffer, shape: [rows], dtype: 'u32', offsetBytes: this.idsOffset, label: 'lm.next' };
  }

  /** The first `rows` sampled ids of bytes read back from the buffer. */
  ids(bytes: Uint8Array, rows: number): Uint32Array {
    const start = bytes.byteOffset + this.idsOffset;
    return new Uint32Array(bytes.buffer.slice(start, start + rows * 4));
  }

  /** Raise the flags in bytes read back from the buffer (and clear them on the GPU for the next step). */
  check(bytes: Uint8Array): void {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const bad: BoundsFlag[] = [];
    FLAG_KERNELS.forEach((kernel, i) => {
      const count = view.getUint32(i * this.stride, true);
      if (count > 0) bad.push({ kernel, count, maxIndex: view.getUint32(i * this.stride + 4, true) });
    });
    if (bad.length === 0) return;
    this.gpu.device.queue.writeBuffer(this.buffer, 0, new Uint8Array(this.idsOffset));
    throw new GpuBoundsError(bad);
  }

  destroy(): void {
    this.gpu.memory.destroyBuffer(this.buffer);
  }
}

/**
 * What the separate kernels would flag for a step whose body (`fusedBody`) or head (`fusedHead`) runs fused:
 * positions past the RoPE table and slots past the cache (rope.wgsl, kv-write.wgsl), head rows past the
 * step's rows (the head's gather). Throws GpuBoundsError.
 */
export function checkFusedInput(
  input: StepInput,
  plan: { fusedBody: boolean; fusedHead: boolean; maxPositions: number; numSlots: number },
): void {
  const bad = [
    ...(plan.fusedBody ? countOutOfRange('rope', input.ropePositions ?? input.positions, plan.maxPositions, input.ids.length) : []),
    ...(plan.fusedBody ? countOutOfRange('kv-write', input.slots, plan.numSlots) : []),
    ...(plan.fusedHead ? countOutOfRange('head-gather', input.headRows, input.ids.length) : []),
  ];
  if (bad.length > 0) throw new GpuBoundsError(bad);
}

/**
 * The flag of `values` at or above `limit`, as a kernel counts them: one per row (`rows` rows, each with
 * values.length / rows values: M-RoPE's three positions), the largest value.
 */
function countOutOfRange(kernel: string, values: Uint32Array, limit: number, rows = values.length): BoundsFlag[] {
  let maxIndex = 0;
  const badRows = new Set<number>();
  values.forEach((v, i) => {
    if (v < limit) return;
    badRows.add(i % rows);
    maxIndex = Math.max(maxIndex, v);
  });
  return badRows.size > 0 ? [{ kernel, count: badRows.size, maxIndex }] : [];
}
