// The CPU references are the spec for the kernels, so each is checked against an independent
// derivation: literal tensor reshapes, or a composition of simpler references.

import { describe, expect, it } from 'vitest';
import { matmulReference } from '../../src/kernels/matmul';
import { patchEmbedReference } from '../../src/kernels/patch-embed';
import { pixelShuffleReference } from '../../src/kernels/pixel-shuffle';
import { ropeCosSinTable, ropeInverseFrequencies } from '../../src/kernels/rope-tables';
import { softmaxReference } from '../../src/kernels/softmax';
import { vitAttentionReference } from '../../src/kernels/vit-attention';
import { randomUniform } from '../../src/selfcheck/random';

/** A row-major N-d array with view (reshape) and permute, to replay PyTorch code literally. */
class NdArray {
  constructor(
    readonly data: Float32Array,
    readonly shape: number[],
  ) {}
  view(shape: number[]): NdArray {
    expect(shape.reduce((a, b) => a * b, 1)).toBe(this.data.length);
    return new NdArray(this.data, shape);
  }
  permute(order: number[]): NdArray {
    const shape = order.map((d) => this.shape[d]);
    const strides = this.shape.map((_, i) => this.shape.slice(i + 1).reduce((a, b) => a * b, 1));
    const out = new Float32Array(this.data.length);
    const idx = new Array(shape.length).fill(0);
    for (let o = 0; o < out.length; o++) {
      let src = 0;
      for (let d = 0; d < shape.length; d++) src += idx[d] * strides[order[d]];
      out[o] = this.data[src];
      for (let d = shape.length - 1; d >= 0; d--) {
        if (++idx[d] < shape[d]) break;
        idx[d] = 0;
      }
    }
    return new NdArray(out, shape);
  }
}

describe('pixelShuffleReference', () => {
  // HF Idefics3Connector.pixel_shuffle, step by step.
  function literal(x: Float32Array, bsz: number, seq: number, embed: number, s: number): Float32Array {
    const side = Math.sqrt(seq);
    let t = new NdArray(x, [bsz, seq, embed]);
    t = t.view([bsz, side, side, embed]);
    t = t.view([bsz, side, side / s, embed * s]);
    t = t.permute([0, 2, 1, 3]);
    t = t.view([bsz, side / s, side / s, embed * s * s]);
    t = t.permute([0, 2, 1, 3]);
    return t.view([bsz, seq / (s * s), embed * s * s]).data;
  }
  for (const [bsz, seq, embed, s] of [
    [1, 16, 3, 2],
    [2, 36, 5, 3],
    [1, 64, 4, 4],
  ]) {
    it(`matches view/permute/reshape for batch ${bsz}, seq ${seq}, embed ${embed}, scale ${s}`, () => {
      const x = randomUniform(bsz * seq * embed, seq);
      expect(pixelShuffleReference(x, { batch: bsz, seq, embed, scale: s })).toEqual(literal(x, bsz, seq, embed, s));
    });
  }
});

describe('patchEmbedReference', () => {
  it('equals im2col (by literal reshapes) followed by the matmul reference', () => {
    const [B, C, H, W, P, D] = [2, 3, 8, 12, 4, 5];
    const pixels = randomUniform(B * C * H * W, 1);
    const weight = randomUniform(D * C * P * P, 2);
    const bias = randomUniform(D, 3);
    // [B, C, H/P, P, W/P, P] -> [B, H/P, W/P, C, P, P] -> [B * H/P * W/P, C*P*P]
    const patches = new NdArray(pixels, [B, C, H / P, P, W / P, P]).permute([0, 2, 4, 1, 3, 5]).data;
    const want = matmulReference(patches, weight, bias, { M: (B * H * W) / (P * P), N: D, K: C * P * P });
    const got = patchEmbedReference(pixels, weight, bias, { batch: B, channels: C, height: H, width: W, patch: P, outDim: D });
    for (let i = 0; i < want.length; i++) expect(got[i]).toBeCloseTo(want[i], 5);
  });
});

describe('vitAttentionReference', () => {
  it('equals softmax(q kᵀ / sqrt(d)) v composed from the matmul and softmax references', () => {
    const [T, H, D] = [5, 2, 64];
    const qkv = randomUniform(T * 3 * H * D, 4);
    const mask = new Uint32Array([1, 1, 0, 1, 1]);
    const got = vitAttentionReference(qkv, mask, { batch: 1, tokens: T, heads: H, headDim: D });
    for (let h = 0; h < H; h++) {
      const pick = (part: number) => {
        const out = new Float32Array(T * D);
        for (let t = 0; t < T; t++)
          out.set(qkv.subarray(t * 3 * H * D + part * H * D + h * D, t * 3 * H * D + part * H * D + h * D + D), t * D);
        return out;
      };
      const [q, k, v] = [pick(0), pick(1), pick(2)];
      const scores = matmulReference(q, k, undefined, { M: T, N: T, K: D }).map((s, i) => (mask[i % T] ? s / 8 : -1e30));
      const probs = softmaxReference(scores, { rows: T, cols: T });
      // probs [T, T] · v [T, D] = probs · (vᵀ)ᵀ
      const vt = new NdArray(v, [T, D]).permute([1, 0]).data;
      const want = matmulReference(probs, vt, undefined, { M: T, N: D, K: T });
      for (let t = 0; t < T; t++) {
        for (let d = 0; d < D; d++) expect(got[t * H * D + h * D + d]).toBeCloseTo(want[t * D + d], 5);
      }
    }
  });
});

describe('rope tables', () => {
  it('inverse frequencies follow 1 / theta^(2i/d)', () => {
    const inv = ropeInverseFrequencies(100000, 64);
    expect(inv[0]).toBe(1);
    for (let i = 0; i < 32; i++) {
      const exact = 1 / 100000 ** ((2 * i) / 64);
      expect(Math.abs(inv[i] - exact) / exact).toBeLessThan(3e-7); // f32 rounding of a few steps
    }
  });
  it('rows hold cos then sin of position * inv_freq', () => {
    const table = ropeCosSinTable(10000, 8, 50);
    const inv = ropeInverseFrequencies(10000, 8);
    expect(Array.from(table.subarray(0, 8))).toEqual([1, 1, 1, 1, 0, 0, 0, 0]);
    for (let i = 0; i < 4; i++) {
      expect(table[49 * 8 + i]).toBeCloseTo(Math.cos(49 * inv[i]), 6);
      expect(table[49 * 8 + 4 + i]).toBeCloseTo(Math.sin(49 * inv[i]), 6);
    }
  });
});
