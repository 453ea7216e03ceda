// Host-side array helpers: layout changes between our tensors and the peer's, and result comparison.

/** [rows, cols] -> [cols, rows] (HF Linear weight [N, K] to ONNX MatMul B [K, N]). */
export function transpose(a: Float32Array, rows: number, cols: number): Float32Array {
  const out = new Float32Array(a.length);
  for (let r = 0; r < rows; r++) {
    const ro = r * cols;
    for (let c = 0; c < cols; c++) out[c * rows + r] = a[ro + c];
  }
  return out;
}

/** Split a fused [tokens, 3 * width] q|k|v matrix into three [tokens, width] matrices. */
export function splitQkv(qkv: Float32Array, tokens: number, width: number): [Float32Array, Float32Array, Float32Array] {
  const parts: [Float32Array, Float32Array, Float32Array] = [
    new Float32Array(tokens * width),
    new Float32Array(tokens * width),
    new Float32Array(tokens * width),
  ];
  for (let t = 0; t < tokens; t++) {
    for (let p = 0; p < 3; p++) {
      const start = t * 3 * width + p * width;
      parts[p].set(qkv.subarray(start, start + width), t * width);
    }
  }
  return parts;
}

/** Largest |a[i] - b[i]|; Infinity when lengths differ, NaN when either holds a NaN. */
export function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  if (a.length !== b.length) return Number.POSITIVE_INFINITY;
  let worst = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (Number.isNaN(d)) return Number.NaN;
    if (d > worst) worst = d;
  }
  return worst;
}

/** [tokens, heads * headDim] -> [heads, tokens, headDim], each value times `scale`. */
export function toHeadMajor(a: Float32Array, tokens: number, heads: number, headDim: number, scale = 1): Float32Array {
  const out = new Float32Array(a.length);
  for (let t = 0; t < tokens; t++) {
    for (let h = 0; h < heads; h++) {
      const src = (t * heads + h) * headDim;
      const dst = (h * tokens + t) * headDim;
      for (let d = 0; d < headDim; d++) out[dst + d] = a[src + d] * scale;
    }
  }
  return out;
}

/** [tokens, heads * headDim] -> [heads, headDim, tokens] (keys, transposed per head). */
export function toHeadMajorTransposed(a: Float32Array, tokens: number, heads: number, headDim: number): Float32Array {
  const out = new Float32Array(a.length);
  for (let t = 0; t < tokens; t++) {
    for (let h = 0; h < heads; h++) {
      const src = (t * heads + h) * headDim;
      for (let d = 0; d < headDim; d++) out[(h * headDim + d) * tokens + t] = a[src + d];
    }
  }
  return out;
}

/** [heads, tokens, headDim] -> [tokens, heads * headDim]. */
export function fromHeadMajor(a: Float32Array, tokens: number, heads: number, headDim: number): Float32Array {
  const out = new Float32Array(a.length);
  for (let h = 0; h < heads; h++) {
    for (let t = 0; t < tokens; t++) {
      const src = (h * tokens + t) * headDim;
      out.set(a.subarray(src, src + headDim), (t * heads + h) * headDim);
    }
  }
  return out;
}
