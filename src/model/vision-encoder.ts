// The vision side of Idefics3 / SmolVLM: SigLIP tower + connector, tiles in, LM-space embeddings out.
// Matches HF `Idefics3VisionTransformer` (embeddings -> encoder layers -> post_layernorm) followed by
// `Idefics3Connector` (pixel_shuffle -> modality_projection). Per batch of B tiles (P patches each):
//
//   pixels [B,3,S,S] -patch-embed-> h [B*P, D] += pos[ids]          (ids from each tile's patch mask)
//   per layer:  x = LN1(h); qkv = x·Wqkvᵀ + b; a = attn(qkv, mask); h += a·Woᵀ + bo
//               x = LN2(h); m = gelu(x·W1ᵀ + b1); h += m·W2ᵀ + b2
//   y = postLN(h) -pixel-shuffle-> [B, P/s², D s²] -·Wcᵀ-> [B * P/s², H]
//
// One command buffer per batch. Buffers are sized for the largest batch and reused.

import { InternalError, UnsupportedShapeError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import type { Dispatch } from '../kernels/dispatch';
import type { DispatchTimer } from '../kernels/dispatch-timer';
import type { PieceRunner } from '../kernels/piece-runner';
import { prepareLayerNorm } from '../kernels/layer-norm';
import type { MatmulIO, MatmulOptions, MatmulShape } from '../kernels/matmul';
import { preparePatchEmbed } from '../kernels/patch-embed';
import { preparePixelShuffle } from '../kernels/pixel-shuffle';
import {
  chooseVitAttentionPlan,
  createVitAttentionScratch,
  releaseVitAttentionScratch,
  type VitAttentionScratch,
} from '../kernels/vit-attention';
import { requireVision, type ModelConfig, type VisionConfig } from './config';
import { visionPositionIds } from './vision-positions';
import { padTo, prepareRowPiecedMatmul, runEncoderPass } from './encoder-pass';
import { type EncoderLayerSpec, planAppender, prepareEncoderLayers, prepareLearnedPositions } from './encoder-layer';
import type { ModelWeights } from './weights';

export interface VisionInput {
  /** [numTiles, C, S, S] f32, rescaled and normalised. */
  pixels: Float32Array;
  numTiles: number;
  /** [numTiles, P] (P = patches per tile), 1 = real patch; undefined = every patch is real. */
  patchMask?: Uint8Array;
}

export interface VisionOutput {
  /** [numTiles * imageSeqLen, textHidden] f32, on the GPU; release with gpu.release(). */
  embeddings: Tensor;
  /** The tower's output (after post_layernorm) [numTiles, P, D], when asked for. */
  towerOutput?: Float32Array;
}

interface BatchBuffers {
  batch: number;
  pixels: Tensor;
  h: Tensor;
  x: Tensor;
  qkv: Tensor;
  attn: Tensor;
  mlp: Tensor;
  posIds: Tensor;
  pos: Tensor;
  mask: Tensor;
  shuffled: Tensor;
  out: Tensor;
  errors: Tensor;
  /** The attention's scratch when it runs as matmuls: one for all layers (they run one after another). */
  attentionScratch?: VitAttentionScratch;
  dispatches: Dispatch[];
}

export class VisionEncoder {
  private plan: BatchBuffers | undefined;
  readonly patchesPerTile: number;
  readonly vision: VisionConfig;

  constructor(
    private readonly gpu: GpuContext,
    private readonly weights: ModelWeights,
    readonly config: ModelConfig,
    /** Tiles per forward pass (memory grows linearly with it). */
    readonly maxBatch = 4,
    /**
     * Dispatches per submission, waiting for each to finish before the next (0 = one submission per
     * batch). Smaller pieces let other work on the same GPU (another device's decode steps, in a shared
     * GPU process) run between them instead of queueing behind a whole forward pass.
     */
    readonly dispatchesPerSubmit = 0,
    /**
     * Cut each matmul into dispatches of at most this many rows (0 = whole), and attention (where it runs
     * as matmuls) into one piece per head, so that paced encoding (a PieceRunner) runs in pieces short
     * enough to fit between two decode steps. Unpaced encodes run them whole all the same (each is
     * prepared both ways).
     */
    readonly rowsPerPiece = 0,
  ) {
    if (rowsPerPiece % 64 !== 0)
      throw new InternalError(
        `VisionEncoder: rowsPerPiece must be a multiple of 64 (row views stay 256-byte aligned), got ${rowsPerPiece}`,
      );
    this.vision = requireVision(config);
    this.patchesPerTile = this.vision.patchesPerSide ** 2;
  }

  private async buildPlan(batch: number): Promise<BatchBuffers> {
    const { gpu } = this;
    const v = this.vision;
    const D = v.hiddenSize;
    const P = this.patchesPerTile;
    const rows = batch * P;
    const s = this.vision.scaleFactor;
    const H = this.config.text.hiddenSize;
    const t = (shape: number[], label: string, dtype: 'f32' | 'u32' = 'f32') => gpu.createTensor(shape, dtype, `vision.${label}`);
    const b: BatchBuffers = {
      batch,
      pixels: t([batch, v.numChannels, v.imageSize, v.imageSize], 'pixels'),
      h: t([rows, D], 'h'),
      x: t([rows, D], 'x'),
      qkv: t([rows, 3 * D], 'qkv'),
      attn: t([rows, D], 'attn'),
      mlp: t([rows, v.intermediateSize], 'mlp'),
      posIds: t([rows], 'pos-ids', 'u32'),
      pos: t([rows, D], 'pos'),
      mask: t([rows], 'mask', 'u32'),
      shuffled: t([batch, P / (s * s), D * s * s], 'shuffled'),
      out: t([batch * (P / (s * s)), H], 'out'),
      errors: t([2], 'errors', 'u32'),
      dispatches: [],
    };
    try {
      await this.prepareDispatches(b);
    } catch (e) {
      this.releaseBuffers(b); // what was prepared and allocated for the plan, not only on success
      throw e;
    }
    return b;
  }

  /** The forward pass's dispatches over a plan's buffers, into b.dispatches (and its attention scratch). */
  private async prepareDispatches(b: BatchBuffers): Promise<void> {
    const { gpu, weights } = this;
    const v = this.vision;
    const D = v.hiddenSize;
    const P = this.patchesPerTile;
    const batch = b.batch;
    const rows = batch * P;
    const s = this.vision.scaleFactor;
    const H = this.config.text.hiddenSize;
    const attentionShape = { batch, tokens: P, heads: v.numHeads, headDim: v.headDim };
    if (chooseVitAttentionPlan(gpu) === 'matmuls') b.attentionScratch = createVitAttentionScratch(gpu, attentionShape);
    const eps = v.layerNormEps;
    const add = planAppender(b.dispatches);
    await add([
      preparePatchEmbed(
        gpu,
        { pixels: b.pixels, weight: weights.matrix('vision.patch.w'), bias: weights.get('vision.patch.b'), y: b.h },
        { batch, channels: v.numChannels, height: v.imageSize, width: v.imageSize, patch: v.patchSize, outDim: D },
      ),
      ...prepareLearnedPositions(gpu, weights.matrix('vision.pos'), b, { rows, positions: P, dim: D }),
    ]);
    const layer: EncoderLayerSpec = {
      tower: 'vision',
      numLayers: v.numLayers,
      hiddenSize: D,
      intermediateSize: v.intermediateSize,
      layerNormEps: eps,
      activation: 'gelu_tanh',
      attention: attentionShape,
      // Paced pieces of attention: one head at a time (as short as a row block).
      headsPerPiece: this.rowsPerPiece > 0 ? 1 : 0,
    };
    await prepareEncoderLayers(gpu, weights, layer, b, rows, this.matmul.bind(this), add);
    await add([
      prepareLayerNorm(
        gpu,
        { x: b.h, weight: weights.get('vision.post_ln.w'), bias: weights.get('vision.post_ln.b'), y: b.x },
        { rows, dim: D },
        { eps },
      ),
      preparePixelShuffle(gpu, { x: { ...b.x, shape: [batch, P, D] }, out: b.shuffled }, { batch, seq: P, embed: D, scale: s }),
      this.matmul(
        { x: { ...b.shuffled, shape: [batch * (P / (s * s)), D * s * s] }, weight: weights.matrix('connector.w'), y: b.out },
        { M: batch * (P / (s * s)), N: H, K: D * s * s },
      ),
    ]);
  }

  /** A matmul of the pass (row-pieced for pacing when rowsPerPiece > 0: encoder-pass.ts). */
  private matmul(io: MatmulIO, shape: MatmulShape, options: MatmulOptions = {}): Promise<Dispatch> {
    return prepareRowPiecedMatmul(this.gpu, io, shape, options, this.rowsPerPiece);
  }

  /**
   * Compile the forward pass's pipelines now (a plan for one tile is built and released: the pipelines
   * stay in the device's cache, the buffers are allocated again by the first encode). On a CPU adapter
   * the compiles take seconds, which the first image would otherwise wait for; every batch size uses the
   * same pipelines.
   */
  async compile(): Promise<void> {
    if (this.plan) return;
    this.releaseBuffers(await this.buildPlan(1));
  }

  private async planFor(batch: number): Promise<BatchBuffers> {
    if (this.plan && this.plan.batch === batch) return this.plan;
    this.releasePlan();
    this.plan = await this.buildPlan(batch);
    return this.plan;
  }

  private releasePlan(): void {
    if (!this.plan) return;
    this.releaseBuffers(this.plan);
    this.plan = undefined;
  }

  private releaseBuffers(plan: BatchBuffers): void {
    for (const d of plan.dispatches) d.release();
    for (const t of Object.values(plan)) if (t && typeof t === 'object' && 'buffer' in t) this.gpu.release(t as Tensor);
    if (plan.attentionScratch) releaseVitAttentionScratch(this.gpu, plan.attentionScratch);
  }

  /**
   * Encode every tile; tiles run in batches of at most maxBatch. With a timer (profiles only) each dispatch
   * is timed on its own (dispatch-timer.ts) instead of being paced or grouped; the results are the same.
   */
  async encode(
    input: VisionInput,
    options: { captureTowerOutput?: boolean; runner?: PieceRunner; timer?: DispatchTimer } = {},
  ): Promise<VisionOutput> {
    const { gpu } = this;
    const v = this.vision;
    const P = this.patchesPerTile;
    const tileElems = v.numChannels * v.imageSize * v.imageSize;
    if (input.pixels.length !== input.numTiles * tileElems) {
      throw new UnsupportedShapeError(
        `vision input holds ${input.pixels.length} values but ${input.numTiles} tiles of ${v.numChannels}x${v.imageSize}x${v.imageSize} need ${input.numTiles * tileElems}`,
      );
    }
    const seqLen = this.vision.imageSeqLen;
    const H = this.config.text.hiddenSize;
    const embeddings = gpu.createTensor([input.numTiles * seqLen, H], 'f32', 'image-embeddings');
    const tower = options.captureTowerOutput ? new Float32Array(input.numTiles * P * v.hiddenSize) : undefined;
    try {
      for (let start = 0; start < input.numTiles; start += this.maxBatch) {
        const batch = Math.min(this.maxBatch, input.numTiles - start);
        const b = await this.planFor(Math.min(this.maxBatch, input.numTiles));
        gpu.write(b.pixels, padTo(input.pixels.subarray(start * tileElems, (start + batch) * tileElems), b.batch * tileElems));
        const ids = new Uint32Array(b.batch * P);
        const mask = new Uint32Array(b.batch * P).fill(1);
        for (let i = 0; i < batch; i++) {
          const m = input.patchMask?.subarray((start + i) * P, (start + i + 1) * P);
          ids.set(visionPositionIds(v.patchesPerSide, v.patchesPerSide, v.patchesPerSide, m), i * P);
          if (m) for (let j = 0; j < P; j++) mask[i * P + j] = m[j] ? 1 : 0;
        }
        gpu.write(b.posIds, ids);
        gpu.write(b.mask, mask);
        const rowBytes = H * 4;
        await runEncoderPass(gpu, b.dispatches, 'vision-encoder', {
          runner: options.runner,
          timer: options.timer,
          dispatchesPerSubmit: this.dispatchesPerSubmit,
          copyOut: (encoder) =>
            encoder.copyBufferToBuffer(b.out.buffer, 0, embeddings.buffer, start * seqLen * rowBytes, batch * seqLen * rowBytes),
        });
        if (tower) {
          const bytes = await gpu.readBytes(b.x.buffer, 0, batch * P * v.hiddenSize * 4);
          tower.set(new Float32Array(bytes.buffer, bytes.byteOffset, batch * P * v.hiddenSize), start * P * v.hiddenSize);
        }
      }
      await gpu.sync();
    } catch (e) {
      gpu.release(embeddings);
      throw e;
    }
    return { embeddings, towerOutput: tower };
  }

  destroy(): void {
    this.releasePlan();
  }
}
