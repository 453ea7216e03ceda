// The Qwen-VL vision towers: patch rows in, one LM-space row per merge unit out (and, for Qwen3-VL, one
// row per unit for each DeepStack level). One image or video (one patch grid) per pass, laid out window by
// window (qwen-windows.ts; Qwen3-VL: one window per frame).
//
//   Qwen2.5-VL (HF `Qwen2_5_VisionTransformerPretrainedModel`)
//   patches [rows, C·T·P·P] -·Wpatchᵀ-> h [rows, D]
//   per layer:  x = rms1(h); qkv = x·Wqkvᵀ + b; rope2d(q, k; each row's patch row and column)
//               a = attn(qkv; within each window, or each frame in the full-attention layers; padding masked)
//               h += a·Woᵀ + bo; x = rms2(h); h += (silu(x·Wgᵀ + bg) * (x·Wuᵀ + bu))·Wdᵀ + bd
//   merger:     x = rms(h) read as [rows / m², m²·D]; y = gelu(x·W1ᵀ + b1)·W2ᵀ + b2
//
//   Qwen3-VL (HF `Qwen3VLVisionModel`)
//   h = patches·Wpatchᵀ + b + bilinear(learned positions)            (qwen-positions.ts)
//   per layer:  the same attention with LayerNorm (biases), each frame; h += fc2(gelu_tanh(fc1(LN2(h))))
//               after a DeepStack tap: level k = fc2(gelu(fc1(LN(h read as [rows / m², m²·D]))))
//   merger:     LN(h) over D, read as [rows / m², m²·D], fc1 + gelu, fc2
//
//   out [units, outHidden] = the rows of the real units, in the processor's order
//
// The 2-D rotary is the rope kernel's M-RoPE with no t section: the first quarter of each head's
// frequencies turns by the patch's row, the second by its column, over a table whose frequencies restart
// at the quarter (theta 10000 over head_dim / 2, as HF `Qwen2_5_VisionRotaryEmbedding`). Buffers and
// plans are made for each pass's grid and released after it.

import { InternalError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import type { Dispatch } from '../kernels/dispatch';
import type { DispatchTimer } from '../kernels/dispatch-timer';
import { prepareBilinearRows } from '../kernels/bilinear-rows';
import { prepareEmbeddingGather } from '../kernels/embedding-gather';
import { prepareLayerNorm } from '../kernels/layer-norm';
import type { Activation } from '../kernels/activations';
import type { MatmulIO, MatmulOptions, MatmulShape } from '../kernels/matmul';
import type { PieceRunner } from '../kernels/piece-runner';
import { prepareRmsNorm } from '../kernels/rms-norm';
import { prepareRope } from '../kernels/rope';
import { ropeInverseFrequencies } from '../kernels/rope-tables';
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
import { prepareRowPiecedMatmul, runEncoderPass } from './encoder-pass';
import { bilinearCorners } from './qwen-positions';
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

export interface QwenVisionOutput {
  /** [units, outHidden]: one LM input row per merge unit, in the processor's order. */
  embeddings: Float32Array;
  /** Qwen3-VL: one [units, outHidden] level per DeepStack tap, the decoder's additions; [] for Qwen2.5-VL. */
  deepstack: Float32Array[];
}

export class QwenVisionEncoder {
  readonly rowLength: number;

  constructor(
    private readonly gpu: GpuContext,
    private readonly weights: ModelWeights,
    readonly vision: QwenVisionConfig,
    /** Dispatches per submission of a pass that nothing paces (0: the whole pass at once). */
    readonly dispatchesPerSubmit = 0,
    /**
     * A pass that starts paced (requests are decoding: PieceRunner.isPaced) cuts its matmuls into row blocks
     * of this many rows and its attention into one piece per head, so each piece fits between decode steps
     * (0: whole dispatches, one per turn). A multiple of 64 (row views stay 256-byte aligned).
     */
    readonly rowsPerPiece = 0,
  ) {
    if (rowsPerPiece % 64 !== 0) {
      throw new InternalError(
        `QwenVisionEncoder: rowsPerPiece must be a multiple of 64 (row views stay 256-byte aligned), got ${rowsPerPiece}`,
      );
    }
    this.rowLength = vision.inChannels * vision.temporalPatchSize * vision.patchSize ** 2;
  }

  /**
   * Compile the pass's pipelines now, by encoding a blank image of one window (Qwen2.5-VL) or 4 × 4
   * merge units (Qwen3-VL): on a CPU adapter the compiles take seconds, which the first image would
   * otherwise wait for. Its 16 units keep the mergers' matmuls off the decode-row plans, as an image's
   * are; a grid whose matmuls pick other kernel variants compiles those when it comes.
   */
  async compile(): Promise<void> {
    const v = this.vision;
    const side = v.kind === 'qwen2_5_vl' ? v.windowSize / v.patchSize : 4 * v.mergeSize;
    const grid = { t: 1, h: side, w: side };
    await this.encode(new Float32Array(side * side * this.rowLength), grid);
  }

  /** Rows of the LM input for one grid: one per merge unit. */
  tokensFor(grid: PatchGrid): number {
    return (grid.t * grid.h * grid.w) / this.vision.mergeSize ** 2;
  }

  /**
   * [grid.t·grid.h·grid.w, rowLength] patch rows (processor order) → the LM rows of that grid. With a
   * runner, the pass goes piece by piece while the runner is paced (encoder-pass.ts); with a timer, dispatch
   * by dispatch, each timed.
   */
  async encode(
    patches: Float32Array,
    grid: PatchGrid,
    options: { runner?: PieceRunner; timer?: DispatchTimer } = {},
  ): Promise<QwenVisionOutput> {
    const v = this.vision;
    const numPatches = grid.t * grid.h * grid.w;
    if (patches.length !== numPatches * this.rowLength) {
      throw new InternalError(
        `qwen vision: ${patches.length} values for a ${grid.t} x ${grid.h} x ${grid.w} grid of ${this.rowLength}-value patch rows`,
      );
    }
    const windows = v.kind === 'qwen2_5_vl' ? v.windowSize / (v.patchSize * v.mergeSize) : 'frame';
    const layout = windowLayout(grid, v.mergeSize, windows);
    const { gpu, weights } = this;
    const D = v.hiddenSize;
    const I = v.intermediateSize;
    const unit = v.mergeSize ** 2;
    const M = unit * D;
    const rows = layout.rows;
    const units = layout.unitOf.length;
    const taps = v.kind === 'qwen3_vl' ? v.deepstackTaps : [];
    const maxPos = Math.max(grid.h, grid.w);
    const tensors: Tensor[] = [];
    const t = (shape: number[], label: string) => {
      const x = gpu.createTensor(shape, 'f32', `qwen-vision.${label}`);
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
      errors: up(new Uint32Array(2), [2], 'errors'),
      h: t([rows, D], 'h'),
      x: t([rows, D], 'x'),
      qkv: t([rows, 3 * D], 'qkv'),
      attn: t([rows, D], 'attn'),
      mlp: t([rows, v.kind === 'qwen2_5_vl' ? 2 * I : I], 'mlp'),
      act: v.kind === 'qwen2_5_vl' ? t([rows, I], 'act') : undefined,
      folded: taps.length > 0 ? t([rows / unit, M], 'folded') : undefined,
      m1: t([rows / unit, M], 'merger-hidden'),
      m2: t([rows / unit, v.outHiddenSize], 'merger-out'),
      out: t([(1 + taps.length) * units, v.outHiddenSize], 'out'),
    };
    const windowShape: VitAttentionShape = {
      batch: layout.frames * layout.windowsPerFrame,
      tokens: layout.windowRows,
      heads: v.numHeads,
      headDim: v.headDim,
    };
    const frameShape: VitAttentionShape = { ...windowShape, batch: layout.frames, tokens: layout.windowsPerFrame * layout.windowRows };
    const full = (l: number) => v.kind === 'qwen3_vl' || v.fullAttentionLayers.includes(l);
    const scratches = new Map<VitAttentionShape, VitAttentionScratch>();
    if (chooseVitAttentionPlan(gpu) === 'matmuls') {
      for (let l = 0; l < v.numLayers; l++) {
        const shape = full(l) ? frameShape : windowShape;
        if (!scratches.has(shape)) scratches.set(shape, createVitAttentionScratch(gpu, shape));
      }
    }
    // Pieces are cut when the pass starts paced: preparing every row block of every matmul costs host time
    // a free-running pass (the common case) has no use for.
    const pieceRows = options.runner?.isPaced ? this.rowsPerPiece : 0;
    const mm = (io: MatmulIO, shape: MatmulShape, mmOptions: MatmulOptions = {}) =>
      prepareRowPiecedMatmul(gpu, io, shape, mmOptions, pieceRows);
    const dispatches: Dispatch[] = [];
    const add = planAppender(dispatches);
    const w = (key: string) => weights.get(`vision.${key}`);
    const m = (key: string) => weights.matrix(`vision.${key}`);
    /** A merger's MLP on its normed, folded rows x [rows / m², M]: fc1 + gelu, fc2, the real units into level `level` of out. */
    const merger = (key: string, x: Tensor, level: number): Promise<Dispatch>[] => [
      mm({ x, weight: m(`${key}.fc1.w`), bias: w(`${key}.fc1.b`), y: b.m1 }, { M: rows / unit, N: M, K: M }, { activation: 'gelu' }),
      mm({ x: b.m1, weight: m(`${key}.fc2.w`), bias: w(`${key}.fc2.b`), y: b.m2 }, { M: rows / unit, N: v.outHiddenSize, K: M }),
      prepareEmbeddingGather(
        gpu,
        {
          ids: b.unitOf,
          table: b.m2,
          out: { ...b.out, shape: [units, v.outHiddenSize], offsetBytes: b.out.offsetBytes + level * units * v.outHiddenSize * 4 },
          errors: b.errors,
        },
        { numTokens: units, vocab: rows / unit, dim: v.outHiddenSize },
      ),
    ];
    try {
      const stem: Promise<Dispatch>[] = [
        mm(
          { x: b.patches, weight: m('patch.w'), bias: v.kind === 'qwen3_vl' ? w('patch.b') : undefined, y: b.h },
          { M: rows, N: D, K: this.rowLength },
        ),
      ];
      if (v.kind === 'qwen3_vl') {
        // The frame layout keeps the processor's order, so the corners of patch p are those of row p.
        const corners = bilinearCorners(grid, v.gridPerSide, v.mergeSize);
        stem.push(
          prepareBilinearRows(
            gpu,
            {
              table: { ...w('pos'), shape: [v.gridPerSide ** 2, D] },
              idx: up(corners.idx, [4, rows], 'pos-corners'),
              w: up(corners.w, [4, rows], 'pos-weights'),
              out: b.h,
            },
            { rows, dim: D, tableRows: v.gridPerSide ** 2 },
          ),
        );
      }
      await add(stem);
      for (let l = 0; l < v.numLayers; l++) {
        const k = (name: string) => `layers.${l}.${name}`;
        const shape = full(l) ? frameShape : windowShape;
        const norm = (which: 'ln1' | 'ln2') =>
          v.kind === 'qwen2_5_vl'
            ? prepareRmsNorm(gpu, { x: b.h, weight: w(k(`${which}.w`)), y: b.x }, { rows, dim: D }, { eps: EPS })
            : prepareLayerNorm(
                gpu,
                { x: b.h, weight: w(k(`${which}.w`)), bias: w(k(`${which}.b`)), y: b.x },
                { rows, dim: D },
                { eps: EPS },
              );
        const mlp: Promise<Dispatch>[] =
          v.kind === 'qwen2_5_vl'
            ? [
                mm({ x: b.x, weight: m(k('gate_up.w')), bias: w(k('gate_up.b')), y: b.mlp }, { M: rows, N: 2 * I, K: D }),
                prepareSwiglu(gpu, { x: b.mlp, y: b.act! }, { rows, dim: I }),
                mm({ x: b.act!, weight: m(k('down.w')), bias: w(k('down.b')), y: b.h }, { M: rows, N: D, K: I }, { accumulate: true }),
              ]
            : [
                mm(
                  { x: b.x, weight: m(k('fc1.w')), bias: w(k('fc1.b')), y: b.mlp },
                  { M: rows, N: I, K: D },
                  { activation: 'gelu_tanh' satisfies Activation },
                ),
                mm({ x: b.mlp, weight: m(k('fc2.w')), bias: w(k('fc2.b')), y: b.h }, { M: rows, N: D, K: I }, { accumulate: true }),
              ];
        await add([
          norm('ln1'),
          mm({ x: b.x, weight: m(k('qkv.w')), bias: w(k('qkv.b')), y: b.qkv }, { M: rows, N: 3 * D, K: D }),
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
          prepareVitAttention(gpu, { qkv: b.qkv, mask: b.mask, out: b.attn }, shape, {
            scratch: scratches.get(shape),
            headsPerPiece: pieceRows > 0 ? 1 : 0,
          }),
          mm({ x: b.attn, weight: m(k('o.w')), bias: w(k('o.b')), y: b.h }, { M: rows, N: D, K: D }, { accumulate: true }),
          norm('ln2'),
          ...mlp,
        ]);
        const tap = taps.indexOf(l);
        if (tap >= 0) {
          // The DeepStack merger folds first and norms the m²·D row: h copied into `folded` by the norm.
          await add([
            prepareLayerNorm(
              gpu,
              {
                x: { ...b.h, shape: [rows / unit, M] },
                weight: w(`deepstack.${tap}.ln.w`),
                bias: w(`deepstack.${tap}.ln.b`),
                y: b.folded!,
              },
              { rows: rows / unit, dim: M },
              { eps: EPS },
            ),
            ...merger(`deepstack.${tap}`, b.folded!, 1 + tap),
          ]);
        }
      }
      await add([
        v.kind === 'qwen2_5_vl'
          ? prepareRmsNorm(gpu, { x: b.h, weight: w('merger.ln.w'), y: b.x }, { rows, dim: D }, { eps: EPS })
          : prepareLayerNorm(gpu, { x: b.h, weight: w('merger.ln.w'), bias: w('merger.ln.b'), y: b.x }, { rows, dim: D }, { eps: EPS }),
        ...merger('merger', { ...b.x, shape: [rows / unit, M] }, 0),
      ]);
      await runEncoderPass(gpu, dispatches, 'qwen-vision', {
        runner: options.runner,
        timer: options.timer,
        dispatchesPerSubmit: this.dispatchesPerSubmit,
        copyOut: () => {},
      });
      const bytes = await gpu.readBytes(b.errors.buffer, 0, 8);
      const flags = new Uint32Array(bytes.buffer, bytes.byteOffset, 2);
      if (flags[0] !== 0) throw new InternalError(`qwen vision: ${flags[0]} out-of-range indices (largest ${flags[1]})`);
      const all = await gpu.readF32(b.out);
      const level = (i: number) => all.slice(i * units * v.outHiddenSize, (i + 1) * units * v.outHiddenSize);
      return { embeddings: level(0), deepstack: taps.map((_, i) => level(1 + i)) };
    } finally {
      for (const d of dispatches) d.release();
      for (const s of scratches.values()) releaseVitAttentionScratch(gpu, s);
      for (const x of tensors) gpu.release(x);
    }
  }
}
