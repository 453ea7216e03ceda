// Logit processors on the GPU, before argmax and the sampler: each row's penalties (a list of (id,
// amount)), then its token mask (a bitmask row, e.g. a grammar's allowed next tokens). One workgroup per
// row; see logit-adjust.wgsl, and logit-adjust-reference.ts for the semantics it is tested against.
//   logits: [rows, vocab] f32 (in place)   rowAdjust: [rows, 4] u32   masks: [maskRows, words] u32
//   penalties: [entries, 2] u32 (id, amount as f32 bits)

import source from '../../shaders/logit-adjust.wgsl?raw';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { DEFAULT_WORKGROUP_SIZE, expectPositiveInt, expectTensor, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';
import { maskWords, type LogitAdjust } from './logit-adjust-reference';

export {
  adjustLogitsReference,
  isAllowed,
  maskWords,
  type LogitAdjust,
} from './logit-adjust-reference';

/** u32 words of one row's entry in rowAdjust (logit-adjust.wgsl `RowAdjust`). */
export const ROW_ADJUST_WORDS = 4;
const NONE = 0xffffffff;

export interface LogitAdjustShape {
  rows: number;
  vocab: number;
}

/** The buffers' contents for one step: what to write to rowAdjust, masks and penalties. */
export interface PackedAdjust {
  rowAdjust: Uint32Array;
  /** [mask rows, words]: the masks of the rows that have one, in row order. */
  masks: Uint32Array;
  /** [entries, 2]: every row's penalties, back to back. */
  penalties: Uint32Array;
}

/** Pack `rows` (padded to `numRows` with rows that change nothing) for logit-adjust.wgsl. */
export function packLogitAdjust(rows: ReadonlyArray<LogitAdjust | undefined>, numRows: number, vocab: number): PackedAdjust {
  const words = maskWords(vocab);
  const rowAdjust = new Uint32Array(numRows * ROW_ADJUST_WORDS);
  const numMasks = rows.filter((r) => r?.allowed).length;
  const numEntries = rows.reduce((a, r) => a + (r?.penalties?.ids.length ?? 0), 0);
  const masks = new Uint32Array(numMasks * words);
  const penalties = new Uint32Array(numEntries * 2);
  const amountBits = new Uint32Array(1);
  const amount = new Float32Array(amountBits.buffer);
  let maskRow = 0;
  let entry = 0;
  for (let r = 0; r < numRows; r++) {
    const a = rows[r];
    const o = r * ROW_ADJUST_WORDS;
    rowAdjust[o] = NONE;
    if (!a) continue;
    if (a.allowed) {
      if (a.allowed.length !== words) throw new RangeError(`logit-adjust: row ${r}'s mask has ${a.allowed.length} words, want ${words}`);
      masks.set(new Uint32Array(a.allowed.buffer, a.allowed.byteOffset, words), maskRow * words);
      rowAdjust[o] = maskRow++;
    }
    if (a.penalties) {
      rowAdjust[o + 1] = entry;
      rowAdjust[o + 2] = a.penalties.ids.length;
      a.penalties.ids.forEach((id, i) => {
        amount[0] = a.penalties!.amounts[i]!;
        penalties[2 * entry] = id;
        penalties[2 * entry + 1] = amountBits[0]!;
        entry++;
      });
    }
  }
  return { rowAdjust, masks, penalties };
}

export async function prepareLogitAdjust(
  gpu: GpuContext,
  io: { logits: Tensor; rowAdjust: Tensor; masks: Tensor; penalties: Tensor },
  shape: LogitAdjustShape,
  options: { workgroupSize?: number } = {},
): Promise<KernelDispatch> {
  const kernel = 'logit-adjust';
  const { rows, vocab } = shape;
  const wg = options.workgroupSize ?? DEFAULT_WORKGROUP_SIZE;
  expectPositiveInt(kernel, 'rows', rows);
  expectPositiveInt(kernel, 'vocab', vocab);
  expectWorkgroupSize(gpu, kernel, wg);
  expectTensor(gpu, kernel, 'logits', io.logits, [rows, vocab]);
  expectTensor(gpu, kernel, 'rowAdjust', io.rowAdjust, [rows, ROW_ADJUST_WORDS], 'u32');
  const words = maskWords(vocab);
  // Their first dimension is the capacity the caller sized them to (masks and entries per step).
  expectTensor(gpu, kernel, 'masks', io.masks, [io.masks.shape[0] ?? 0, words], 'u32');
  expectTensor(gpu, kernel, 'penalties', io.penalties, [io.penalties.shape[0] ?? 0, 2], 'u32');
  return createDispatch(gpu, {
    label: kernel,
    code: source,
    constants: { WG: wg },
    resources: [io.logits, io.rowAdjust, io.masks, io.penalties],
    params: packParams([
      ['u32', rows],
      ['u32', vocab],
      ['u32', words],
    ]),
    grid: linearGrid(gpu, kernel, rows),
    // A masked row is read as words and its masked logits written; penalties touch a few entries.
    cost: { flops: 0, bytes: rows * (4 * vocab + 4 * words + 16) },
  });
}
