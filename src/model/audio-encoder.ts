// The audio side of Voxtral: a Whisper encoder + the frame-stacking projector, log-mel chunks in,
// LM-space embeddings out. Matches HF `VoxtralEncoder` followed by `VoxtralMultiModalProjector` as
// `VoxtralForConditionalGeneration.get_audio_features` chains them. Per batch of B chunks (each
// [mel, 2S] log-mel frames, S = max_source_positions):
//
//   mel [B, mel, 2S] -conv1 (k3, p1) + gelu-> c [B*2S, D] -conv2 (k3, s2, p1) + gelu-> h [B*S, D]
//   h += pos[t]                                                          (t = frame within its chunk)
//   per layer:  x = LN1(h); qkv = x·Wqkvᵀ + b (k has no bias); a = attn(qkv); h += a·Woᵀ + bo
//               x = LN2(h); m = gelu(x·W1ᵀ + b1); h += m·W2ᵀ + b2
//   y = LN(h) viewed as [B*S/k, k*D] (k consecutive frames per row) -> gelu(y·L1ᵀ) -> ·L2ᵀ -> [B*S/k, H]
//
// HF scales q by head_dim^-0.5 before the product and calls attention with scale 1; the attention here
// scales the product instead (the same value up to rounding). GELU is the exact (erf) one throughout.

import { InternalError, UnsupportedShapeError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { prepareConv1d } from '../kernels/conv1d';
import type { Dispatch } from '../kernels/dispatch';
import type { DispatchTimer } from '../kernels/dispatch-timer';
import { prepareLayerNorm } from '../kernels/layer-norm';
import type { MatmulIO, MatmulOptions, MatmulShape } from '../kernels/matmul';
import type { PieceRunner } from '../kernels/piece-runner';
import {
  chooseVitAttentionPlan,
  createVitAttentionScratch,
  releaseVitAttentionScratch,
  type VitAttentionScratch,
} from '../kernels/vit-attention';
import type { AudioConfig, ModelConfig } from './config';
import { padTo, prepareRowPiecedMatmul, runEncoderPass } from './encoder-pass';
import { type EncoderLayerSpec, planAppender, prepareEncoderLayers, prepareLearnedPositions } from './encoder-layer';
import type { ModelWeights } from './weights';

export interface AudioInput {
  /** [numChunks, numMelBins, 2 * maxSourcePositions] f32: each chunk's log-mel features. */
  features: Float32Array;
  numChunks: number;
}

export interface AudioOutput {
  /** [numChunks * tokensPerChunk, textHidden] f32, on the GPU; release with gpu.release(). */
  embeddings: Tensor;
  /** The encoder's output (after its final LayerNorm) [numChunks, S, D], when asked for. */
  towerOutput?: Float32Array;
}

interface BatchBuffers {
  batch: number;
  mel: Tensor;
  stem: Tensor;
  h: Tensor;
  x: Tensor;
  qkv: Tensor;
  attn: Tensor;
  mlp: Tensor;
  posIds: Tensor;
  pos: Tensor;
  mask: Tensor;
  hidden: Tensor;
  out: Tensor;
  errors: Tensor;
  attentionScratch?: VitAttentionScratch;
  dispatches: Dispatch[];
}

export class AudioEncoder {
  private plan: BatchBuffers | undefined;
  readonly audio: AudioConfig;
  /** Mel frames per chunk: 2 * max_source_positions (HF VoxtralEncoder's expected_seq_length). */
  readonly framesPerChunk: number;
  /**
   * Chunks per forward pass: the one asked for, lowered so that the pass's largest buffer (the MLP rows,
   * q|k|v, or conv2's im2col rows) fits one storage binding of this device (Voxtral-Mini: 31 MB a chunk).
   */
  readonly maxBatch: number;

  constructor(
    private readonly gpu: GpuContext,
    private readonly weights: ModelWeights,
    readonly config: ModelConfig,
    /** Chunks per forward pass asked for (memory grows linearly with it; see maxBatch). */
    requestedBatch = 1,
    /** Dispatches per submission while encoding freely (0 = one submission per batch); see VisionEncoder. */
    readonly dispatchesPerSubmit = 0,
    /** Cut each matmul into dispatches of at most this many rows (0 = whole), for paced encoding; see VisionEncoder. */
    readonly rowsPerPiece = 0,
  ) {
    if (!config.audio) throw new InternalError(`AudioEncoder: model_type '${config.modelType}' has no audio tower`);
    if (rowsPerPiece % 64 !== 0)
      throw new InternalError(`AudioEncoder: rowsPerPiece must be a multiple of 64 (row views stay 256-byte aligned), got ${rowsPerPiece}`);
    this.audio = config.audio;
    this.framesPerChunk = 2 * config.audio.encoder.maxSourcePositions;
    const e = config.audio.encoder;
    const perChunk = 4 * e.maxSourcePositions * Math.max(e.intermediateSize, 3 * e.hiddenSize);
    this.maxBatch = Math.max(1, Math.min(requestedBatch, Math.floor(gpu.limits.maxStorageBufferBindingSize / perChunk)));
  }

  private async buildPlan(batch: number): Promise<BatchBuffers> {
    const { gpu } = this;
    const e = this.audio.encoder;
    const D = e.hiddenSize;
    const S = e.maxSourcePositions;
    const rows = batch * S;
    const tokens = batch * this.audio.tokensPerChunk;
    const H = this.config.text.hiddenSize;
    const t = (shape: number[], label: string, dtype: 'f32' | 'u32' = 'f32') => gpu.createTensor(shape, dtype, `audio.${label}`);
    const b: BatchBuffers = {
      batch,
      mel: t([batch, e.numMelBins, this.framesPerChunk], 'mel'),
      stem: t([batch * this.framesPerChunk, D], 'stem'),
      h: t([rows, D], 'h'),
      x: t([rows, D], 'x'),
      qkv: t([rows, 3 * D], 'qkv'),
      attn: t([rows, D], 'attn'),
      mlp: t([rows, e.intermediateSize], 'mlp'),
      posIds: t([rows], 'pos-ids', 'u32'),
      pos: t([rows, D], 'pos'),
      mask: t([rows], 'mask', 'u32'),
      hidden: t([tokens, H], 'projector-hidden'),
      out: t([tokens, H], 'out'),
      errors: t([2], 'errors', 'u32'),
      dispatches: [],
    };
    try {
      await this.prepareDispatches(b);
    } catch (err) {
      this.releaseBuffers(b);
      throw err;
    }
    return b;
  }

  private async prepareDispatches(b: BatchBuffers): Promise<void> {
    const { gpu, weights } = this;
    const e = this.audio.encoder;
    const D = e.hiddenSize;
    const S = e.maxSourcePositions;
    const batch = b.batch;
    const rows = batch * S;
    const H = this.config.text.hiddenSize;
    const k = this.audio.projector.stack;
    const tokens = batch * this.audio.tokensPerChunk;
    const attentionShape = { batch, tokens: S, heads: e.numHeads, headDim: e.headDim };
    if (chooseVitAttentionPlan(gpu) === 'matmuls') b.attentionScratch = createVitAttentionScratch(gpu, attentionShape);
    const eps = e.layerNormEps;
    const add = planAppender(b.dispatches);
    const gelu = { matmul: { activation: 'gelu' as const } };
    await add([
      prepareConv1d(
        gpu,
        { x: b.mel, weight: weights.matrix('audio.conv1.w'), bias: weights.get('audio.conv1.b'), y: b.stem },
        {
          batch,
          channels: e.numMelBins,
          length: this.framesPerChunk,
          kernel: 3,
          stride: 1,
          padding: 1,
          outDim: D,
          layout: 'channels-first',
        },
        gelu,
      ),
      prepareConv1d(
        gpu,
        {
          x: { ...b.stem, shape: [batch, this.framesPerChunk, D] },
          weight: weights.matrix('audio.conv2.w'),
          bias: weights.get('audio.conv2.b'),
          y: b.h,
        },
        { batch, channels: D, length: this.framesPerChunk, kernel: 3, stride: 2, padding: 1, outDim: D, layout: 'time-first' },
        gelu,
      ),
      ...prepareLearnedPositions(gpu, weights.matrix('audio.pos'), b, { rows, positions: S, dim: D }),
    ]);
    const layer: EncoderLayerSpec = {
      tower: 'audio',
      numLayers: e.numLayers,
      hiddenSize: D,
      intermediateSize: e.intermediateSize,
      layerNormEps: eps,
      activation: 'gelu',
      attention: attentionShape,
      headsPerPiece: this.rowsPerPiece > 0 ? 1 : 0,
    };
    await prepareEncoderLayers(gpu, weights, layer, b, rows, this.matmul.bind(this), add);
    await add([
      prepareLayerNorm(
        gpu,
        { x: b.h, weight: weights.get('audio.post_ln.w'), bias: weights.get('audio.post_ln.b'), y: b.x },
        { rows, dim: D },
        { eps },
      ),
      // [B*S, D] read as [B*S/k, k*D]: k consecutive frames of one chunk per row (S is a multiple of k).
      this.matmul(
        { x: { ...b.x, shape: [tokens, k * D] }, weight: weights.matrix('projector.linear1.w'), y: b.hidden },
        { M: tokens, N: H, K: k * D },
        { activation: 'gelu' },
      ),
      this.matmul({ x: b.hidden, weight: weights.matrix('projector.linear2.w'), y: b.out }, { M: tokens, N: H, K: H }),
    ]);
  }

  /** A matmul of the pass (row-pieced for pacing when rowsPerPiece > 0: encoder-pass.ts). */
  private matmul(io: MatmulIO, shape: MatmulShape, options: MatmulOptions = {}): Promise<Dispatch> {
    return prepareRowPiecedMatmul(this.gpu, io, shape, options, this.rowsPerPiece);
  }

  /** Compile the forward pass's pipelines now (a one-chunk plan is built and released). */
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

  /** Encode every chunk; chunks run in batches of at most maxBatch. */
  async encode(
    input: AudioInput,
    options: { captureTowerOutput?: boolean; runner?: PieceRunner; timer?: DispatchTimer } = {},
  ): Promise<AudioOutput> {
    const { gpu } = this;
    const e = this.audio.encoder;
    const S = e.maxSourcePositions;
    const chunkElems = e.numMelBins * this.framesPerChunk;
    if (!Number.isInteger(input.numChunks) || input.numChunks < 1 || input.features.length !== input.numChunks * chunkElems) {
      throw new UnsupportedShapeError(
        `audio input holds ${input.features.length} values but ${input.numChunks} chunks of ${e.numMelBins} mel bins x ${this.framesPerChunk} frames need ${input.numChunks * chunkElems}`,
      );
    }
    const seqLen = this.audio.tokensPerChunk;
    const H = this.config.text.hiddenSize;
    const embeddings = gpu.createTensor([input.numChunks * seqLen, H], 'f32', 'audio-embeddings');
    const tower = options.captureTowerOutput ? new Float32Array(input.numChunks * S * e.hiddenSize) : undefined;
    try {
      for (let start = 0; start < input.numChunks; start += this.maxBatch) {
        const batch = Math.min(this.maxBatch, input.numChunks - start);
        const b = await this.planFor(Math.min(this.maxBatch, input.numChunks));
        gpu.write(b.mel, padTo(input.features.subarray(start * chunkElems, (start + batch) * chunkElems), b.batch * chunkElems));
        const ids = new Uint32Array(b.batch * S);
        for (let i = 0; i < ids.length; i++) ids[i] = i % S;
        gpu.write(b.posIds, ids);
        gpu.write(b.mask, new Uint32Array(b.batch * S).fill(1));
        const rowBytes = H * 4;
        await runEncoderPass(gpu, b.dispatches, 'audio-encoder', {
          runner: options.runner,
          timer: options.timer,
          dispatchesPerSubmit: this.dispatchesPerSubmit,
          copyOut: (encoder) =>
            encoder.copyBufferToBuffer(b.out.buffer, 0, embeddings.buffer, start * seqLen * rowBytes, batch * seqLen * rowBytes),
        });
        if (tower) {
          const bytes = await gpu.readBytes(b.x.buffer, 0, batch * S * e.hiddenSize * 4);
          tower.set(new Float32Array(bytes.buffer, bytes.byteOffset, batch * S * e.hiddenSize), start * S * e.hiddenSize);
        }
      }
      await gpu.sync();
    } catch (err) {
      gpu.release(embeddings);
      throw err;
    }
    return { embeddings, towerOutput: tower };
  }

  destroy(): void {
    this.releasePlan();
  }
}
