// The window layout of the Qwen2.5-VL tower (src/model/qwen-windows.ts) against the window order of
// test/reference/qwen_vision.py (HF get_window_index's, checked there against the padding formulation):
// the real merge units appear window by window in that order, each window holding the reference's count;
// every patch appears once with its row and column; padding rows are masked and zero.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { layPatches, windowLayout } from '../../src/model/qwen-windows';
import type { PatchGrid } from '../../src/processor/smart-resize';

const golden = JSON.parse(readFileSync(resolve(import.meta.dirname, '../fixtures/goldens/qwen-vision.json'), 'utf8')) as {
  models: Array<{ checkpoint: string; cases: Array<{ name: string; grid: PatchGrid; windowIndex: number[]; windowUnits: number[] }> }>;
};
const QWEN25 = golden.models.find((m) => m.checkpoint === 'qwen2_5_vl-tiny')!;
const MERGE = 2;
const WINDOW_UNITS = 2; // qwen2_5_vl-tiny: window_size 56 / spatial_merge 2 / patch 14

describe('Qwen2.5-VL window layout', () => {
  it.each(QWEN25.cases.map((c) => [c.name, c] as const))('%s: the reference window order', (_n, c) => {
    const layout = windowLayout(c.grid, MERGE, WINDOW_UNITS);
    const unit = MERGE * MERGE;
    // Real units in row order, and how many each window holds.
    const units: number[] = [];
    const perWindow: number[] = [];
    for (let win = 0; win < layout.rows / layout.windowRows; win++) {
      let n = 0;
      for (let s = 0; s < layout.windowRows / unit; s++) {
        const row = win * layout.windowRows + s * unit;
        if (layout.patchOf[row] < 0) continue;
        units.push(layout.patchOf[row] / unit);
        n++;
      }
      perWindow.push(n);
    }
    expect(units).toEqual(c.windowIndex);
    expect(perWindow).toEqual(c.windowUnits);
    // unitOf inverts the order: unit u sits in padded slot unitOf[u].
    for (const u of c.windowIndex) expect(layout.patchOf[layout.unitOf[u] * unit]).toBe(u * unit);
  });

  it('places every patch once with its row and column; padding is masked and zero', () => {
    const grid = { t: 1, h: 6, w: 10 };
    const layout = windowLayout(grid, MERGE, WINDOW_UNITS);
    expect(layout.rows).toBe(2 * 3 * 16); // 3 x 5 units -> 2 x 3 windows of 2 x 2 units of 4 patches
    const seen = new Set<number>();
    for (let row = 0; row < layout.rows; row++) {
      const p = layout.patchOf[row];
      expect(layout.mask[row]).toBe(p >= 0 ? 1 : 0);
      if (p < 0) continue;
      seen.add(p);
      // Processor order: unit (ur, uc) row-major over the 3 x 5 unit grid, then (ir, ic) inside it.
      const [u, k] = [Math.floor(p / 4), p % 4];
      expect(layout.positions[layout.rows + row]).toBe(Math.floor(u / 5) * 2 + Math.floor(k / 2));
      expect(layout.positions[2 * layout.rows + row]).toBe((u % 5) * 2 + (k % 2));
    }
    expect(seen.size).toBe(60);
    const rows = layPatches(
      layout,
      Float32Array.from({ length: 60 * 3 }, (_, i) => i + 1),
      3,
    );
    layout.patchOf.forEach((p, row) => {
      expect(rows[row * 3]).toBe(p < 0 ? 0 : p * 3 + 1);
    });
  });
});

describe('Qwen3-VL frame layout', () => {
  it("one window per frame: the processor's order, no padding, each row its patch's row and column", () => {
    const grid = { t: 2, h: 4, w: 6 };
    const layout = windowLayout(grid, MERGE, 'frame');
    expect(layout.rows).toBe(48);
    expect(layout.windowRows).toBe(24);
    expect(Array.from(layout.patchOf)).toEqual([...Array(48).keys()]);
    expect(Array.from(layout.unitOf)).toEqual([...Array(12).keys()]);
    expect(layout.mask.every((x) => x === 1)).toBe(true);
    // Patch 5 of each frame: unit 1 (row 0, column 1), its patch (0, 1) -> row 0, column 3.
    for (const row of [5, 29]) {
      expect(layout.positions[48 + row]).toBe(0);
      expect(layout.positions[96 + row]).toBe(3);
    }
  });
});
