// RoPE's host-side tables, pure arithmetic (no GPU, no shader): the inverse frequencies, the cos/sin table
// the rope kernel reads, and which M-RoPE axis each frequency turns by. rope.ts (the kernel) and the ONNX
// exports (scripts/onnx/qwen-onnx.ts) share them.

import { UnsupportedShapeError } from '../errors';

/** The shape fields the tables read (kernels/rope.ts RopeShape). */
interface MropeShape {
  headDim: number;
  mrope?: { section: readonly [number, number, number]; interleaved: boolean };
}

/**
 * The position row (0 t, 1 h, 2 w) each of the headDim / 2 frequencies turns by. Contiguous (HF
 * Qwen2.5-VL `apply_multimodal_rotary_pos_emb`): the first section[0] frequencies t, the next section[1]
 * h, the rest w. Interleaved (HF Qwen3-VL `apply_interleaved_mrope`): frequency i is h when i % 3 == 1
 * and i < 3·section[1], w when i % 3 == 2 and i < 3·section[2], t otherwise. Plain RoPE: all t.
 */
export function mropeAxes(shape: MropeShape): Uint8Array {
  const half = shape.headDim / 2;
  const axes = new Uint8Array(half);
  const m = shape.mrope;
  if (!m) return axes;
  const [t, h, w] = m.section;
  for (let i = 0; i < half; i++) {
    if (m.interleaved) axes[i] = i % 3 === 1 && i < 3 * h ? 1 : i % 3 === 2 && i < 3 * w ? 2 : 0;
    else axes[i] = i < t ? 0 : i < t + h ? 1 : 2;
  }
  return axes;
}

/**
 * inv_freq[i] = 1 / theta^(2i / headDim), rounded to f32 at each step as HF's
 * `LlamaRotaryEmbedding` computes it in float32.
 */
export function ropeInverseFrequencies(theta: number, headDim: number): Float32Array {
  const half = headDim / 2;
  const out = new Float32Array(half);
  for (let i = 0; i < half; i++) {
    const exponent = Math.fround(Math.fround(2 * i) / headDim);
    out[i] = Math.fround(1 / Math.fround(theta ** exponent));
  }
  return out;
}

/**
 * Row p = cos(p * invFreq) | sin(p * invFreq). The angle is rounded to f32 first, as HF forms it
 * (`inv_freq @ position_ids` in float32); cos and sin are then exact to f32 rounding.
 */
export function ropeCosSinTable(theta: number, headDim: number, maxPositions: number): Float32Array {
  if (headDim % 2 !== 0) throw new UnsupportedShapeError(`rope: headDim must be even, got ${headDim}`);
  const half = headDim / 2;
  const inv = ropeInverseFrequencies(theta, headDim);
  const table = new Float32Array(maxPositions * headDim);
  for (let pos = 0; pos < maxPositions; pos++) {
    for (let i = 0; i < half; i++) {
      const angle = Math.fround(pos * inv[i]);
      table[pos * headDim + i] = Math.cos(angle);
      table[pos * headDim + half + i] = Math.sin(angle);
    }
  }
  return table;
}
