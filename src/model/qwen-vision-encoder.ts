// The Qwen2.5-VL vision tower (HF `Qwen2_5_VisionTransformerPretrainedModel`): patch rows in, one LM-space
// row per merge unit out. One image or video (one patch grid) per pass, laid out window by window
// (qwen-windows.ts):
//
//   patches [rows, C·T·P·P] -·Wpatchᵀ-> h [rows, D]
//   per layer:  x = rms1(h); qkv = x·Wqkvᵀ + b; rope2d(q, k; each row's patch row and column)
//               a = attn(qkv; within each window, or each frame in the full-attention layers; padding masked)
//               h += a·Woᵀ + bo; x = rms2(h); h += (silu(x·Wgᵀ + bg) * (x·Wuᵀ + bu))·Wdᵀ + bd
//   merger:     x = rms(h) read as [rows / m², m²·D]; y = gelu(x·W1ᵀ + b1)·W2ᵀ + b2
//   out [units, outHidden] = y's rows of the real units, in the processor's order
//
// The 2-D rotary is the rope kernel's M-RoPE with no t section: the first quarter of each head's
// frequencies turns by the patch's row, the second by its column, over a table whose frequencies restart
// at the quarter (theta 10000 over head_dim / 2, as HF `Qwen2_5_VisionRotaryEmbedding`). Buffers and
// plans are made for each pass's grid and released after it.

import { InternalError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { encodeDispatches, type Dispatch } from '../kernels/dispatch';
import { prepareEmbeddingGather } from '../kernels/embedding-gather';
import { prepareMatmul } from '../kernels/matmul';
import { prepareRmsNorm } from '../kernels/rms-norm';
import { prepareRope, ropeInverseFrequencies } from '../kernels/rope';
import { prepareSwiglu } from '../kernels/swiglu';
import {
  chooseVitAttentionPlan,
  createVitAttentionScratch,
  prepareVitAttention,
  releaseVitAttentionScratch,
  type VitAttentionScratch,
  type VitAttentionShape,
} from '../kernels/vit-attention';
import type { PatchGrid } from '../processor/smart-resize';
import type { QwenVisionConfig } from './config';
import { planAppender } from './encoder-layer';
import { layPatches, windowLayout } from './qwen-windows';
import type { ModelWeights } from './weights';

/** HF Qwen2RMSNorm's default, which the tower's norms keep. */
const EPS = 1e-6;

/**
 * cos | sin rows of the 2-D rotary for positions 0 .. n - 1: frequency i of the head's half turns at
 * inv[i mod (headDim / 4)], inv over head_dim / 2 (so the row and the column quarters share frequencies).
 */
function rotary2dTable(headDim: number, n: number): Float32Array {
  const quarter = headDim / 4;
  const half = headDim / 2;
  const inv = ropeInverseFrequencies(10000, half);
  const table = new Float32Array(n * headDim);
  for (let p = 0; p < n; p++) {
    for (let i = 0; i < half; i++) {
      const angle = Math.fround(p * inv[i % quarter]);
      table[p * headDim + i] = Math.cos(angle);
      table[p * headDim + half + i] = Math.sin(angle);
    }
  }
  return table;
}

export class QwenVisionEncoder {
  readonly rowLength: number;

  constructor(
    private readonly gpu: GpuContext,
    private readonly weights: ModelWeights,
    readonly vision: QwenVisionConfig,
  ) {
    this.rowLength = vision.inChannels * vision.temporalPatchSize * vision.patchSize ** 2;
  }

  /** Rows of the LM input for one grid: one per merge unit. */
  tokensFor(grid: PatchGrid): number {
    return (grid.t * grid.h * grid.w) / this.vision.mergeSize ** 2;
  }

  /** [grid.t·grid.h·grid.w, rowLength] patch rows (processor order) → [tokensFor(grid), outHidden] f32. */
  async encode(patches: Float32Array, grid: PatchGrid): Promise<Float32Array> {
    const v = this.vision;
    const numPatches = grid.t * grid.h * grid.w;
    if (patches.length !== numPatches * this.rowLength) {
      throw new InternalError(
        `qwen vision: ${patches.length} values for a ${grid.t} x ${grid.h} x ${grid.w} grid of ${this.rowLength}-value patch rows`,
      );
    }
    const layout = windowLayout(grid, v.mergeSize, v.windowSize / (v.patchSize * v.mergeSize));
    const { gpu, weights } = this;
    const D = v.hiddenSize;
    const I = v.intermediateSize;
    const unit = v.mergeSize ** 2;
    const rows = layout.rows;
    const units = layout.unitOf.length;
    const maxPos = Math.max(grid.h, grid.w);
    const tensors: Tensor[] = [];
    const t = (shape: number[], label: string, dtype: 'f32' | 'u32' = 'f32') => {
      const x = gpu.createTensor(shape, dtype, `qwen-vision.${label}`);
      tensors.push(x);
      return x;
    };
    const up = (data: Float32Array | Uint32Array, shape: number[], label: string) => {
      const x = gpu.upload(data, shape, `qwen-vision.${label}`);
      tensors.push(x);
      return x;
    };
    const b = {
      patches: up(layPatches(layout, patches, this.rowLength), [rows, this.rowLength], 'patches'),
      positions: up(layout.positions, [3, rows], 'positions'),
      mask: up(layout.mask, [rows], 'mask'),
      unitOf: up(layout.unitOf, [units], 'unit-of'),
      cosSin: up(rotary2dTable(v.headDim, maxPos), [maxPos, v.headDim], 'rotary'),
      h: t([rows, D], 'h'),
      x: t([rows, D], 'x'),
      qkv: t([rows, 3 * D], 'qkv'),
      attn: t([rows, D], 'attn'),
      gu: t([rows, 2 * I], 'gate-up'),
      act: t([rows, I], 'act'),
      m1: t([rows / unit, unit * D], 'merger-hidden'),
      m2: t([rows / unit, v.outHiddenSize], 'merger-out'),
      out: t([units, v.outHiddenSize], 'out'),
      errors: up(new Uint32Array(2), [2], 'errors'),
    };
    const windowShape: VitAttentionShape = {
      batch: layout.frames * layout.windowsPerFrame,
      tokens: layout.windowRows,
      heads: v.numHeads,
      headDim: v.headDim,
    };
    const frameShape: VitAttentionShape = { ...windowShape, batch: layout.frames, tokens: layout.windowsPerFrame * layout.windowRows };
    const scratches = new Map<VitAttentionShape, VitAttentionScratch>();
    if (chooseVitAttentionPlan(gpu) === 'matmuls') {
      scratches.set(windowShape, createVitAttentionScratch(gpu, windowShape));
      if (v.fullAttentionLayers.length > 0) scratches.set(frameShape, createVitAttentionScratch(gpu, frameShape));
    }
    const dispatches: Dispatch[] = [];
    const add = planAppender(dispatches);
    const w = (key: string) => weights.get(`vision.${key}`);
    const m = (key: string) => weights.matrix(`vision.${key}`);
    try {
      await add([prepareMatmul(gpu, { x: b.patches, weight: m('patch.w'), y: b.h }, { M: rows, N: D, K: this.rowLength })]);
      for (let l = 0; l < v.numLayers; l++) {
        const k = (name: string) => `layers.${l}.${name}`;
        const shape = v.fullAttentionLayers.includes(l) ? frameShape : windowShape;
        await add([
          prepareRmsNorm(gpu, { x: b.h, weight: w(k('ln1.w')), y: b.x }, { rows, dim: D }, { eps: EPS }),
          prepareMatmul(gpu, { x: b.x, weight: m(k('qkv.w')), bias: w(k('qkv.b')), y: b.qkv }, { M: rows, N: 3 * D, K: D }),
          prepareRope(
            gpu,
            { x: { ...b.qkv, shape: [rows, 3 * v.numHeads, v.headDim] }, positions: b.positions, cosSin: b.cosSin, errors: b.errors },
            {
              numTokens: rows,
              numHeads: 3 * v.numHeads,
              headDim: v.headDim,
              maxPositions: maxPos,
              rotaryHeads: 2 * v.numHeads,
              mrope: { section: [0, v.headDim / 4, v.headDim / 4], interleaved: false },
            },
          ),
          prepareVitAttention(gpu, { qkv: b.qkv, mask: b.mask, out: b.attn }, shape, { scratch: scratches.get(shape) }),
          prepareMatmul(gpu, { x: b.attn, weight: m(k('o.w')), bias: w(k('o.b')), y: b.h }, { M: rows, N: D, K: D }, { accumulate: true }),
          prepareRmsNorm(gpu, { x: b.h, weight: w(k('ln2.w')), y: b.x }, { rows, dim: D }, { eps: EPS }),
          prepareMatmul(gpu, { x: b.x, weight: m(k('gate_up.w')), bias: w(k('gate_up.b')), y: b.gu }, { M: rows, N: 2 * I, K: D }),
          prepareSwiglu(gpu, { x: b.gu, y: b.act }, { rows, dim: I }),
          prepareMatmul(
            gpu,
            { x: b.act, weight: m(k('down.w')), bias: w(k('down.b')), y: b.h },
            { M: rows, N: D, K: I },
            { accumulate: true },
          ),
        ]);
      }
      const M = unit * D;
      await add([
        prepareRmsNorm(gpu, { x: b.h, weight: w('merger.ln.w'), y: b.x }, { rows, dim: D }, { eps: EPS }),
        prepareMatmul(
          gpu,
          { x: { ...b.x, shape: [rows / unit, M] }, weight: m('merger.fc1.w'), bias: w('merger.fc1.b'), y: b.m1 },
          { M: rows / unit, N: M, K: M },
          { activation: 'gelu' },
        ),
        prepareMatmul(
          gpu,
          { x: b.m1, weight: m('merger.fc2.w'), bias: w('merger.fc2.b'), y: b.m2 },
          { M: rows / unit, N: v.outHiddenSize, K: M },
        ),
        prepareEmbeddingGather(
          gpu,
          { ids: b.unitOf, table: b.m2, out: b.out, errors: b.errors },
          { numTokens: units, vocab: rows / unit, dim: v.outHiddenSize },
        ),
      ]);
      const bytes = await gpu.encodeAndRead((e) => encodeDispatches(e, dispatches, 'qwen-vision'), b.errors.buffer, 0, 8, 'qwen-vision');
      const flags = new Uint32Array(bytes.buffer, bytes.byteOffset, 2);
      if (flags[0] !== 0) throw new InternalError(`qwen vision: ${flags[0]} out-of-range indices (largest ${flags[1]})`);
      return (await gpu.readF32(b.out)).slice();
    } finally {
      for (const d of dispatches) d.release();
      for (const s of scratches.values()) releaseVitAttentionScratch(gpu, s);
      for (const x of tensors) gpu.release(x);
    }
  }
}
