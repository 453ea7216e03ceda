// A prepared kernel call: pipeline + bind group + grid (+ its uniform buffer), built once and encoded
// as often as needed. Building touches the pipeline cache and the buffer pool; encoding allocates nothing.

import gridSource from '../../shaders/lib/grid.wgsl?raw';
import type { GpuContext } from '../gpu/context';
import { UNIFORM_USAGE } from '../gpu/flags';
import { tensorBinding, type Tensor } from '../gpu/tensor';

/**
 * The work of one dispatch, for profiles (throughput = work / time). flops: arithmetic as the math counts
 * it (a multiply-add is 2), 0 for kernels that only move data or whose arithmetic is small next to their
 * traffic (element-wise, norms, gathers). bytes: compulsory traffic, each operand read once and each result
 * written once in the format it is stored in (a q4 weight counts its packed bytes and scales); reads a
 * kernel repeats (K and V per query, x per column tile) are not counted, so GB/s is a lower bound on what
 * the kernel moved.
 */
export interface DispatchCost {
  flops: number;
  bytes: number;
}

export interface Dispatch {
  readonly label: string;
  /** Work per dispatch (absent where it depends on data only each step knows). */
  readonly cost?: DispatchCost;
  encode(pass: GPUComputePassEncoder): void;
  /** Return the uniform buffer (and any scratch) to the pool. The dispatch must not be encoded after. */
  release(): void;
}

export type Grid = readonly [number, number, number];

export type ParamField = readonly ['u32' | 'i32' | 'f32', number];

/** Pack a uniform struct of 4-byte scalars, padded to 16 bytes as WGSL uniform structs are. */
export function packParams(fields: readonly ParamField[]): ArrayBuffer {
  const size = Math.max(16, Math.ceil((fields.length * 4) / 16) * 16);
  const buf = new ArrayBuffer(size);
  const view = new DataView(buf);
  fields.forEach(([type, value], i) => {
    if (type === 'f32') view.setFloat32(i * 4, value, true);
    else if (type === 'i32') view.setInt32(i * 4, value, true);
    else view.setUint32(i * 4, value, true);
  });
  return buf;
}

export interface DispatchSpec {
  label: string;
  code: string;
  entryPoint?: string;
  constants?: Record<string, number>;
  /**
   * Storage bindings 0..n-1 in order; the params uniform (if any) is binding n. A null entry is a binding
   * number the shader does not declare (e.g. no scales for an f32 weight): nothing is bound there.
   */
  resources: readonly (Tensor | GPUBufferBinding | null)[];
  params?: ArrayBuffer;
  grid: Grid;
  /** What one dispatch computes and moves, from the shape (profiles only; see DispatchCost). */
  cost?: DispatchCost;
}

function isTensor(r: Tensor | GPUBufferBinding): r is Tensor {
  return (r as Tensor).shape !== undefined;
}

export class KernelDispatch implements Dispatch {
  private released = false;

  constructor(
    private readonly gpu: GpuContext,
    readonly label: string,
    private readonly pipeline: GPUComputePipeline,
    private readonly bindGroup: GPUBindGroup,
    /** Workgroups dispatched; a kernel whose useful work varies per step may shrink it (setGrid). */
    private grid_: Grid,
    private readonly uniform: GPUBuffer | undefined,
    /** Set by the prepare function (for a kernel with several plans, once after the plan is built). */
    public cost: DispatchCost | undefined = undefined,
  ) {}

  get grid(): Grid {
    return this.grid_;
  }

  /**
   * Dispatch this grid from now on (bindings and uniform unchanged): for a kernel whose invocations past
   * some count would only return, the count a step needs.
   */
  setGrid(grid: Grid): void {
    this.grid_ = grid;
  }

  encode(pass: GPUComputePassEncoder): void {
    pass.setPipeline(this.pipeline);
    pass.setBindGroup(0, this.bindGroup);
    pass.dispatchWorkgroups(this.grid_[0], this.grid_[1], this.grid_[2]);
  }

  /** Overwrite the params uniform (same layout as at build time), e.g. a new position per decode step. */
  writeParams(params: ArrayBuffer): void {
    if (!this.uniform) return;
    this.gpu.device.queue.writeBuffer(this.uniform, 0, params);
  }

  release(): void {
    if (this.released) return;
    this.released = true;
    if (this.uniform) this.gpu.pool.release(this.uniform);
  }
}

export async function createDispatch(gpu: GpuContext, spec: DispatchSpec): Promise<KernelDispatch> {
  gpu.assertAlive();
  const pipeline = await gpu.pipelines.get({
    label: spec.label,
    // Every kernel may place itself in its grid with lib/grid.wgsl; appended, so that a kernel's `enable`
    // directives stay first (WGSL declarations may follow their use).
    code: `${spec.code}\n${gridSource}`,
    entryPoint: spec.entryPoint,
    constants: spec.constants,
  });
  const entries: GPUBindGroupEntry[] = [];
  spec.resources.forEach((r, binding) => {
    if (r) entries.push({ binding, resource: isTensor(r) ? tensorBinding(r) : r });
  });
  let uniform: GPUBuffer | undefined;
  if (spec.params) {
    uniform = gpu.pool.acquire(spec.params.byteLength, UNIFORM_USAGE, `${spec.label}.params`);
    gpu.device.queue.writeBuffer(uniform, 0, spec.params);
    entries.push({ binding: spec.resources.length, resource: { buffer: uniform, offset: 0, size: spec.params.byteLength } });
  }
  const bindGroup = gpu.device.createBindGroup({
    label: spec.label,
    layout: pipeline.getBindGroupLayout(0),
    entries,
  });
  return new KernelDispatch(gpu, spec.label, pipeline, bindGroup, spec.grid, uniform, spec.cost);
}

/** Several dispatches encoded in order as one (e.g. im2col then matmul, or a matmul cut into row blocks). */
export class DispatchSequence implements Dispatch {
  constructor(
    readonly label: string,
    /** The parts, which a caller may also submit one by one (pieces of paced encoder work). */
    readonly parts: readonly Dispatch[],
    private readonly onRelease: () => void = () => {},
  ) {}

  encode(pass: GPUComputePassEncoder): void {
    for (const d of this.parts) d.encode(pass);
  }

  release(): void {
    for (const d of this.parts) d.release();
    this.onRelease();
  }
}

/**
 * One step prepared twice over the same buffers: whole, and cut into pieces (a matmul's row blocks, an
 * attention product per head). Paced encoder work submits the pieces one by one between decode steps;
 * everything else runs it whole (fewer, fuller dispatches). Its parts are the pieces: what a sequence
 * encodes and what profiles time.
 */
export class PiecewiseDispatch extends DispatchSequence {
  constructor(
    label: string,
    readonly whole: Dispatch,
    pieces: readonly Dispatch[],
  ) {
    super(label, pieces, () => whole.release());
  }
}

/**
 * Prepare a step whole and, when there are two or more, in the given pieces (a PiecewiseDispatch); with
 * fewer, the whole alone. If any preparation fails, what was already prepared is released.
 */
export async function preparePiecewise(
  label: string,
  whole: () => Promise<Dispatch>,
  pieces: ReadonlyArray<() => Promise<Dispatch>>,
): Promise<Dispatch> {
  const w = await whole();
  if (pieces.length < 2) return w;
  const prepared: Dispatch[] = [];
  try {
    for (const make of pieces) prepared.push(await make());
  } catch (e) {
    w.release();
    for (const d of prepared) d.release();
    throw e;
  }
  return new PiecewiseDispatch(label, w, prepared);
}

/**
 * Await preparations started together (their pipelines compile concurrently: on a CPU adapter each takes
 * up to seconds, and a plan's first layer meets most of them). If any fails, the others' dispatches are
 * released once they settle, and the first failure is thrown.
 */
export async function prepareAll<T extends Dispatch>(preparing: readonly Promise<T>[]): Promise<T[]> {
  const settled = await Promise.allSettled(preparing);
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (!failed) return settled.map((r) => (r as PromiseFulfilledResult<T>).value);
  for (const r of settled) if (r.status === 'fulfilled') r.value.release();
  throw failed.reason;
}

/** The dispatches that reach the GPU, in order: sequences opened into their parts. */
export function leafDispatches(dispatches: readonly Dispatch[]): Dispatch[] {
  return dispatches.flatMap((d) => (d instanceof DispatchSequence ? leafDispatches(d.parts) : [d]));
}

/** Encode dispatches, in order, into one compute pass of `encoder`. */
export function encodeDispatches(encoder: GPUCommandEncoder, dispatches: readonly Dispatch[], label: string): void {
  const pass = encoder.beginComputePass({ label });
  for (const d of dispatches) d.encode(pass);
  pass.end();
}

/** Encode dispatches into one compute pass and submit. Resolves once submitted (not finished). */
export function submitDispatches(gpu: GpuContext, dispatches: readonly Dispatch[], label = 'tessera'): void {
  gpu.assertAlive();
  const encoder = gpu.device.createCommandEncoder({ label });
  encodeDispatches(encoder, dispatches, label);
  gpu.device.queue.submit([encoder.finish()]);
}
