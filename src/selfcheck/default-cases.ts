// The self-check `tessera doctor` and the demo page run: every kernel once at a shape from SmolVLM,
// small enough to finish in seconds on a CPU adapter.

import {
  argmaxCase,
  copyCase,
  embeddingGatherCase,
  geluTanhCase,
  layerNormCase,
  matmulCase,
  patchEmbedCase,
  pixelShuffleCase,
  residualAddCase,
  rmsNormCase,
  ropeCase,
  softmaxCase,
  swigluCase,
  vitAttentionCase,
  type KernelCase,
} from './cases';
import { kvWriteCase, pagedAttentionCase, sampleCase, spliceCase } from './cases-decoder';

export function defaultKernelCases(): KernelCase[] {
  return [
    matmulCase({ M: 64, N: 768, K: 768 }, { bias: true, activation: 'gelu_tanh' }),
    matmulCase({ M: 1, N: 1536, K: 576 }, { activation: 'silu' }),
    matmulCase({ M: 33, N: 70, K: 45 }, { bias: true }),
    layerNormCase({ rows: 64, dim: 768 }),
    rmsNormCase({ rows: 8, dim: 576 }),
    geluTanhCase(4096),
    swigluCase({ rows: 8, dim: 1536 }),
    softmaxCase({ rows: 8, cols: 1000 }),
    ropeCase({ numTokens: 8, numHeads: 9, headDim: 64, maxPositions: 256 }, { positionOffset: 100 }),
    vitAttentionCase({ batch: 1, tokens: 256, heads: 12 }, { maskedKeys: 8 }),
    patchEmbedCase({ batch: 1, channels: 3, height: 64, width: 64, patch: 16, outDim: 768 }),
    pixelShuffleCase({ batch: 1, seq: 1024, embed: 64, scale: 4 }),
    embeddingGatherCase({ numTokens: 8, vocab: 1000, dim: 576 }),
    residualAddCase(4096),
    argmaxCase({ rows: 2, cols: 49280 }),
    copyCase(1 << 20),
    kvWriteCase({ numTokens: 8, numKvHeads: 3, headDim: 64, numSlots: 64, numQHeads: 9 }),
    pagedAttentionCase({ numHeads: 9, numKvHeads: 3, chunks: [[40, 40], [70, 1]] }),
    spliceCase({ numRows: 64, dim: 576, numDstRows: 100 }),
    sampleCase({ rows: 1, vocab: 49280 }, { temperature: 0.7, topK: 50, topP: 0.9, seed: 42, step: 0 }),
  ];
}
