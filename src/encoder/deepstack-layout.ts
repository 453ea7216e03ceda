// An image's embeddings with Qwen3-VL's DeepStack levels, in the two layouts they travel in:
//
//   along rows      [(1 + levels) · n, hidden]: the n rows, then each level's n rows. The media encoder's
//                   (protocol/encoder.ts EncodedMedia) and the encoder cache's.
//   along features  [n, (1 + levels) · hidden]: each row followed by its levels' rows. vLLM's: the vision
//                   tower's output there, and so an image_embeds part's for a Qwen3-VL checkpoint.
//
// One is the other with its first two axes swapped. With no levels (every other tower) both are the same
// array, returned as is.

/** Along rows to along features. */
export function levelsAlongFeatures(data: Float32Array, numTokens: number, hidden: number, levels: number): Float32Array {
  return levels === 0 ? data : swapOuterAxes(data, 1 + levels, numTokens, hidden);
}

/** Along features to along rows. */
export function levelsAlongRows(data: Float32Array, numTokens: number, hidden: number, levels: number): Float32Array {
  return levels === 0 ? data : swapOuterAxes(data, numTokens, 1 + levels, hidden);
}

/** [a, b, hidden] to [b, a, hidden]. */
function swapOuterAxes(data: Float32Array, a: number, b: number, hidden: number): Float32Array {
  const out = new Float32Array(data.length);
  for (let i = 0; i < a; i++) {
    for (let j = 0; j < b; j++) out.set(data.subarray((i * b + j) * hidden, (i * b + j + 1) * hidden), (j * a + i) * hidden);
  }
  return out;
}
