// The fused decode kernels against the references of the kernels they fuse: several row counts, widths
// with and without a partial last weight group (K % 32), head sizes, M-RoPE in both layouts, the bias,
// weight formats, workgroup sizes and both reductions.

import { describe, it } from 'vitest';
import { decodeAttentionOutCase, decodeGateUpCase, decodeHeadCase, decodeQkvCase } from '../../src/selfcheck/cases-decode';
import { expectCasePasses, useGpu } from './gpu';

const gpu = useGpu();

describe('decode-qkv: RMSNorm, q | k | v projection, RoPE and the KV write in one', () => {
  const cases = [
    decodeQkvCase({ M: 1, K: 576, numHeads: 9, numKvHeads: 3, headDim: 64 }),
    decodeQkvCase({ M: 3, K: 72, numHeads: 4, numKvHeads: 2, headDim: 8, bias: true }, { badPosition: true, badSlot: true }),
    decodeQkvCase({ M: 8, K: 256, numHeads: 2, numKvHeads: 1, headDim: 128 }, { format: 'q4' }),
    decodeQkvCase({ M: 2, K: 128, numHeads: 4, numKvHeads: 2, headDim: 32, bias: true, mrope: { section: [4, 6, 6], interleaved: false } }),
    decodeQkvCase(
      { M: 5, K: 128, numHeads: 4, numKvHeads: 2, headDim: 32, mrope: { section: [6, 5, 5], interleaved: true } },
      { format: 'q8' },
    ),
    decodeQkvCase({ M: 4, K: 256, numHeads: 3, numKvHeads: 1, headDim: 64 }, { format: 'q4k', workgroupSize: 32 }),
    decodeQkvCase({ M: 1, K: 96, numHeads: 3, numKvHeads: 3, headDim: 16 }, { format: 'bf16', workgroupSize: 256, subgroups: false }),
  ];
  for (const c of cases) it(c.label, () => expectCasePasses(gpu(), c));
});

describe('decode-attention-out: attention over all keys and each group of heads times its columns of Wo, in one', () => {
  const cases = [
    decodeAttentionOutCase({ numHeads: 9, numKvHeads: 3, headDim: 64, H: 576, contexts: [81, 5] }),
    decodeAttentionOutCase({ numHeads: 4, numKvHeads: 2, headDim: 8, H: 72, contexts: [3, 150, 17] }, { format: 'q8', workgroupSize: 8 }),
    decodeAttentionOutCase({ numHeads: 16, numKvHeads: 2, headDim: 128, H: 256, contexts: [40] }, { format: 'q4', workgroupSize: 32 }),
  ];
  for (const c of cases) it(c.label, () => expectCasePasses(gpu(), c));
});

describe("decode-gate-up: the output projection's parts added to h, RMSNorm, gate | up projection and SwiGLU in one", () => {
  const cases = [
    decodeGateUpCase({ M: 1, K: 576, I: 1536, parts: 3 }),
    decodeGateUpCase({ M: 6, K: 72, I: 45, parts: 1 }, { format: 'f16' }),
    decodeGateUpCase({ M: 8, K: 256, I: 96, parts: 2 }, { format: 'q6k', workgroupSize: 128 }),
    decodeGateUpCase({ M: 2, K: 64, I: 7, parts: 4 }, { format: 'q4', subgroups: false }),
  ];
  for (const c of cases) it(c.label, () => expectCasePasses(gpu(), c));
});

describe('decode-head: the head rows gathered, RMSNorm and the LM head in one', () => {
  const cases = [
    decodeHeadCase({ M: 1, N: 1000, K: 576, numRows: 1 }),
    decodeHeadCase({ M: 4, N: 333, K: 72, numRows: 12 }, { format: 'q8' }),
    decodeHeadCase({ M: 3, N: 100, K: 64, numRows: 8 }, { format: 'q4', columns: { offset: 60, stride: 250 }, workgroupSize: 32 }),
  ];
  for (const c of cases) it(c.label, () => expectCasePasses(gpu(), c));
});
