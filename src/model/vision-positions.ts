// Position ids for the vision tower's learned position embeddings, from each tile's patch mask.
// Matches HF `Idefics3VisionEmbeddings.forward`: a tile whose valid patches form an h x w grid maps its
// patches onto the full n x n position grid by bucketing fractional coordinates (computed in float32,
// as torch.arange / torch.bucketize do). A full tile gets 0 .. n*n-1; padding patches get 0.

const f = Math.fround;

/** torch.arange(start, end, step) producing float32: computed in double, each value rounded to f32. */
function arangeF32(start: number, end: number, step: number): number[] {
  const out: number[] = [];
  const n = Math.ceil((end - start) / step);
  for (let i = 0; i < n; i++) out.push(f(start + i * step));
  return out;
}

/** torch.bucketize(x, boundaries, right=True): the number of boundaries <= x. */
function bucketizeRight(x: number, boundaries: number[]): number {
  let i = 0;
  while (i < boundaries.length && boundaries[i] <= x) i++;
  return i;
}

/**
 * `mask`: [rows, cols] of the tile's patch grid, 1 = real patch (undefined = all real).
 * Returns [rows * cols] position ids.
 */
export function visionPositionIds(patchesPerSide: number, rows: number, cols: number, mask?: Uint8Array): Uint32Array {
  const ids = new Uint32Array(rows * cols);
  if (!mask) {
    for (let i = 0; i < ids.length; i++) ids[i] = i;
    if (rows === patchesPerSide && cols === patchesPerSide) return ids;
  }
  const valid = mask ?? new Uint8Array(rows * cols).fill(1);
  let nbH = 0;
  for (let r = 0; r < rows; r++) nbH += valid[r * cols] ? 1 : 0;
  let nbW = 0;
  for (let c = 0; c < cols; c++) nbW += valid[c] ? 1 : 0;
  const n = patchesPerSide;
  // HF: boundaries = arange(1/n, 1.0, 1/n) with Python-float (double) arguments; the fractional
  // coordinates' step is 1 / nb_patches, a float32 tensor, so that step is rounded to f32 first.
  const boundaries = arangeF32(1 / n, 1, 1 / n);
  const bucketsH = arangeF32(0, 1 - 1e-6, f(1 / nbH)).map((x) => bucketizeRight(x, boundaries));
  const bucketsW = arangeF32(0, 1 - 1e-6, f(1 / nbW)).map((x) => bucketizeRight(x, boundaries));
  const posIds: number[] = [];
  for (const bh of bucketsH) for (const bw of bucketsW) posIds.push(bh * n + bw);
  ids.fill(0);
  let k = 0;
  for (let i = 0; i < rows * cols; i++) if (valid[i]) ids[i] = posIds[k++] ?? 0;
  return ids;
}
