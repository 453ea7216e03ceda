// One forward pass of an encoder (vision or audio) over prepared dispatches, submitted as the caller
// asks: timed dispatch by dispatch (profiles), paced piece by piece (a PieceRunner lets decode steps of
// another device run between pieces), or in submissions of `dispatchesPerSubmit` dispatches (0: all).
// `copyOut` is encoded after the last dispatch, in the same submission.

import type { GpuContext } from '../gpu/context';
import { DispatchSequence, encodeDispatches, PiecewiseDispatch, preparePiecewise, type Dispatch } from '../kernels/dispatch';
import { prepareMatmul, type MatmulIO, type MatmulOptions, type MatmulShape } from '../kernels/matmul';
import type { DispatchTimer } from '../kernels/dispatch-timer';
import type { PieceRunner } from '../kernels/piece-runner';

export interface EncoderPassOptions {
  runner?: PieceRunner;
  timer?: DispatchTimer;
  /** Dispatches per submission while nothing paces the pass (0: one submission). */
  dispatchesPerSubmit: number;
  copyOut: (encoder: GPUCommandEncoder) => void;
}

export async function runEncoderPass(
  gpu: GpuContext,
  dispatches: readonly Dispatch[],
  label: string,
  options: EncoderPassOptions,
): Promise<void> {
  const { runner } = options;
  if (options.timer) {
    await options.timer.run(dispatches, label);
    const encoder = gpu.device.createCommandEncoder({ label });
    options.copyOut(encoder);
    gpu.device.queue.submit([encoder.finish()]);
    return;
  }
  // While the runner is paced, each piece (one row block of a matmul, one attention part, one other
  // dispatch) waits for its turn and is timed alone. Otherwise the rest of the pass goes in submissions of
  // dispatchesPerSubmit units (0: all that are left), matmuls whole: their row blocks exist only for
  // pacing, and whole they run faster (fewer, fuller dispatches).
  const units = encodeUnits(dispatches);
  let u = 0;
  let j = 0; // next row block of units[u] (0: not started, so it may run whole)
  while (u < units.length) {
    await runner?.before();
    const group: Dispatch[] = [];
    const limit = runner?.isPaced ? 1 : options.dispatchesPerSubmit > 0 ? options.dispatchesPerSubmit : Number.POSITIVE_INFINITY;
    while (u < units.length && group.length < limit) {
      const unit = units[u];
      if (j === 0 && !runner?.isPaced) {
        group.push(unit.whole);
        u++;
      } else {
        group.push(unit.pieces[j++]);
        if (j === unit.pieces.length) [u, j] = [u + 1, 0];
      }
    }
    const last = u === units.length;
    const t0 = performance.now();
    const encoder = gpu.device.createCommandEncoder({ label });
    encodeDispatches(encoder, group, label);
    if (last) options.copyOut(encoder);
    gpu.device.queue.submit([encoder.finish()]);
    if (!last || runner?.isPaced) await gpu.sync();
    runner?.after(performance.now() - t0);
  }
}

/** One step of the pass: run whole when nothing paces it, else piece by piece. */
interface EncodeUnit {
  whole: Dispatch;
  pieces: readonly Dispatch[];
}

/** The pass as units, in order: piecewise steps keep both forms; other sequences open into their parts. */
function encodeUnits(dispatches: readonly Dispatch[]): EncodeUnit[] {
  return dispatches.flatMap((d): EncodeUnit[] =>
    d instanceof PiecewiseDispatch
      ? [{ whole: d.whole, pieces: d.parts }]
      : d instanceof DispatchSequence
        ? encodeUnits(d.parts)
        : [{ whole: d, pieces: [d] }],
  );
}

/** `data` zero-padded to `length` values (the last batch of a pass fills a buffer sized for a full one). */
export function padTo(data: Float32Array, length: number): Float32Array {
  if (data.length === length) return data;
  const out = new Float32Array(length);
  out.set(data);
  return out;
}

/**
 * A matmul of an encoder's pass, also cut into row blocks of `rowsPerPiece` rows when pieces are asked for
 * (0: none), so paced encoding runs in pieces short enough to fit between decode steps (same math, row views).
 */
export function prepareRowPiecedMatmul(
  gpu: GpuContext,
  io: MatmulIO,
  shape: MatmulShape,
  options: MatmulOptions,
  rowsPerPiece: number,
): Promise<Dispatch> {
  const pieces: Array<() => Promise<Dispatch>> = [];
  if (rowsPerPiece > 0) {
    for (let r0 = 0; r0 < shape.M; r0 += rowsPerPiece) {
      const m = Math.min(rowsPerPiece, shape.M - r0);
      const rows = (t: typeof io.x, width: number) => ({ ...t, shape: [m, width], offsetBytes: t.offsetBytes + r0 * width * 4 });
      pieces.push(() => prepareMatmul(gpu, { ...io, x: rows(io.x, shape.K), y: rows(io.y, shape.N) }, { ...shape, M: m }, options));
    }
  }
  return preparePiecewise('matmul:rows', () => prepareMatmul(gpu, io, shape, options), pieces);
}
