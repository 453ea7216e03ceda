// The language model head's logit processors (penalties and token masks, logit-adjust.wgsl) between the
// lm_head matmul and argmax. Nothing is allocated until a step asks for them: a model whose requests use
// neither costs no memory and no dispatch. The penalties buffer grows (to a power of two) with the largest
// step's entries; the dispatches, one per head-row bucket, are rebuilt when it does.
//
//   logits [R, vocab] ──► logit-adjust (rowAdjust [R], masks [S, words], penalties [entries]) ──► argmax ──► sample

import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import type { KernelDispatch } from '../kernels/dispatch';
import { maskWords, packLogitAdjust, prepareLogitAdjust, ROW_ADJUST_WORDS, type LogitAdjust } from '../kernels/logit-adjust';

/** Penalty entries the buffer first holds (8 bytes each). */
const FIRST_PENALTY_CAPACITY = 1024;

export class HeadAdjust {
  private rowAdjust: Tensor | undefined;
  private masks: Tensor | undefined;
  private penalties: Tensor | undefined;
  private readonly dispatches = new Map<number, Promise<KernelDispatch>>();

  constructor(
    private readonly gpu: GpuContext,
    /** The head's logits, [maxSeqs, vocab]. */
    private readonly logits: Tensor,
    private readonly maxSeqs: number,
    private readonly vocab: number,
  ) {}

  /**
   * The dispatch that applies `adjust` (one entry per head row; `rows`: the bucket the head runs at), its
   * buffers written; undefined when no row has a processor.
   */
  async prepare(adjust: ReadonlyArray<LogitAdjust | undefined> | undefined, rows: number): Promise<KernelDispatch | undefined> {
    if (!adjust?.some((a) => a?.allowed || a?.penalties)) return undefined;
    const packed = packLogitAdjust(adjust, rows, this.vocab);
    this.ensureBuffers(packed.penalties.length / 2);
    const { gpu } = this;
    gpu.write(this.rowAdjust!, packed.rowAdjust);
    if (packed.masks.length > 0) gpu.write(this.masks!, packed.masks);
    if (packed.penalties.length > 0) gpu.write(this.penalties!, packed.penalties);
    let d = this.dispatches.get(rows);
    if (!d) {
      d = prepareLogitAdjust(
        gpu,
        {
          logits: { ...this.logits, shape: [rows, this.vocab] },
          rowAdjust: { ...this.rowAdjust!, shape: [rows, ROW_ADJUST_WORDS] },
          masks: this.masks!,
          penalties: this.penalties!,
        },
        { rows, vocab: this.vocab },
      );
      this.dispatches.set(rows, d);
      d.catch(() => this.dispatches.delete(rows));
    }
    return d;
  }

  private ensureBuffers(entries: number): void {
    const { gpu } = this;
    if (!this.rowAdjust) {
      this.rowAdjust = gpu.createTensor([this.maxSeqs, ROW_ADJUST_WORDS], 'u32', 'lm.rowAdjust');
      this.masks = gpu.createTensor([this.maxSeqs, maskWords(this.vocab)], 'u32', 'lm.masks');
    }
    const capacity = this.penalties?.shape[0] ?? 0;
    if (this.penalties && entries <= capacity) return;
    let next = Math.max(capacity, FIRST_PENALTY_CAPACITY);
    while (next < entries) next *= 2;
    this.releaseDispatches();
    if (this.penalties) gpu.release(this.penalties);
    this.penalties = gpu.createTensor([next, 2], 'u32', 'lm.penalties');
  }

  private releaseDispatches(): void {
    for (const d of this.dispatches.values())
      d.then(
        (x) => x.release(),
        () => {},
      );
    this.dispatches.clear();
  }

  destroy(): void {
    this.releaseDispatches();
    for (const t of [this.rowAdjust, this.masks, this.penalties]) if (t) this.gpu.release(t);
    this.rowAdjust = this.masks = this.penalties = undefined;
  }
}
