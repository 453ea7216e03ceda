// Where each patch of a Qwen2.5-VL image or video sits in the vision tower's passes: windows of merge
// units laid out at a fixed size, so every window is one sequence of the batched attention.
//
//   patches (processor order: merge unit by merge unit, each unit's m x m patches in a row)
//   rows    window by window (frames one after another, windows row-major from the top left), each window
//           windowUnits² unit slots of m² rows; slots past the image's right or bottom edge are padding
//           (masked keys, zero input, dropped at the end)
//
// HF `get_window_index` lists only the real units of each window, in the same order, and attends within
// them; attention ignores masked keys and each row keeps its own rotary position, so the padded layout
// computes the same. A full-attention layer attends over each frame: its windows are consecutive rows.

import { InternalError } from '../errors';
import type { PatchGrid } from '../processor/smart-resize';

export interface WindowLayout {
  /** Rows of the padded layout: frames × windowsPerFrame × windowRows. */
  rows: number;
  /** Rows of one window (its merge units of mergeSize² patches each). */
  windowRows: number;
  windowsPerFrame: number;
  frames: number;
  /** [rows] the patch (processor order) each row holds, -1 for padding. */
  patchOf: Int32Array;
  /** [rows] 1 = a real patch, 0 = padding. */
  mask: Uint32Array;
  /** [3, rows] the rotary positions: row 0 unused (0), row 1 the patch's row h, row 2 its column w. */
  positions: Uint32Array;
  /** [units] the padded unit (rows / mergeSize²) holding each merge unit of the processor's order. */
  unitOf: Uint32Array;
}

/**
 * `windowUnits`: merge units per window side, or 'frame' for one window per frame (Qwen3-VL's tower,
 * which attends over each frame: the rows are then the processor's order, without padding).
 */
export function windowLayout(grid: PatchGrid, mergeSize: number, windowUnits: number | 'frame'): WindowLayout {
  const m = mergeSize;
  const { t, h, w } = grid;
  if (h % m !== 0 || w % m !== 0) throw new InternalError(`a ${h} x ${w} patch grid does not split into ${m} x ${m} merge units`);
  const [lh, lw] = [h / m, w / m];
  const [wuh, wuw] = windowUnits === 'frame' ? [lh, lw] : [windowUnits, windowUnits];
  const [nwh, nww] = [Math.ceil(lh / wuh), Math.ceil(lw / wuw)];
  const windowsPerFrame = nwh * nww;
  const unitsPerWindow = wuh * wuw;
  const unit = m * m;
  const windowRows = unitsPerWindow * unit;
  const rows = t * windowsPerFrame * windowRows;
  const patchOf = new Int32Array(rows).fill(-1);
  const mask = new Uint32Array(rows);
  const positions = new Uint32Array(3 * rows);
  const unitOf = new Uint32Array(t * lh * lw);
  for (let f = 0; f < t; f++) {
    for (let wr = 0; wr < nwh; wr++) {
      for (let wc = 0; wc < nww; wc++) {
        for (let r = 0; r < wuh; r++) {
          for (let c = 0; c < wuw; c++) {
            const [ur, uc] = [wr * wuh + r, wc * wuw + c];
            if (ur >= lh || uc >= lw) continue;
            const padded = (f * windowsPerFrame + wr * nww + wc) * unitsPerWindow + r * wuw + c;
            const original = (f * lh + ur) * lw + uc;
            unitOf[original] = padded;
            for (let k = 0; k < unit; k++) {
              const row = padded * unit + k;
              patchOf[row] = original * unit + k;
              mask[row] = 1;
              positions[rows + row] = ur * m + Math.floor(k / m);
              positions[2 * rows + row] = uc * m + (k % m);
            }
          }
        }
      }
    }
  }
  return { rows, windowRows, windowsPerFrame, frames: t, patchOf, mask, positions, unitOf };
}

/** The patch rows [patches, rowLength] in the layout's order, padding rows zero. */
export function layPatches(layout: WindowLayout, patches: Float32Array, rowLength: number): Float32Array {
  const out = new Float32Array(layout.rows * rowLength);
  layout.patchOf.forEach((p, row) => {
    if (p >= 0) out.set(patches.subarray(p * rowLength, (p + 1) * rowLength), row * rowLength);
  });
  return out;
}
