// Bidirectional multi-head attention for the ViT with a key mask for padded patches (HF SiglipAttention).
//   qkv:  [batch * tokens, 3 * heads * headDim] f32, each row q | k | v
//   mask: [batch * tokens] u32 (1 = real patch, 0 = padding)
//   out:  [batch * tokens, heads * headDim] f32
// Any head_dim that is a multiple of 4 up to MAX_HEAD_DIM (SigLIP-base 64, so400m 72); the head code is
// generated for it (attention-head.ts) and prepended with lib/online-softmax.wgsl.

import source from '../../shaders/vit-attention.wgsl?raw';
import onlineSoftmax from '../../shaders/lib/online-softmax.wgsl?raw';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { attentionHeadSource, checkHeadDim, defaultHeadCode, type HeadCode } from './attention-head';
import { expectPositiveInt, expectTensor, expectWorkgroupSize, linearGrid } from './checks';
import { createDispatch, packParams, type KernelDispatch } from './dispatch';

export interface VitAttentionShape {
  batch: number;
  tokens: number;
  heads: number;
  headDim: number;
}

/** softmax over the unmasked keys in float64; a query with no unmasked key gets zeros. */
export function vitAttentionReference(
  qkv: Float32Array,
  mask: Uint32Array,
  shape: VitAttentionShape,
  scale = 1 / Math.sqrt(shape.headDim),
): Float32Array {
  const { batch, tokens: T, heads: H, headDim: D } = shape;
  const row = 3 * H * D;
  const out = new Float32Array(batch * T * H * D);
  const scores = new Float64Array(T);
  const acc = new Float64Array(D);
  for (let b = 0; b < batch; b++) {
    for (let h = 0; h < H; h++) {
      for (let t = 0; t < T; t++) {
        const qo = (b * T + t) * row + h * D;
        let m = -Infinity;
        for (let j = 0; j < T; j++) {
          if (!mask[b * T + j]) continue;
          const ko = (b * T + j) * row + H * D + h * D;
          let s = 0;
          for (let d = 0; d < D; d++) s += qkv[qo + d] * qkv[ko + d];
          scores[j] = s * scale;
          m = Math.max(m, scores[j]);
        }
        acc.fill(0);
        let l = 0;
        for (let j = 0; j < T; j++) {
          if (!mask[b * T + j]) continue;
          const pj = Math.exp(scores[j] - m);
          l += pj;
          const vo = (b * T + j) * row + 2 * H * D + h * D;
          for (let d = 0; d < D; d++) acc[d] += pj * qkv[vo + d];
        }
        const oo = (b * T + t) * H * D + h * D;
        for (let d = 0; d < D; d++) out[oo + d] = l > 0 ? acc[d] / l : 0;
      }
    }
  }
  return out;
}

export async function prepareVitAttention(
  gpu: GpuContext,
  io: { qkv: Tensor; mask: Tensor; out: Tensor },
  shape: VitAttentionShape,
  options: { workgroupSize?: number; scale?: number; headCode?: HeadCode } = {},
): Promise<KernelDispatch> {
  const kernel = 'vit-attention';
  const { batch, tokens, heads, headDim } = shape;
  expectPositiveInt(kernel, 'batch', batch);
  expectPositiveInt(kernel, 'tokens', tokens);
  expectPositiveInt(kernel, 'heads', heads);
  checkHeadDim(kernel, headDim);
  const headCode = options.headCode ?? defaultHeadCode(headDim);
  const wg = options.workgroupSize ?? 64;
  expectWorkgroupSize(gpu, kernel, wg);
  expectTensor(gpu, kernel, 'qkv', io.qkv, [batch * tokens, 3 * heads * headDim]);
  expectTensor(gpu, kernel, 'mask', io.mask, [batch * tokens], 'u32');
  expectTensor(gpu, kernel, 'out', io.out, [batch * tokens, heads * headDim]);
  return createDispatch(gpu, {
    label: `${kernel}[D=${headDim},${headCode}]`,
    code: [attentionHeadSource(kernel, headDim, headCode, { q: 'qkv', k: 'qkv', v: 'qkv', out: 'out' }), onlineSoftmax, source].join('\n'),
    constants: { WG: wg },
    resources: [io.qkv, io.mask, io.out],
    params: packParams([
      ['u32', batch],
      ['u32', tokens],
      ['u32', heads],
      ['f32', options.scale ?? 1 / Math.sqrt(headDim)],
    ]),
    grid: linearGrid(gpu, kernel, Math.ceil((batch * tokens * heads) / wg)),
    // Every query against every key of its tile (masked ones too): q·k and p·v, 2·headDim flops each;
    // qkv and mask read once, out written once.
    cost: { flops: 4 * batch * heads * tokens * tokens * headDim, bytes: 4 * batch * tokens * (4 * heads * headDim + 1) },
  });
}
