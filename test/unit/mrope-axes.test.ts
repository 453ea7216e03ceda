// Which position row (0 t, 1 h, 2 w) each rotary frequency turns by under M-RoPE (src/kernels/rope.ts
// mropeAxes), against the rows HF's own formulations pick. The strings below were printed by running, in
// torch, Qwen2.5-VL's apply_multimodal_rotary_pos_emb (cos split by section × 2, piece i from row i % 3)
// and Qwen3-VL's apply_interleaved_mrope (row 0, then rows 1 and 2 at slice(dim, 3·section[dim], 3)) on
// rows filled with their own index.

import { describe, expect, it } from 'vitest';
import { mropeAxes } from '../../src/kernels/rope-tables';

const axes = (headDim: number, section: [number, number, number], interleaved: boolean) =>
  Array.from(mropeAxes({ headDim, mrope: { section, interleaved } })).join('');

describe('M-RoPE axes', () => {
  it("Qwen2.5-VL's contiguous [16, 24, 24] at head_dim 128", () => {
    expect(axes(128, [16, 24, 24], false)).toBe(`${'0'.repeat(16)}${'1'.repeat(24)}${'2'.repeat(24)}`);
  });
  it("Qwen3-VL's interleaved [24, 20, 20] at head_dim 128", () => {
    expect(axes(128, [24, 20, 20], true)).toBe('0120120120120120120120120120120120120120120120120120120120120000');
  });
  it('a tiny head [2, 1, 1], both ways, and plain RoPE', () => {
    expect(axes(8, [2, 1, 1], false)).toBe('0012');
    expect(axes(8, [2, 1, 1], true)).toBe('0120');
    expect(Array.from(mropeAxes({ headDim: 8 })).join('')).toBe('0000');
  });
});
