import { describe, it } from 'vitest';
import { PAGED_ATTENTION_PLANS } from '../../src/kernels/paged-attention';
import { kvWriteCase, pagedAttentionCase, spliceCase } from '../../src/selfcheck/cases-decoder';
import { expectCasePasses, useGpu } from './gpu';

const gpu = useGpu();
const WORKGROUP_SIZES = [32, 64, 128, 256];

describe('kv-write', () => {
  for (const wg of WORKGROUP_SIZES) {
    it(`WG=${wg}`, () =>
      expectCasePasses(
        gpu(),
        kvWriteCase({ numTokens: 7, numKvHeads: 3, headDim: 64, numSlots: 48, numQHeads: 9 }, { workgroupSize: wg }),
      ));
  }
  it('one decode token', () =>
    expectCasePasses(gpu(), kvWriteCase({ numTokens: 1, numKvHeads: 1, headDim: 64, numSlots: 16, numQHeads: 3 })));
  for (const headDim of [8, 72, 128]) {
    it(`head_dim ${headDim}`, () =>
      expectCasePasses(gpu(), kvWriteCase({ numTokens: 5, numKvHeads: 2, headDim, numSlots: 24, numQHeads: 4 })));
  }
  it('a slot past the cache is skipped and flagged', () =>
    expectCasePasses(gpu(), kvWriteCase({ numTokens: 4, numKvHeads: 2, headDim: 8, numSlots: 16, numQHeads: 2 }, { badSlot: true })));
});

describe('paged-attention', () => {
  for (const wg of WORKGROUP_SIZES) {
    it(`WG=${wg} prefill chunk`, () =>
      expectCasePasses(gpu(), pagedAttentionCase({ numHeads: 3, numKvHeads: 1, chunks: [[37, 37]] }, { workgroupSize: wg })));
  }
  // Any head_dim that is a multiple of 4 up to 256 (Idefics3-8B: 128; distilled/test checkpoints: 8, 16), in
  // both head codes. The unrolled code for big heads takes SwiftShader many seconds to compile per pipeline,
  // so its workgroup-size sweep runs at head_dim 16 and head_dim 256 runs as a loop (vit-attention runs the
  // unrolled 256).
  const headDims = { unrolled: [4, 8, 16, 72, 128], loop: [4, 8, 16, 72, 128, 256] } as const;
  for (const headCode of ['unrolled', 'loop'] as const) {
    for (const headDim of headDims[headCode]) {
      it(`head_dim ${headDim} ${headCode}: chunked prefill and decode of 2 sequences`, () =>
        expectCasePasses(
          gpu(),
          pagedAttentionCase(
            {
              numHeads: 4,
              numKvHeads: 2,
              chunks: [
                [21, 6],
                [9, 1],
              ],
              blockSize: 8,
              headDim,
            },
            { headCode },
          ),
        ));
    }
    for (const wg of WORKGROUP_SIZES) {
      const headDim = headCode === 'unrolled' ? 16 : 128;
      it(`head_dim ${headDim} ${headCode} WG=${wg}`, () =>
        expectCasePasses(
          gpu(),
          pagedAttentionCase({ numHeads: 2, numKvHeads: 1, chunks: [[19, 19]], headDim }, { workgroupSize: wg, headCode }),
        ));
    }
  }
  it('decode: one token for each of 3 sequences of different lengths (GQA 9/3)', () =>
    expectCasePasses(
      gpu(),
      pagedAttentionCase({
        numHeads: 9,
        numKvHeads: 3,
        chunks: [
          [1, 1],
          [17, 1],
          [70, 1],
        ],
      }),
    ));
  it('chunked prefill: a later chunk attends to the earlier chunk in the cache', () =>
    expectCasePasses(
      gpu(),
      pagedAttentionCase({
        numHeads: 3,
        numKvHeads: 1,
        chunks: [
          [50, 13],
          [5, 5],
        ],
      }),
    ));
  it('block size 4, contexts ending mid-block', () =>
    expectCasePasses(
      gpu(),
      pagedAttentionCase({
        numHeads: 2,
        numKvHeads: 2,
        chunks: [
          [9, 3],
          [6, 6],
        ],
        blockSize: 4,
      }),
    ));
  it('SmolLM2 shape: 9/3 heads, a 300-token prefill', () =>
    expectCasePasses(gpu(), pagedAttentionCase({ numHeads: 9, numKvHeads: 3, chunks: [[300, 300]] })));

  // The workgroup plan at other numbers of keys scored at once than its default 64.
  for (const keys of [32, 128]) {
    it(`workgroup plan, ${keys} keys scored at once: decode rows and a prefill chunk`, () =>
      expectCasePasses(
        gpu(),
        pagedAttentionCase(
          {
            numHeads: 9,
            numKvHeads: 3,
            chunks: [
              [1000, 1],
              [150, 20],
              [5, 1],
            ],
          },
          { plan: 'workgroup', workgroupSize: keys },
        ),
      ));
  }
  // The three plans (the cases above run split). Split and workgroup cut a row's keys into at most 16 runs
  // of >= 32 keys: contexts of 1, 31, 33, 1000 and 4100 keys give 1, 1, 2, 16 and 16 runs; the query heads
  // of a kv head share each load in groups of up to 8 (12 per kv head -> 2 groups of 6; 5 -> 1 group of 5).
  for (const plan of PAGED_ATTENTION_PLANS) {
    it(`${plan}: decode rows at contexts of 1, 31, 33, 1000 and 4100 keys (GQA 9/3)`, () =>
      expectCasePasses(
        gpu(),
        pagedAttentionCase(
          {
            numHeads: 9,
            numKvHeads: 3,
            chunks: [
              [1, 1],
              [31, 1],
              [33, 1],
              [1000, 1],
              [4100, 1],
            ],
          },
          { plan },
        ),
      ));
    it(`${plan}: 12 query heads per kv head, a prefill chunk and a decode row`, () =>
      expectCasePasses(
        gpu(),
        pagedAttentionCase(
          {
            numHeads: 24,
            numKvHeads: 2,
            chunks: [
              [70, 9],
              [130, 1],
            ],
            headDim: 16,
          },
          { plan },
        ),
      ));
    it(`${plan}: 5 query heads per kv head, loop head code`, () =>
      expectCasePasses(
        gpu(),
        pagedAttentionCase({ numHeads: 10, numKvHeads: 2, chunks: [[90, 2]], headDim: 72 }, { plan, headCode: 'loop' }),
      ));
    it(`${plan}: no GQA (1 query head per kv head)`, () =>
      expectCasePasses(
        gpu(),
        pagedAttentionCase(
          {
            numHeads: 2,
            numKvHeads: 2,
            chunks: [
              [200, 1],
              [3, 3],
            ],
          },
          { plan },
        ),
      ));
  }
});

describe('splice', () => {
  for (const wg of WORKGROUP_SIZES) {
    it(`WG=${wg}`, () => expectCasePasses(gpu(), spliceCase({ numRows: 5, dim: 33, numDstRows: 12 }, { workgroupSize: wg })));
  }
  it('13 tiles of 64 image tokens into a 900-token prompt', () =>
    expectCasePasses(gpu(), spliceCase({ numRows: 832, dim: 576, numDstRows: 900 })));
  it('a slice of the source rows (a prefill chunk holding part of an image)', () =>
    expectCasePasses(gpu(), spliceCase({ numRows: 20, dim: 16, numDstRows: 30, numSrcRows: 64, srcRowOffset: 40 })));
  it('a row past the destination is skipped and flagged', () =>
    expectCasePasses(gpu(), spliceCase({ numRows: 3, dim: 4, numDstRows: 8 }, { badRow: true })));
  it('add (DeepStack): rows added to what the destination holds, from an offset of src', () =>
    expectCasePasses(gpu(), spliceCase({ numRows: 20, dim: 64, numDstRows: 30, numSrcRows: 64, srcRowOffset: 40 }, { add: true })));
  it('add with a bad row', () => expectCasePasses(gpu(), spliceCase({ numRows: 3, dim: 4, numDstRows: 8 }, { badRow: true, add: true })));
});
