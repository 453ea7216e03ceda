// An image's embeddings with Qwen3-VL's DeepStack levels, in the two layouts they travel in:
//
//   along rows      [(1 + levels) · n, hidden]: the n rows, then each level's n rows. The media encoder's
//                   (protocol/encoder.ts EncodedMedia) and the encoder cache's.
//   along features  [n, (1 + levels) · hidden]: each row followed by its levels' rows. vLLM's: the vision
//                   tower's output there, and so an image_embeds part's for a Qwen3-VL checkpoint.
//
// With no levels (every other tower) both are the same array, returned as is.

/** Along rows to along features. */
export function levelsAlongFeatures(data: Float32Array, numTokens: number, hidden: number, levels: number): Float32Array {
  if (levels === 0) return data;
  const out = new Float32Array(data.length);
  const width = (1 + levels) * hidden;
  for (let l = 0; l <= levels; l++) {
    for (let r = 0; r < numTokens; r++) {
      out.set(data.subarray((l * numTokens + r) * hidden, (l * numTokens + r + 1) * hidden), r * width + l * hidden);
    }
  }
  return out;
}

/** Along features to along rows. */
export function levelsAlongRows(data: Float32Array, numTokens: number, hidden: number, levels: number): Float32Array {
  if (levels === 0) return data;
  const out = new Float32Array(data.length);
  const width = (1 + levels) * hidden;
  for (let l = 0; l <= levels; l++) {
    for (let r = 0; r < numTokens; r++) {
      out.set(data.subarray(r * width + l * hidden, r * width + (l + 1) * hidden), (l * numTokens + r) * hidden);
    }
  }
  return out;
}
