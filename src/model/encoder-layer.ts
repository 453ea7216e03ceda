// The pre-LN transformer encoder layer both towers repeat: the vision tower's (HF Idefics3's SigLIP layer)
// and the audio encoder's (HF VoxtralEncoder's Whisper layer). Its weights are `<tower>.layers.<l>.*`
// (src/model/weight-layout.ts):
//   x = LN1(h); qkv = x·Wqkv + bqkv; a = attention(qkv); h += a·Wo + bo
//   x = LN2(h); m = act(x·W1 + b1); h += m·W2 + b2
// The residual adds are the matmuls' epilogues. The towers differ in the activation (tanh-approximated
// GELU in SigLIP, exact GELU in Whisper) and in what comes before and after the layers.

import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import type { Activation } from '../kernels/activations';
import { prepareAll, type Dispatch } from '../kernels/dispatch';
import { prepareEmbeddingGather } from '../kernels/embedding-gather';
import { prepareLayerNorm } from '../kernels/layer-norm';
import type { MatmulIO, MatmulOptions, MatmulShape } from '../kernels/matmul';
import { prepareResidualAdd } from '../kernels/residual-add';
import { prepareVitAttention, type VitAttentionScratch, type VitAttentionShape } from '../kernels/vit-attention';
import type { ModelWeights } from './weights';

/** The activations of one pass that the layers read and write. */
export interface EncoderLayerBuffers {
  /** [rows, D] the residual stream. */
  h: Tensor;
  /** [rows, D] a norm's output. */
  x: Tensor;
  qkv: Tensor;
  attn: Tensor;
  mlp: Tensor;
  mask: Tensor;
  /** The attention's scratch when it runs as matmuls: one for all layers (they run one after another). */
  attentionScratch?: VitAttentionScratch;
}

export interface EncoderLayerSpec {
  /** The weights' key prefix: 'vision' or 'audio'. */
  tower: string;
  numLayers: number;
  hiddenSize: number;
  intermediateSize: number;
  layerNormEps: number;
  activation: Activation;
  attention: VitAttentionShape;
  /** Paced pieces of attention: its products and softmax this many heads at a time (0: whole). */
  headsPerPiece: number;
}

type PrepareMatmul = (io: MatmulIO, shape: MatmulShape, options?: MatmulOptions) => Promise<Dispatch>;

/** Every layer's dispatches over `rows` rows, appended to the plan a layer at a time (planAppender). */
export async function prepareEncoderLayers(
  gpu: GpuContext,
  weights: ModelWeights,
  spec: EncoderLayerSpec,
  b: EncoderLayerBuffers,
  rows: number,
  matmul: PrepareMatmul,
  add: (preparing: Promise<Dispatch>[]) => Promise<void>,
): Promise<void> {
  for (let l = 0; l < spec.numLayers; l++) await add(prepareEncoderLayer(gpu, weights, spec, l, b, rows, matmul));
}

/** Layer `l`'s dispatches over `rows` rows, in order (their pipelines compile together). */
function prepareEncoderLayer(
  gpu: GpuContext,
  weights: ModelWeights,
  spec: EncoderLayerSpec,
  l: number,
  b: EncoderLayerBuffers,
  rows: number,
  matmul: PrepareMatmul,
): Promise<Dispatch>[] {
  const w = (name: string) => weights.get(`${spec.tower}.layers.${l}.${name}`);
  const m = (name: string) => weights.matrix(`${spec.tower}.layers.${l}.${name}`); // in the loaded dtype
  const D = spec.hiddenSize;
  const eps = spec.layerNormEps;
  return [
    prepareLayerNorm(gpu, { x: b.h, weight: w('ln1.w'), bias: w('ln1.b'), y: b.x }, { rows, dim: D }, { eps }),
    matmul({ x: b.x, weight: m('qkv.w'), bias: w('qkv.b'), y: b.qkv }, { M: rows, N: 3 * D, K: D }),
    prepareVitAttention(gpu, { qkv: b.qkv, mask: b.mask, out: b.attn }, spec.attention, {
      headsPerPiece: spec.headsPerPiece,
      scratch: b.attentionScratch,
    }),
    matmul({ x: b.attn, weight: m('o.w'), bias: w('o.b'), y: b.h }, { M: rows, N: D, K: D }, { accumulate: true }),
    prepareLayerNorm(gpu, { x: b.h, weight: w('ln2.w'), bias: w('ln2.b'), y: b.x }, { rows, dim: D }, { eps }),
    matmul(
      { x: b.x, weight: m('fc1.w'), bias: w('fc1.b'), y: b.mlp },
      { M: rows, N: spec.intermediateSize, K: D },
      { activation: spec.activation },
    ),
    matmul({ x: b.mlp, weight: m('fc2.w'), bias: w('fc2.b'), y: b.h }, { M: rows, N: D, K: spec.intermediateSize }, { accumulate: true }),
  ];
}

/** The learned positions added to the stem's output: h += table[posIds] ([rows, D]). */
export function prepareLearnedPositions(
  gpu: GpuContext,
  table: ReturnType<ModelWeights['matrix']>,
  b: { h: Tensor; posIds: Tensor; pos: Tensor; errors: Tensor },
  shape: { rows: number; positions: number; dim: number },
): Promise<Dispatch>[] {
  return [
    prepareEmbeddingGather(
      gpu,
      { ids: b.posIds, table, out: b.pos, errors: b.errors },
      { numTokens: shape.rows, vocab: shape.positions, dim: shape.dim },
    ),
    prepareResidualAdd(gpu, { acc: b.h, x: b.pos }),
  ];
}

/**
 * Appends each group of preparations to `plan` as it resolves (a group's pipelines compile concurrently);
 * a failure releases everything the plan holds so far and rethrows.
 */
export function planAppender(plan: Dispatch[]): (preparing: Promise<Dispatch>[]) => Promise<void> {
  return async (preparing) => {
    plan.push(
      ...(await prepareAll(preparing).catch((e: unknown) => {
        for (const x of plan) x.release();
        plan.length = 0;
        throw e;
      })),
    );
  };
}
