import { describe, expect, it } from 'vitest';
import { patchEmbedCase, pixelShuffleCase, vitAttentionCase } from '../../src/selfcheck/cases';
import { DispatchSequence, PiecewiseDispatch, type Dispatch } from '../../src/kernels/dispatch';
import { prepareVitAttention, VIT_ATTENTION_PLANS, type VitAttentionShape } from '../../src/kernels/vit-attention';
import { expectCasePasses, useGpu } from './gpu';

const gpu = useGpu();
const WORKGROUP_SIZES = [32, 64, 128, 256];

// Every plan at every shape: 'tiled' (GPUs), 'matmuls' (CPU adapters) and 'stream' (on request); SwiftShader
// runs them all.
for (const plan of VIT_ATTENTION_PLANS) {
  describe(`vit-attention ${plan}`, () => {
    for (const wg of WORKGROUP_SIZES) {
      it(`WG=${wg} ragged tokens`, () =>
        expectCasePasses(gpu(), vitAttentionCase({ batch: 2, tokens: 37, heads: 2 }, { plan, workgroupSize: wg, maskedKeys: 5 })));
    }
    it('one token', () => expectCasePasses(gpu(), vitAttentionCase({ batch: 1, tokens: 1, heads: 1 }, { plan })));
    it('every key but one masked', () =>
      expectCasePasses(gpu(), vitAttentionCase({ batch: 1, tokens: 6, heads: 2 }, { plan, maskedKeys: 40, seed: 3 })));
    it('SigLIP shape: 1024 tokens x 12 heads x 64', () =>
      expectCasePasses(gpu(), vitAttentionCase({ batch: 1, tokens: 1024, heads: 12 }, { plan, maskedKeys: 100 })));
    // Any head_dim that is a multiple of 4 up to 256; so400m's 72 at its tile grid.
    for (const headDim of [4, 8, 16, 72, 128, 256]) {
      it(`head_dim ${headDim}, ragged tokens`, () =>
        expectCasePasses(gpu(), vitAttentionCase({ batch: 2, tokens: 23, heads: 2, headDim }, { plan, maskedKeys: 3 })));
    }
    it('so400m shape: 729 tokens (27 x 27 patches of 14) x 16 heads x 72', () =>
      expectCasePasses(gpu(), vitAttentionCase({ batch: 1, tokens: 729, heads: 16, headDim: 72 }, { plan, maskedKeys: 30 })));
  });
}

describe('vit-attention tiled', () => {
  // Tiles smaller than the default (the device's workgroup storage sets it: 28 keys at head_dim 64 in
  // 16 KiB), a last tile past the tokens, and several blocks of queries per head.
  for (const tileKeys of [4, 12]) {
    it(`tiles of ${tileKeys} keys, 3 blocks of queries`, () =>
      expectCasePasses(
        gpu(),
        vitAttentionCase({ batch: 2, tokens: 75, heads: 3, headDim: 16 }, { plan: 'tiled', workgroupSize: 32, tileKeys, maskedKeys: 7 }),
      ));
  }
  it('refuses a tile that is not a multiple of 4 keys', async () => {
    await expect(
      expectCasePasses(gpu(), vitAttentionCase({ batch: 1, tokens: 8, heads: 1, headDim: 8 }, { plan: 'tiled', tileKeys: 6 })),
    ).rejects.toThrow(/multiple of 4 keys/);
  });
});

describe('vit-attention stream head code', () => {
  // The streaming kernel holds a head in registers one of two ways (attention-head.ts).
  for (const headCode of ['unrolled', 'loop'] as const) {
    for (const headDim of [4, 8, 16, 72, 128, 256]) {
      it(`head_dim ${headDim} ${headCode}, ragged tokens`, () =>
        expectCasePasses(
          gpu(),
          vitAttentionCase({ batch: 2, tokens: 23, heads: 2, headDim }, { plan: 'stream', maskedKeys: 3, headCode }),
        ));
    }
    for (const wg of WORKGROUP_SIZES) {
      it(`head_dim 72 ${headCode} WG=${wg}`, () =>
        expectCasePasses(
          gpu(),
          vitAttentionCase({ batch: 1, tokens: 30, heads: 3, headDim: 72 }, { plan: 'stream', workgroupSize: wg, headCode }),
        ));
    }
  }
});

describe('vit-attention matmuls score blocks', () => {
  // A score budget smaller than all heads: heads run in blocks (here 2, 2, 1 of 5; and one at a time).
  const perHead = 19 * 20 * 4;
  it('blocks of 2 heads over 3 images', () =>
    expectCasePasses(
      gpu(),
      vitAttentionCase({ batch: 3, tokens: 19, heads: 5, headDim: 12 }, { plan: 'matmuls', maskedKeys: 2, scoresBudgetBytes: 2 * perHead }),
    ));
  it('one head at a time (budget below one head)', () =>
    expectCasePasses(gpu(), vitAttentionCase({ batch: 2, tokens: 19, heads: 3, headDim: 8 }, { plan: 'matmuls', scoresBudgetBytes: 16 })));
});

describe('vit-attention matmuls in pieces (paced encoding: QKᵀ, softmax and P·V per head)', () => {
  const perHead = 19 * 20 * 4;
  it('pieces of 1 head over 3 images, in blocks of 3 heads', () =>
    expectCasePasses(
      gpu(),
      vitAttentionCase(
        { batch: 3, tokens: 19, heads: 5, headDim: 12 },
        { plan: 'matmuls', maskedKeys: 2, scoresBudgetBytes: 3 * perHead, headsPerPiece: 1 },
      ),
    ));
  it('pieces of 2 heads (the last of 1), ragged tokens', () =>
    expectCasePasses(
      gpu(),
      vitAttentionCase({ batch: 2, tokens: 37, heads: 5, headDim: 16 }, { plan: 'matmuls', maskedKeys: 3, headsPerPiece: 2 }),
    ));

  // The encoder runs a piecewise step whole when unpaced and piece by piece when paced, possibly both
  // within one encode: the two must give the same bits, and the same as attention prepared without pieces.
  it('pieces, their wholes and no pieces give identical bits', async () => {
    const g = gpu();
    const shape: VitAttentionShape = { batch: 2, tokens: 45, heads: 6, headDim: 16 };
    const rows = shape.batch * shape.tokens;
    let seed = 7;
    const qkv = new Float32Array(rows * 3 * shape.heads * shape.headDim).map(
      () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1,
    );
    const mask = new Uint32Array(rows).fill(1);
    mask[3] = 0;
    mask[50] = 0;
    const inputs = { qkv: g.upload(qkv, [rows, 3 * shape.heads * shape.headDim], 'qkv'), mask: g.upload(mask, [rows], 'mask', 'u32') };
    const wholeOf = (d: Dispatch): Dispatch[] =>
      d instanceof PiecewiseDispatch ? [d.whole] : d instanceof DispatchSequence ? d.parts.flatMap(wholeOf) : [d];
    const run = async (headsPerPiece: number, form: 'pieces' | 'whole') => {
      const out = g.createTensor([rows, shape.heads * shape.headDim], 'f32', 'out');
      const d = await prepareVitAttention(g, { ...inputs, out }, shape, { plan: 'matmuls', headsPerPiece });
      const encoder = g.device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      for (const leaf of form === 'whole' ? wholeOf(d) : [d]) leaf.encode(pass);
      pass.end();
      g.device.queue.submit([encoder.finish()]);
      const result = await g.readF32(out);
      d.release();
      g.release(out);
      return result;
    };
    const plain = await run(0, 'pieces');
    const pieces = await run(1, 'pieces');
    const wholes = await run(1, 'whole');
    expect(Buffer.from(pieces.buffer).equals(Buffer.from(plain.buffer))).toBe(true);
    expect(Buffer.from(wholes.buffer).equals(Buffer.from(plain.buffer))).toBe(true);
    g.release(inputs.qkv);
    g.release(inputs.mask);
  });
});

describe('patch-embed', () => {
  for (const wg of WORKGROUP_SIZES) {
    it(`WG=${wg}`, () =>
      expectCasePasses(
        gpu(),
        patchEmbedCase({ batch: 2, channels: 3, height: 32, width: 48, patch: 16, outDim: 20 }, { workgroupSize: wg }),
      ));
  }
  it('workgroup matmul plan', () =>
    expectCasePasses(
      gpu(),
      patchEmbedCase({ batch: 1, channels: 3, height: 32, width: 32, patch: 16, outDim: 70 }, { plan: 'workgroup' }),
    ));
  it('odd patch size 3 over 2 channels', () =>
    expectCasePasses(gpu(), patchEmbedCase({ batch: 1, channels: 2, height: 9, width: 6, patch: 3, outDim: 5 })));
  it('patch 14 over a tile that is not a whole number of patches (the last 2 / 4 pixels unused)', () =>
    expectCasePasses(gpu(), patchEmbedCase({ batch: 2, channels: 3, height: 30, width: 46, patch: 14, outDim: 24 })));
  for (const format of ['f16', 'bf16', 'q8', 'q4'] as const) {
    it(`patch 14 with ${format} weights (K = 588)`, () =>
      expectCasePasses(gpu(), patchEmbedCase({ batch: 1, channels: 3, height: 42, width: 28, patch: 14, outDim: 40 }, { format })));
  }
  it('SigLIP so400m shape: 384x384 tile, patch 14 -> 729 x 1152', () =>
    expectCasePasses(gpu(), patchEmbedCase({ batch: 1, channels: 3, height: 384, width: 384, patch: 14, outDim: 1152 })));
  it('SigLIP shape: 512x512 tile to 1024 x 768', () =>
    expectCasePasses(gpu(), patchEmbedCase({ batch: 1, channels: 3, height: 512, width: 512, patch: 16, outDim: 768 })));
});

describe('pixel-shuffle', () => {
  for (const wg of WORKGROUP_SIZES) {
    it(`WG=${wg}`, () => expectCasePasses(gpu(), pixelShuffleCase({ batch: 2, seq: 36, embed: 5, scale: 3 }, { workgroupSize: wg })));
  }
  it('SmolVLM shape: 1024 x 768, scale 4', () => expectCasePasses(gpu(), pixelShuffleCase({ batch: 1, seq: 1024, embed: 768, scale: 4 })));
  it('scale 2 over two images', () => expectCasePasses(gpu(), pixelShuffleCase({ batch: 2, seq: 16, embed: 3, scale: 2 })));
});
