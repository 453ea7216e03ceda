// Row argmax in plain TypeScript, first index on ties (torch.argmax); a row with a NaN or an infinity gives
// NON_FINITE_TOKEN. The GPU kernel (argmax.ts, argmax.wgsl) is tested against it; the CPU backend
// (src/model/ort/) picks greedy tokens with it. No WGSL here, so it loads anywhere.

export interface ArgmaxShape {
  rows: number;
  cols: number;
}

/** What argmax writes for a row holding a NaN or an infinity (no token can be trusted from it). */
export const NON_FINITE_TOKEN = 0xffffffff;

export function argmaxReference(x: Float32Array, shape: ArgmaxShape): Uint32Array {
  const { rows, cols } = shape;
  const out = new Uint32Array(rows);
  for (let r = 0; r < rows; r++) {
    let best = -Infinity;
    let bestIndex = 0;
    let finite = true;
    for (let i = 0; i < cols; i++) {
      const v = x[r * cols + i];
      if (!Number.isFinite(v)) finite = false;
      else if (v > best) {
        best = v;
        bestIndex = i;
      }
    }
    out[r] = finite ? bestIndex : NON_FINITE_TOKEN;
  }
  return out;
}
