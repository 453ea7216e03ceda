import { describe, it } from 'vitest';
import { embeddingGatherCase, ropeCase } from '../../src/selfcheck/cases';
import { expectCasePasses, useGpu } from './gpu';

const gpu = useGpu();
const WORKGROUP_SIZES = [32, 64, 128, 256];

describe('rope', () => {
  for (const wg of WORKGROUP_SIZES) {
    it(`WG=${wg} SmolLM2 q heads`, () =>
      expectCasePasses(gpu(), ropeCase({ numTokens: 7, numHeads: 9, headDim: 64, maxPositions: 64 }, { workgroupSize: wg })));
  }
  it('decode at position 8000, theta 100000', () =>
    expectCasePasses(gpu(), ropeCase({ numTokens: 1, numHeads: 3, headDim: 64, maxPositions: 8192 }, { positionOffset: 8000 })));
  it('theta 10000, odd head count, headDim 6', () =>
    expectCasePasses(gpu(), ropeCase({ numTokens: 5, numHeads: 5, headDim: 6, maxPositions: 16 }, { theta: 10000, positionOffset: 3 })));
  it('only the first rotaryHeads heads turn (fused q | k | v rows)', () =>
    expectCasePasses(gpu(), ropeCase({ numTokens: 6, numHeads: 5, headDim: 64, maxPositions: 32, rotaryHeads: 4 }, { positionOffset: 9 })));
  it('a position past the table is left unrotated and flagged', () =>
    expectCasePasses(gpu(), ropeCase({ numTokens: 4, numHeads: 2, headDim: 8, maxPositions: 16 }, { badPosition: true })));
  // M-RoPE: Qwen2.5-VL's contiguous sections and Qwen3-VL's interleaved ones at their head size, a tiny
  // head, and a bad position on one row only.
  it('M-RoPE, Qwen2.5-VL sections [16, 24, 24] at head_dim 128, over fused q|k|v', () =>
    expectCasePasses(
      gpu(),
      ropeCase(
        {
          numTokens: 9,
          numHeads: 20,
          headDim: 128,
          maxPositions: 64,
          rotaryHeads: 18,
          mrope: { section: [16, 24, 24], interleaved: false },
        },
        { positionOffset: 20 },
      ),
    ));
  it('M-RoPE, Qwen3-VL interleaved [24, 20, 20] at head_dim 128', () =>
    expectCasePasses(
      gpu(),
      ropeCase(
        { numTokens: 7, numHeads: 6, headDim: 128, maxPositions: 48, mrope: { section: [24, 20, 20], interleaved: true } },
        { theta: 5000000 },
      ),
    ));
  it('M-RoPE, a tiny head [2, 1, 1], interleaved and not, with a bad w position', async () => {
    for (const interleaved of [false, true]) {
      await expectCasePasses(
        gpu(),
        ropeCase(
          { numTokens: 5, numHeads: 3, headDim: 8, maxPositions: 16, mrope: { section: [2, 1, 1], interleaved } },
          { badPosition: true },
        ),
      );
    }
  });
});

describe('embedding-gather', () => {
  for (const wg of WORKGROUP_SIZES) {
    it(`WG=${wg}`, () => expectCasePasses(gpu(), embeddingGatherCase({ numTokens: 5, vocab: 50, dim: 33 }, { workgroupSize: wg })));
  }
  it('prefill shape 300 tokens of SmolLM2', () => expectCasePasses(gpu(), embeddingGatherCase({ numTokens: 300, vocab: 2000, dim: 576 })));
  it('an id past the vocab gives a zero row and is flagged', () =>
    expectCasePasses(gpu(), embeddingGatherCase({ numTokens: 4, vocab: 10, dim: 8 }, { badId: true })));
  it('a table in parts of rows (larger than one binding): each token from its part, a bad id zeroed once', async () => {
    for (const format of ['f32', 'bf16', 'q8'] as const) {
      await expectCasePasses(gpu(), embeddingGatherCase({ numTokens: 12, vocab: 50, dim: 32 }, { format, parts: 4, badId: true }));
    }
  });
});
