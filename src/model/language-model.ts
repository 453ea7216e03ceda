// The Llama decoder of Idefics3 / SmolVLM (HF `LlamaModel` + lm_head) as one GPU step over T tokens of
// one or more sequences: a prefill chunk, or a decode step with one token per running sequence.
//
//   h = embed[ids]  (then image embeddings spliced over their placeholder rows)
//   per layer:  x = rms1(h); qkv = x·Wqkvᵀ; rope(q, k); kv-write(k, v -> slots)
//               a = paged-attn(q, cache); h += a·Woᵀ
//               x = rms2(h); h += swiglu(x·Wguᵀ)·Wdownᵀ
//   per sequence: logits = rms(h[last row])·Wlmᵀ -> argmax or sample -> next id
//
// All of it is one compute pass in one command buffer; the only readback is the sampled ids. Buffers
// are sized once for maxTokensPerStep rows and maxSeqs sequences; per-step inputs (ids, positions,
// slots, block tables) are written into them, so a decode step creates no GPU buffer.

import { InternalError } from '../errors';
import type { GpuContext } from '../gpu/context';
import type { Tensor } from '../gpu/tensor';
import { prepareArgmax } from '../kernels/argmax';
import { encodeDispatches, submitDispatches, type Dispatch, type KernelDispatch } from '../kernels/dispatch';
import { prepareEmbeddingGather } from '../kernels/embedding-gather';
import { prepareKvWrite } from '../kernels/kv-write';
import { prepareMatmul } from '../kernels/matmul';
import { preparePagedAttention } from '../kernels/paged-attention';
import { prepareResidualAdd } from '../kernels/residual-add';
import { prepareRmsNorm } from '../kernels/rms-norm';
import { prepareRope, ropeCosSinTable } from '../kernels/rope';
import { prepareSample, samplingParamsBytes, type SamplingParams } from '../kernels/sample';
import { prepareSplice } from '../kernels/splice';
import { prepareSwiglu } from '../kernels/swiglu';
import type { ModelConfig } from './config';
import type { KvCacheBuffers } from './kv-cache';
import type { ModelWeights } from './weights';

export interface StepInput {
  /** [T] token ids (placeholder positions hold the image token id; their rows are overwritten by splice). */
  ids: Uint32Array;
  /** [T] which sequence (row of blockTables) each token belongs to. */
  tokenSeq: Uint32Array;
  /** [T] absolute position of each token in its sequence. */
  positions: Uint32Array;
  /** [T] KV-cache slot of each token. */
  slots: Uint32Array;
  /** [numSeqs * maxBlocksPerSeq] block tables, row-major, unused entries 0. */
  blockTables: Uint32Array;
  numSeqs: number;
  /** [numSeqs] the row (token index in this step) whose logits each sequence needs; omit for a prefill chunk that ends mid-prompt. */
  lastRows?: Uint32Array;
  /** Media embeddings for placeholder rows: dst row rows[i] <- src row srcRowOffset + i. */
  splice?: { src: Tensor; srcRowOffset: number; rows: Uint32Array };
  /** undefined = greedy (argmax). */
  sampling?: SamplingParams;
}

export interface StepOutput {
  /** [numSeqs] next token per sequence (when lastRows was given). */
  ids?: Uint32Array;
  /** [numSeqs, vocab] when readLogits was asked for. */
  logits?: Float32Array;
}

/** What the last step put on the GPU (the decode-path figures the benchmarks report). */
export interface StepStats {
  numTokens: number;
  numDispatches: number;
  numCommandBuffers: number;
  /** Host readbacks (the sampled ids; logits only when asked for). */
  numReadbacks: number;
  readbackBytes: number;
}

export interface LanguageModelOptions {
  maxTokensPerStep: number;
  maxSeqs: number;
}

interface StepPlan {
  dispatches: Dispatch[];
  head?: { argmax: KernelDispatch; sample?: KernelDispatch; sampleKey?: string };
}

export class LanguageModel {
  readonly maxBlocksPerSeq: number;
  private readonly t: Record<string, Tensor> = {};
  private readonly plans = new Map<string, StepPlan>();
  private destroyed = false;
  lastStep: StepStats = { numTokens: 0, numDispatches: 0, numCommandBuffers: 0, numReadbacks: 0, readbackBytes: 0 };

  constructor(
    private readonly gpu: GpuContext,
    private readonly weights: ModelWeights,
    readonly config: ModelConfig,
    readonly kv: KvCacheBuffers,
    readonly options: LanguageModelOptions,
  ) {
    const c = config.text;
    this.maxBlocksPerSeq = Math.ceil(Math.min(c.maxPositions, kv.numSlots) / kv.blockSize);
    const C = options.maxTokensPerStep;
    const S = options.maxSeqs;
    const H = c.hiddenSize;
    const qkvWidth = (c.numHeads + 2 * c.numKvHeads) * c.headDim;
    const make = (name: string, shape: number[], dtype: 'f32' | 'u32' = 'f32') => {
      this.t[name] = gpu.createTensor(shape, dtype, `lm.${name}`);
    };
    make('ids', [C], 'u32');
    make('tokenSeq', [C], 'u32');
    make('positions', [C], 'u32');
    make('slots', [C], 'u32');
    make('spliceRows', [C], 'u32');
    make('blockTables', [S, this.maxBlocksPerSeq], 'u32');
    make('lastRows', [S], 'u32');
    make('h', [C, H]);
    make('x', [C, H]);
    make('qkv', [C, qkvWidth]);
    make('attn', [C, c.numHeads * c.headDim]);
    make('tmp', [C, H]);
    make('gu', [C, 2 * c.intermediateSize]);
    make('act', [C, c.intermediateSize]);
    make('hl', [S, H]);
    make('xl', [S, H]);
    make('logits', [S, c.vocabSize]);
    make('next', [S], 'u32');
    for (const e of ['gatherErrors', 'ropeErrors', 'kvErrors', 'spliceErrors', 'lastErrors']) make(e, [2], 'u32');
    this.t.rope = gpu.upload(ropeCosSinTable(c.ropeTheta, c.headDim, c.maxPositions), [c.maxPositions, c.headDim], 'lm.rope');
    for (const e of ['gatherErrors', 'ropeErrors', 'kvErrors', 'spliceErrors', 'lastErrors']) gpu.write(this.t[e], new Uint32Array(2));
  }

  /** A tensor's first `rows` rows, as a view with that shape. */
  private rows(name: string, rows: number): Tensor {
    const t = this.t[name];
    return { ...t, shape: [rows, ...t.shape.slice(1)] };
  }

  private async buildPlan(T: number, S: number, withHead: boolean): Promise<StepPlan> {
    const { gpu, weights } = this;
    const c = this.config.text;
    const H = c.hiddenSize;
    const qkvWidth = (c.numHeads + 2 * c.numKvHeads) * c.headDim;
    const v = (name: string) => this.rows(name, T);
    const d: Dispatch[] = [];
    d.push(
      await prepareEmbeddingGather(
        gpu,
        { ids: v('ids'), table: weights.matrix('text.embed'), out: v('h'), errors: this.t.gatherErrors },
        { numTokens: T, vocab: c.vocabSize, dim: H },
      ),
    );
    const eps = c.rmsNormEps;
    for (let l = 0; l < c.numLayers; l++) {
      const w = (name: string) => weights.get(`text.layers.${l}.${name}`);
      const m = (name: string) => weights.matrix(`text.layers.${l}.${name}`); // in the loaded dtype
      d.push(
        await prepareRmsNorm(gpu, { x: v('h'), weight: w('ln1'), y: v('x') }, { rows: T, dim: H }, { eps }),
        await prepareMatmul(gpu, { x: v('x'), weight: m('qkv'), y: v('qkv') }, { M: T, N: qkvWidth, K: H }),
        await prepareRope(
          gpu,
          {
            x: { ...v('qkv'), shape: [T, c.numHeads + 2 * c.numKvHeads, c.headDim] },
            positions: v('positions'),
            cosSin: this.t.rope,
            errors: this.t.ropeErrors,
          },
          { numTokens: T, numHeads: c.numHeads + 2 * c.numKvHeads, headDim: c.headDim, maxPositions: c.maxPositions, rotaryHeads: c.numHeads + c.numKvHeads },
        ),
        await prepareKvWrite(
          gpu,
          { qkv: v('qkv'), slots: v('slots'), kCache: this.kv.k[l], vCache: this.kv.v[l], errors: this.t.kvErrors },
          {
            numTokens: T,
            numKvHeads: c.numKvHeads,
            headDim: c.headDim,
            rowStride: qkvWidth,
            kOffset: c.numHeads * c.headDim,
            vOffset: (c.numHeads + c.numKvHeads) * c.headDim,
            numSlots: this.kv.numSlots,
          },
        ),
        await preparePagedAttention(
          gpu,
          {
            qkv: v('qkv'),
            tokenSeq: v('tokenSeq'),
            tokenPos: v('positions'),
            blockTables: this.rows('blockTables', S),
            kCache: this.kv.k[l],
            vCache: this.kv.v[l],
            out: v('attn'),
          },
          {
            numTokens: T,
            numHeads: c.numHeads,
            numKvHeads: c.numKvHeads,
            headDim: c.headDim,
            rowStride: qkvWidth,
            numSeqs: S,
            maxBlocksPerSeq: this.maxBlocksPerSeq,
            blockSize: this.kv.blockSize,
            numSlots: this.kv.numSlots,
          },
        ),
        await prepareMatmul(gpu, { x: v('attn'), weight: m('o'), y: v('tmp') }, { M: T, N: H, K: c.numHeads * c.headDim }),
        await prepareResidualAdd(gpu, { acc: v('h'), x: v('tmp') }),
        await prepareRmsNorm(gpu, { x: v('h'), weight: w('ln2'), y: v('x') }, { rows: T, dim: H }, { eps }),
        await prepareMatmul(gpu, { x: v('x'), weight: m('gate_up'), y: v('gu') }, { M: T, N: 2 * c.intermediateSize, K: H }),
        await prepareSwiglu(gpu, { x: v('gu'), y: v('act') }, { rows: T, dim: c.intermediateSize }),
        await prepareMatmul(gpu, { x: v('act'), weight: m('down'), y: v('tmp') }, { M: T, N: H, K: c.intermediateSize }),
        await prepareResidualAdd(gpu, { acc: v('h'), x: v('tmp') }),
      );
    }
    if (!withHead) return { dispatches: d };
    d.push(
      await prepareEmbeddingGather(
        gpu,
        { ids: this.rows('lastRows', S), table: v('h'), out: this.rows('hl', S), errors: this.t.lastErrors },
        { numTokens: S, vocab: T, dim: H },
      ),
      await prepareRmsNorm(gpu, { x: this.rows('hl', S), weight: weights.get('text.norm'), y: this.rows('xl', S) }, { rows: S, dim: H }, { eps }),
      await prepareMatmul(
        gpu,
        { x: this.rows('xl', S), weight: weights.matrix('text.lm_head'), y: this.rows('logits', S) },
        { M: S, N: c.vocabSize, K: H },
      ),
    );
    const argmax = await prepareArgmax(gpu, { x: this.rows('logits', S), out: this.rows('next', S) }, { rows: S, cols: c.vocabSize });
    return { dispatches: d, head: { argmax } };
  }

  private async plan(T: number, S: number, withHead: boolean): Promise<StepPlan> {
    const key = `${T}:${S}:${withHead}`;
    let p = this.plans.get(key);
    if (!p) {
      // Keep the few most recent shapes (decode reuses one; prefill chunks come in a handful of sizes).
      if (this.plans.size >= 8) {
        const [oldKey, old] = this.plans.entries().next().value as [string, StepPlan];
        this.releasePlan(old);
        this.plans.delete(oldKey);
      }
      p = await this.buildPlan(T, S, withHead);
      this.plans.set(key, p);
    } else {
      this.plans.delete(key);
      this.plans.set(key, p);
    }
    return p;
  }

  private releasePlan(p: StepPlan): void {
    for (const d of p.dispatches) d.release();
    p.head?.argmax.release();
    p.head?.sample?.release();
  }

  /** Run one step; resolves with the next ids (and logits when asked) once the GPU is done. */
  async step(input: StepInput, options: { readLogits?: boolean } = {}): Promise<StepOutput> {
    if (this.destroyed) throw new InternalError('LanguageModel used after destroy()');
    const { gpu } = this;
    const T = input.ids.length;
    const S = input.numSeqs;
    const c = this.config.text;
    if (T < 1 || T > this.options.maxTokensPerStep) {
      throw new InternalError(`step of ${T} tokens; this model was set up for 1..${this.options.maxTokensPerStep}`);
    }
    if (S < 1 || S > this.options.maxSeqs) throw new InternalError(`step over ${S} sequences; max ${this.options.maxSeqs}`);
    for (const id of input.ids) {
      if (id >= c.vocabSize) throw new InternalError(`token id ${id} is outside the vocabulary of ${c.vocabSize}`);
    }
    const withHead = input.lastRows !== undefined;
    const plan = await this.plan(T, S, withHead);
    gpu.write(this.rows('ids', T), input.ids);
    gpu.write(this.rows('tokenSeq', T), input.tokenSeq);
    gpu.write(this.rows('positions', T), input.positions);
    gpu.write(this.rows('slots', T), input.slots);
    gpu.write(this.rows('blockTables', S), input.blockTables);
    if (input.lastRows) gpu.write(this.rows('lastRows', S), input.lastRows);

    const dispatches = [...plan.dispatches];
    let splice: KernelDispatch | undefined;
    if (input.splice && input.splice.rows.length > 0) {
      const n = input.splice.rows.length;
      gpu.write(this.rows('spliceRows', n), input.splice.rows);
      splice = await prepareSplice(
        gpu,
        { src: input.splice.src, rows: this.rows('spliceRows', n), dst: this.rows('h', T), errors: this.t.spliceErrors },
        { numRows: n, dim: c.hiddenSize, numDstRows: T, numSrcRows: input.splice.src.shape[0], srcRowOffset: input.splice.srcRowOffset },
      );
      dispatches.splice(1, 0, splice); // right after the embedding gather
    }
    if (plan.head) dispatches.push(await this.selectHead(plan, S, input.sampling));
    try {
      const out: StepOutput = {};
      this.lastStep = { numTokens: T, numDispatches: dispatches.length, numCommandBuffers: 1, numReadbacks: 0, readbackBytes: 0 };
      if (!withHead) {
        submitDispatches(gpu, dispatches, 'language-model');
        return out;
      }
      // One command buffer: every layer, the head, and the copy of the sampled ids to a staging buffer.
      const next = this.t.next;
      const bytes = await gpu.encodeAndRead((e) => encodeDispatches(e, dispatches, 'language-model'), next.buffer, 0, S * 4, 'language-model');
      out.ids = new Uint32Array(bytes.buffer, bytes.byteOffset, S).slice();
      this.lastStep.numReadbacks = 1;
      this.lastStep.readbackBytes = S * 4;
      if (options.readLogits) {
        out.logits = (await gpu.readF32(this.rows('logits', S))).slice();
        this.lastStep.numReadbacks++;
        this.lastStep.numCommandBuffers++;
        this.lastStep.readbackBytes += S * this.config.text.vocabSize * 4;
      }
      return out;
    } finally {
      splice?.release();
    }
  }

  private async selectHead(plan: StepPlan, S: number, sampling: SamplingParams | undefined): Promise<Dispatch> {
    const head = plan.head!;
    if (!sampling) return head.argmax;
    const shape = { rows: S, vocab: this.config.text.vocabSize };
    if (!head.sample) {
      head.sample = await prepareSample(this.gpu, { logits: this.rows('logits', S), out: this.rows('next', S) }, shape, sampling);
    } else {
      head.sample.writeParams(samplingParamsBytes(shape, sampling));
    }
    return head.sample;
  }

  /** Read the kernels' out-of-range flags (bad ids, positions, slots, rows); all zero when healthy. */
  async readErrorFlags(): Promise<Record<string, [number, number]>> {
    const out: Record<string, [number, number]> = {};
    for (const e of ['gatherErrors', 'ropeErrors', 'kvErrors', 'spliceErrors', 'lastErrors']) {
      const v = await this.gpu.readU32(this.t[e]);
      out[e] = [v[0], v[1]];
    }
    return out;
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const p of this.plans.values()) this.releasePlan(p);
    this.plans.clear();
    for (const t of Object.values(this.t)) this.gpu.release(t);
  }
}
