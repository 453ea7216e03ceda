// The self-check `tessera doctor` and the demo page run: every kernel once at a shape from SmolVLM,
// small enough to finish in seconds on a CPU adapter.

import {
  argmaxCase,
  copyCase,
  embeddingGatherCase,
  geluTanhCase,
  layerNormCase,
  matmulCase,
  matmulRowsCase,
  patchEmbedCase,
  conv1dCase,
  pixelShuffleCase,
  residualAddCase,
  bilinearRowsCase,
  qkNormCase,
  rmsNormCase,
  ropeCase,
  softmaxCase,
  swigluCase,
  vitAttentionCase,
  type KernelCase,
} from './cases';
import { kvWriteCase, pagedAttentionCase, sampleCase, spliceCase } from './cases-decoder';
import { decodeAttentionOutCase, decodeGateUpCase, decodeHeadCase, decodeQkvCase } from './cases-decode';
import { logitAdjustCase } from './cases-logits';
import { quantizeCase } from './cases-weights';

/**
 * `features`: the device's (GpuContext.features); cases for optional shaders run only where the device
 * has what they need (f16 math: `shader-f16`).
 */
export function defaultKernelCases(features: ReadonlySet<string> = new Set()): KernelCase[] {
  const f16Math = features.has('shader-f16')
    ? [
        matmulCase({ M: 1, N: 1536, K: 576 }, { format: 'f16', f16Math: true }),
        matmulCase({ M: 64, N: 256, K: 768 }, { format: 'f16', f16Math: true, bias: true, plan: 'register-wide' }),
      ]
    : [];
  return [
    ...f16Math,
    matmulCase({ M: 64, N: 768, K: 768 }, { bias: true, activation: 'gelu_tanh' }),
    matmulCase({ M: 1, N: 1536, K: 576 }, { activation: 'silu' }),
    matmulCase({ M: 33, N: 70, K: 45 }, { bias: true }),
    // Weight dtypes: decode rows and a prefill tile with packed weights, the gemv plan, a packed gather.
    matmulCase({ M: 1, N: 1536, K: 576 }, { format: 'q4' }),
    matmulCase({ M: 1, N: 1536, K: 576 }, { format: 'q8' }),
    // A batched decode step (4 sequences): rows share each load of W and match each row run alone.
    matmulRowsCase({ M: 4, N: 1536, K: 576 }, { format: 'q4' }),
    matmulCase({ M: 64, N: 256, K: 768 }, { format: 'f16', bias: true }),
    matmulCase({ M: 33, N: 70, K: 64 }, { bias: true, accumulate: true }),
    matmulCase({ M: 2, N: 576, K: 1536 }, { format: 'q4', plan: 'gemv' }),
    embeddingGatherCase({ numTokens: 8, vocab: 1000, dim: 576 }, { format: 'q4' }),
    // An embedding and an LM head larger than one binding: in parts of rows (the last one short), the
    // head's parts writing their columns of one row of logits, a decode step and a prefill tile.
    embeddingGatherCase({ numTokens: 9, vocab: 1000, dim: 64 }, { format: 'q4', parts: 3, badId: true }),
    matmulCase({ M: 1, N: 1000, K: 576 }, { format: 'q4', parts: 3 }),
    matmulCase({ M: 33, N: 1000, K: 64 }, { parts: 3 }),
    // A GGUF file's K-quant blocks as they are: a decode row, the gemv plan, a gather.
    matmulCase({ M: 1, N: 1536, K: 768 }, { format: 'q4k' }),
    matmulCase({ M: 2, N: 576, K: 1536 }, { format: 'q6k', plan: 'gemv' }),
    embeddingGatherCase({ numTokens: 8, vocab: 1000, dim: 512 }, { format: 'q5k' }),
    quantizeCase('q4', 70, 200),
    quantizeCase('q8', 9, 576),
    layerNormCase({ rows: 64, dim: 768 }, { plan: 'workgroup' }),
    layerNormCase({ rows: 64, dim: 768 }, { plan: 'rows' }),
    rmsNormCase({ rows: 8, dim: 576 }),
    // Qwen3's q_norm / k_norm: 16 q and 8 k heads of 128 in a row that also holds 8 v heads.
    qkNormCase({ numTokens: 4, numHeads: 32, numQHeads: 16, numKHeads: 8, headDim: 128 }),
    // Qwen3-VL's learned positions resampled to a 32 x 32 patch grid from its 48 x 48 table.
    bilinearRowsCase({ rows: 1024, dim: 64, tableRows: 2304 }),
    geluTanhCase(4096),
    swigluCase({ rows: 8, dim: 1536 }),
    softmaxCase({ rows: 8, cols: 1000 }),
    ropeCase({ numTokens: 8, numHeads: 9, headDim: 64, maxPositions: 256 }, { positionOffset: 100 }),
    ropeCase({ numTokens: 8, numHeads: 4, headDim: 128, maxPositions: 64, mrope: { section: [16, 24, 24], interleaved: false } }),
    vitAttentionCase({ batch: 1, tokens: 256, heads: 12 }, { maskedKeys: 8, plan: 'stream' }),
    vitAttentionCase({ batch: 1, tokens: 256, heads: 12 }, { maskedKeys: 8, plan: 'tiled' }),
    vitAttentionCase({ batch: 1, tokens: 256, heads: 12 }, { maskedKeys: 8, plan: 'matmuls' }),
    vitAttentionCase({ batch: 1, tokens: 81, heads: 4, headDim: 72 }, { maskedKeys: 3 }),
    patchEmbedCase({ batch: 1, channels: 3, height: 64, width: 64, patch: 16, outDim: 768 }),
    patchEmbedCase({ batch: 1, channels: 3, height: 60, width: 60, patch: 14, outDim: 144 }),
    // The Whisper stem's second convolution (time-first rows, stride 2) with its exact GELU.
    conv1dCase(
      { batch: 1, channels: 64, length: 100, kernel: 3, stride: 2, padding: 1, outDim: 64, layout: 'time-first' },
      { activation: 'gelu' },
    ),
    pixelShuffleCase({ batch: 1, seq: 1024, embed: 64, scale: 4 }),
    embeddingGatherCase({ numTokens: 8, vocab: 1000, dim: 576 }),
    residualAddCase(4096),
    argmaxCase({ rows: 2, cols: 49280 }),
    copyCase(1 << 20),
    kvWriteCase({ numTokens: 8, numKvHeads: 3, headDim: 64, numSlots: 64, numQHeads: 9 }),
    // The fused decode plan's kernels (GPUs): a layer's first dispatch with Qwen2's bias, its MLP input, the head.
    decodeQkvCase({ M: 1, K: 576, numHeads: 9, numKvHeads: 3, headDim: 64, bias: true }, { format: 'q4' }),
    decodeAttentionOutCase({ numHeads: 9, numKvHeads: 3, headDim: 64, H: 576, contexts: [81, 5] }, { format: 'q4' }),
    decodeGateUpCase({ M: 1, K: 576, I: 1536, parts: 3 }, { format: 'q4' }),
    decodeHeadCase({ M: 1, N: 1000, K: 576, numRows: 4 }, { format: 'q4' }),
    pagedAttentionCase({
      numHeads: 9,
      numKvHeads: 3,
      chunks: [
        [40, 40],
        [70, 1],
      ],
    }),
    pagedAttentionCase({
      numHeads: 4,
      numKvHeads: 2,
      chunks: [
        [30, 30],
        [9, 1],
      ],
      headDim: 128,
    }),
    pagedAttentionCase(
      {
        numHeads: 9,
        numKvHeads: 3,
        chunks: [
          [300, 1],
          [40, 8],
        ],
      },
      { plan: 'stream' },
    ),
    pagedAttentionCase(
      {
        numHeads: 9,
        numKvHeads: 3,
        chunks: [
          [300, 1],
          [82, 1],
          [40, 8],
        ],
      },
      { plan: 'workgroup' },
    ),
    spliceCase({ numRows: 64, dim: 576, numDstRows: 100 }),
    sampleCase({ rows: 1, vocab: 49280 }, { temperature: 0.7, topK: 50, topP: 0.9, seed: 42, step: 0 }),
    logitAdjustCase({ rows: 5, vocab: 49280 }, { sampling: { temperature: 0.7, topK: 50, topP: 0.9 } }),
  ];
}
