// Qwen3-VL's learned positions at an image's patch grid (HF `Qwen3VLVisionModel.fast_pos_embed_interpolate`):
// the gridPerSide² table resampled bilinearly, row r of h at linspace(0, G - 1, h)[r] and column c of w at
// linspace(0, G - 1, w)[c], the four corners' rows and weights in float32 as torch computes them, listed
// in the processor's patch order (merge unit by merge unit, frames repeating).

import type { PatchGrid } from '../processor/smart-resize';

/**
 * torch.linspace(0, end, steps) in float32: the step is rounded to f32, the first half counts up from 0
 * and the second half down from `end` (ATen's symmetric form), so the last value is `end` exactly.
 */
function linspaceF32(end: number, steps: number): Float32Array {
  const out = new Float32Array(steps);
  if (steps === 1) return out;
  const step = Math.fround(end / (steps - 1));
  const half = Math.floor(steps / 2);
  for (let i = 0; i < steps; i++) {
    out[i] = i < half ? Math.fround(step * i) : Math.fround(end - Math.fround(step * (steps - 1 - i)));
  }
  return out;
}

export interface BilinearCorners {
  /** [4, patches] table rows: (floor h, floor w), (floor h, ceil w), (ceil h, floor w), (ceil h, ceil w). */
  idx: Uint32Array;
  /** [4, patches] their weights. */
  w: Float32Array;
}

export function bilinearCorners(grid: PatchGrid, gridPerSide: number, mergeSize: number): BilinearCorners {
  const G = gridPerSide;
  const m = mergeSize;
  const hs = linspaceF32(G - 1, grid.h);
  const ws = linspaceF32(G - 1, grid.w);
  const n = grid.t * grid.h * grid.w;
  const idx = new Uint32Array(4 * n);
  const w = new Float32Array(4 * n);
  const lw = grid.w / m;
  const perFrame = grid.h * grid.w;
  for (let p = 0; p < n; p++) {
    const inFrame = p % perFrame;
    const [u, k] = [Math.floor(inFrame / (m * m)), inFrame % (m * m)];
    const row = Math.floor(u / lw) * m + Math.floor(k / m);
    const col = (u % lw) * m + (k % m);
    const [fh, fw] = [Math.trunc(hs[row]), Math.trunc(ws[col])];
    const [ch, cw] = [Math.min(fh + 1, G - 1), Math.min(fw + 1, G - 1)];
    const dh = Math.fround(hs[row] - fh);
    const dw = Math.fround(ws[col] - fw);
    const [ah, aw] = [Math.fround(1 - dh), Math.fround(1 - dw)];
    const corners: Array<[number, number]> = [
      [fh * G + fw, Math.fround(ah * aw)],
      [fh * G + cw, Math.fround(ah * dw)],
      [ch * G + fw, Math.fround(dh * aw)],
      [ch * G + cw, Math.fround(dh * dw)],
    ];
    corners.forEach(([i, weight], c) => {
      idx[c * n + p] = i;
      w[c * n + p] = weight;
    });
  }
  return { idx, w };
}
