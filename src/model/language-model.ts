// The Llama decoder of Idefics3 / SmolVLM (HF `LlamaModel` + lm_head) as one GPU step over the rows of
// many sequences at once: decode tokens and prefill chunks together (continuous batching).
//
//   body  (T rows)   h = embed[ids]; h[spliceRows] = staged media rows
//                    per layer:  x = rms1(h); qkv = x·Wqkvᵀ (+ b: Qwen2); [q, k per-head RMSNorm: Qwen3]
//                                rope(q, k; M-RoPE's three positions when the config has it); kv-write(k, v -> slots)
//                                a = paged-attn(q, cache; each row's own block table and position)
//                                h += a·Woᵀ; x = rms2(h); h += swiglu(x·Wguᵀ)·Wdownᵀ
//                                [DeepStack, first layers: h[spliceRows] += that level's vision rows]
//   head  (R rows)   per sampling sequence: logits = rms(h[headRow])·Wlmᵀ -> argmax -> sample (per-row
//                    temperature / top-k / top-p / seed; temperature 0 keeps argmax)
//
// One compute pass in one command buffer, then one copy of the sampled ids and every kernel's error flags
// into one readback: nothing else crosses back per step. All buffers are sized once (maxTokensPerStep
// rows, maxSeqs sequences); per-step inputs are written into them, so a step creates no GPU buffer.
//
// Steps come in a few row counts (buckets): T is padded up to the next bucket with pad rows that belong to
// a pad sequence (the last block-table row) whose one block lies outside the KV pool's accounting, so a
// plan (bind groups, uniforms) is built once per bucket and reused:
//   rows:  [ seq0 decode | seq1 decode | seq2 prefill chunk ............ | pad pad ]   T = 12 -> bucket 12
//   head:  [ row 0, row 1, row 10 ]  (the last row of each sequence that samples)   R = 3 -> bucket 3

import { GpuBoundsError, InternalError } from '../errors';
import type { GpuContext } from '../gpu/context';
import { STORAGE_USAGE } from '../gpu/flags';
import { tensorSizeBytes, type Tensor } from '../gpu/tensor';
import { prepareArgmax } from '../kernels/argmax';
import { decodeAttentionGroups, prepareDecodeAttentionOut } from '../kernels/decode-attention-out';
import { prepareDecodeGateUp } from '../kernels/decode-gate-up';
import { prepareDecodeHead } from '../kernels/decode-head';
import { prepareDecodeQkv } from '../kernels/decode-qkv';
import {
  encodeDispatches,
  leafDispatches,
  packParams,
  prepareAll,
  type Dispatch,
  type DispatchCost,
  type KernelDispatch,
} from '../kernels/dispatch';
import type { DispatchTimer } from '../kernels/dispatch-timer';
import { prepareEmbeddingGather } from '../kernels/embedding-gather';
import { prepareKvWrite } from '../kernels/kv-write';
import { NARROW_MAX_ROWS, prepareMatmul } from '../kernels/matmul';
import {
  pagedAttentionCost,
  pagedAttentionPartialShape,
  PagedAttentionSplit,
  preparePagedAttention,
  type PagedAttentionShape,
} from '../kernels/paged-attention';
import { prepareQkNorm } from '../kernels/qk-norm';
import { prepareRmsNorm } from '../kernels/rms-norm';
import { prepareRope, ropeCosSinTable } from '../kernels/rope';
import type { LogitAdjust } from '../kernels/logit-adjust';
import { packRowParams, prepareSample, ROW_PARAMS_BYTES, type SamplingParams } from '../kernels/sample';
import { prepareSplice, spliceCost } from '../kernels/splice';
import { prepareSwiglu } from '../kernels/swiglu';
import type { ModelConfig } from './config';
import type { KvCacheBuffers } from './kv-cache';
import { bucketFor, rowBuckets } from './step-buckets';
import { NO_STEP, type StepStats } from './runner/model-runner';
import type { ModelWeights } from './weights';
import { PackedTensors } from './packed-tensors';
import { isPacked } from '../kernels/weight-format';
import { HeadAdjust } from './head-adjust';

export interface StepInput {
  /** [T] token ids (placeholder rows hold the image token id; splice overwrites their embeddings). */
  ids: Uint32Array;
  /** [T] which sequence (row of blockTables) each token belongs to. */
  tokenSeq: Uint32Array;
  /** [T] absolute position of each token in its sequence (its KV index: attention's causal length). */
  positions: Uint32Array;
  /**
   * [3, T] M-RoPE positions (rows t, h, w) when the decoder has M-RoPE (TextConfig.mrope); absent: every
   * row is `positions` (a text token's three positions are its index).
   */
  ropePositions?: Uint32Array;
  /** [T] KV-cache slot of each token. */
  slots: Uint32Array;
  /** [numSeqs * maxBlocksPerSeq] block tables, row-major, unused entries 0. */
  blockTables: Uint32Array;
  numSeqs: number;
  /** [R] rows whose logits give a next token, one per sampling sequence; empty when nothing samples. */
  headRows: Uint32Array;
  /** [R] sampling parameters per head row (temperature 0 = greedy). */
  sampling: readonly SamplingParams[];
  /** [R] logit processors per head row (penalties, a token mask), applied before argmax and sampling. */
  adjust?: ReadonlyArray<LogitAdjust | undefined>;
  /**
   * Media embeddings for placeholder rows: row rows[i] takes row i of `data` ([rows.length, hidden] f32).
   * `deepstack` (TextConfig.deepstackLayers levels, each [rows.length, hidden]): level l's rows are added
   * to those rows after decoder layer l.
   */
  splice?: { rows: Uint32Array; data: Float32Array; deepstack?: readonly Float32Array[] };
}

export interface StepOutput {
  /** [R] next token per head row; NON_FINITE_TOKEN where the logits held a NaN or an infinity. */
  ids: Uint32Array;
  /** [R, vocab] when readLogits was asked for. */
  logits?: Float32Array;
}

export interface LanguageModelOptions {
  maxTokensPerStep: number;
  maxSeqs: number;
  /**
   * Blocks the KV accounting hands out now (its pool grows on demand): each step first grows the KV
   * buffers to match. Default: the buffers' own size (a fixed pool).
   */
  kvBlocks?: () => number;
  /**
   * How decode steps (at most 8 rows) run: 'fused' (each layer in 4 dispatches: RMSNorm + q|k|v + RoPE + KV
   * write; attention + the output projection by groups of heads; their sum into the residual + RMSNorm +
   * gate|up + SwiGLU; the down projection + residual. The head's gather, norm and product in one), or
   * 'separate' (a dispatch per kernel). Default: 'fused' on GPUs (kernel variant
   * 'workgroup'), 'separate' on CPU adapters, whose register kernels have no barriers. A checkpoint the
   * fused kernels cannot take (q/k norms, weights split by rows or format) runs 'separate'.
   */
  decodePlan?: DecodePlan;
}

export type DecodePlan = 'fused' | 'separate';

interface BodyPlan {
  dispatches: Dispatch[];
  /** The splice and the DeepStack adds (one per level): skipped on steps without media rows. */
  splice: KernelDispatch;
  deepstack: KernelDispatch[];
  /** `dispatches` without the splice and the DeepStack adds: a step without media rows (every decode step). */
  textOnly: Dispatch[];
  /** The paged-attention dispatches (one per layer) and their shape: their work depends on each step's positions. */
  attention: ReadonlySet<Dispatch>;
  attentionShape: PagedAttentionShape;
  /** The layers' attention when it runs as the split plan: each step dispatches only the runs it needs. */
  attentionSplits: PagedAttentionSplit[];
}

interface HeadPlan {
  /** All of them: [gather, rms-norm, lm_head (one per part of its rows), argmax, sample]. */
  dispatches: Dispatch[];
  /** Up to the logits: the logit processors go after these, before argmax. */
  logits: Dispatch[];
  argmax: Dispatch;
  /** Last dispatch; encoded only when a row samples. */
  sample: KernelDispatch;
}

/** Kernels that flag out-of-range indices, in the order of their regions in the flags buffer. */
const FLAG_KERNELS = ['embedding-gather', 'rope', 'kv-write', 'splice', 'head-gather'] as const;

export class LanguageModel {
  readonly maxBlocksPerSeq: number;
  /** Row counts a step is padded to. */
  readonly tokenBuckets: readonly number[];
  readonly headBuckets: readonly number[];
  private readonly t: Record<string, Tensor> = {};
  /** The step's u32 inputs (ids, positions, slots, block tables, head rows, ...), views of one buffer. */
  private readonly ints: PackedTensors;
  /** The RoPE table and the layers' norms and biases, for the fused decode kernels. */
  private readonly consts: PackedTensors;
  /** How steps of at most NARROW_MAX_ROWS rows run (LanguageModelOptions.decodePlan). */
  readonly decodePlan: DecodePlan;
  private readonly flagsBuffer: GPUBuffer;
  /** Byte offsets in flagsBuffer: one region per flagging kernel, then the sampled ids. */
  private readonly flagStride: number;
  private readonly idsOffset: number;
  private readonly readBytes: number;
  private readonly bodies = new Map<number, BodyPlan>();
  private readonly heads = new Map<number, HeadPlan>();
  /** Plans being built (keyed 'body:T' / 'head:key'), so concurrent callers share one build. */
  private readonly building = new Map<string, Promise<BodyPlan | HeadPlan>>();
  private readonly padSeq: number;
  /** Penalties and token masks, set up the first time a step has them. */
  private readonly adjust: HeadAdjust;
  private destroyed = false;
  lastStep: StepStats = { ...NO_STEP };

  constructor(
    readonly gpu: GpuContext,
    private readonly weights: ModelWeights,
    readonly config: ModelConfig,
    readonly kv: KvCacheBuffers,
    readonly options: LanguageModelOptions,
  ) {
    const c = config.text;
    this.maxBlocksPerSeq = Math.ceil(Math.min(c.maxPositions, kv.maxPoolSlots) / kv.blockSize);
    const C = options.maxTokensPerStep;
    const S = options.maxSeqs;
    this.tokenBuckets = rowBuckets(C);
    this.headBuckets = rowBuckets(S);
    this.padSeq = S;
    const H = c.hiddenSize;
    const qkvWidth = (c.numHeads + 2 * c.numKvHeads) * c.headDim;
    const make = (name: string, shape: number[], dtype: 'f32' | 'u32' = 'f32') => {
      this.t[name] = gpu.createTensor(shape, dtype, `lm.${name}`);
    };
    // The step's u32 inputs in one buffer (the fused decode kernels bind it once).
    this.ints = new PackedTensors(gpu, 'lm.ints', 'u32', [
      ['ids', [C]],
      ['tokenSeq', [C]],
      ['positions', [C]],
      ...(c.mrope ? [['ropePositions', [3 * C]] as const] : []),
      ['slots', [C]],
      ['spliceRows', [C]],
      ['blockTables', [S + 1, this.maxBlocksPerSeq]],
      ['headRows', [S]],
      ['rowParams', [S, ROW_PARAMS_BYTES / 4]],
    ]);
    for (const name of this.ints.names()) this.t[name] = this.ints.get(name);
    make('staged', [C, H]);
    if (c.deepstackLayers) make('deepstack', [c.deepstackLayers * C, H]);
    make('h', [C, H]);
    make('x', [C, H]);
    make('qkv', [C, qkvWidth]);
    make('attn', [C, c.numHeads * c.headDim]);
    // Paged attention's split plan leaves partial results here; every layer's attention reuses it.
    make('attnPartial', pagedAttentionPartialShape(C, c.numHeads, c.headDim));
    make('gu', [C, 2 * c.intermediateSize]);
    make('act', [C, c.intermediateSize]);
    make('hl', [S, H]);
    make('xl', [S, H]);
    make('logits', [S, c.vocabSize]);
    this.adjust = new HeadAdjust(gpu, this.t.logits, S, c.vocabSize);
    // Flags and sampled ids share one buffer, so one copy brings all of them back.
    this.flagStride = Math.max(16, gpu.limits.minStorageBufferOffsetAlignment);
    this.idsOffset = FLAG_KERNELS.length * this.flagStride;
    this.readBytes = this.idsOffset + S * 4;
    this.flagsBuffer = gpu.memory.createBuffer({ label: 'lm.flags+ids', size: Math.ceil(this.readBytes / 4) * 4, usage: STORAGE_USAGE });
    gpu.device.queue.writeBuffer(this.flagsBuffer, 0, new Uint8Array(Math.ceil(this.readBytes / 4) * 4));
    this.consts = this.packConsts();
    this.t.rope = this.consts.get('rope');
    this.decodePlan =
      (options.decodePlan ?? (gpu.kernelVariant === 'workgroup' ? 'fused' : 'separate')) === 'fused' && this.fusable()
        ? 'fused'
        : 'separate';
    if (this.decodePlan === 'fused') {
      // The fused plan's second h (layers alternate between them) and the output projection's parts.
      const rows = Math.min(C, NARROW_MAX_ROWS);
      make('h2', [rows, H]);
      make('parts', [rows, decodeAttentionGroups(c.numHeads, c.numKvHeads), H]);
    }
    this.writePadTable();
  }

  /**
   * Whether the fused decode kernels can take this checkpoint: no q/k norms (they come between the
   * projection and RoPE), each layer's q|k|v and gate|up one weight (not parts of rows in different formats
   * or bindings), every operand they read as vec4 aligned for it, and the packed operands within one binding.
   */
  private fusable(): boolean {
    const c = this.config.text;
    if (c.qkNorm || c.hiddenSize % 4 !== 0 || c.headDim % 4 !== 0) return false;
    // The packed operands are bound whole (a long RoPE table can outgrow a small binding limit).
    const maxBinding = this.gpu.limits.maxStorageBufferBindingSize;
    if (tensorSizeBytes(this.consts.whole) > maxBinding || tensorSizeBytes(this.ints.whole) > maxBinding) return false;
    const aligned = (w: ReturnType<ModelWeights['matrix']>) => (isPacked(w) ? w.data.offsetBytes : w.offsetBytes) % 16 === 0;
    for (let l = 0; l < c.numLayers; l++) {
      for (const name of ['qkv', 'o', 'gate_up']) {
        const parts = this.weights.rowParts(`text.layers.${l}.${name}`);
        if (parts.length !== 1 || !aligned(parts[0]!.weight)) return false;
      }
    }
    return this.weights.rowParts('text.lm_head').every((part) => aligned(part.weight));
  }

  /**
   * The fused kernels' options: on a CPU adapter (where only a forced 'fused' plan runs them) workgroups of
   * 8, whose barriers SwiftShader passes at a fraction of the cost of 64's (an LM head of 49280 columns over
   * 192: 0.27 s against 2-2.8 s; the register kernel's 18-33 ms is why 'separate' is the default there).
   */
  private fusedOptions(): { eps: number; workgroupSize?: number } {
    return { eps: this.config.text.rmsNormEps, ...(this.gpu.kernelVariant === 'register' ? { workgroupSize: 8 } : {}) };
  }

  /** Whether a step of T rows (a bucket) runs the fused layers, and a head of R rows the fused head. */
  private fusedRows(rows: number): boolean {
    return this.decodePlan === 'fused' && rows <= NARROW_MAX_ROWS;
  }

  /**
   * The RoPE cos | sin table, then every layer's norms (and q|k|v bias) and the final norm, copied into one
   * buffer on the GPU: the fused decode kernels read them by offset (the table's view is rope.wgsl's).
   */
  private packConsts(): PackedTensors {
    const { gpu, weights } = this;
    const c = this.config.text;
    const H = c.hiddenSize;
    const copies: Array<[name: string, from: Tensor]> = [];
    for (let l = 0; l < c.numLayers; l++) {
      const w = (name: string) => weights.get(`text.layers.${l}.${name}`);
      copies.push([`ln1.${l}`, w('ln1')], [`ln2.${l}`, w('ln2')]);
      if (c.qkvBias) copies.push([`qkv_b.${l}`, w('qkv_b')]);
    }
    copies.push(['norm', weights.get('text.norm')]);
    const consts = new PackedTensors(gpu, 'lm.consts', 'f32', [
      ['rope', [c.maxPositions, c.headDim]],
      ...copies.map(([name, from]) => [name, from.shape] as const),
    ]);
    gpu.write(consts.get('rope'), ropeCosSinTable(c.ropeTheta, c.headDim, c.maxPositions));
    const encoder = gpu.device.createCommandEncoder({ label: 'lm.consts' });
    for (const [name, from] of copies) {
      const to = consts.get(name);
      if (from.shape.length !== 1 || (from.shape[0] !== H && !name.startsWith('qkv_b'))) {
        throw new InternalError(`${name}: expected an f32 vector of ${H}, got [${from.shape.join(', ')}] ${from.dtype}`);
      }
      encoder.copyBufferToBuffer(from.buffer, from.offsetBytes, to.buffer, to.offsetBytes, from.shape[0] * 4);
    }
    gpu.device.queue.submit([encoder.finish()]);
    return consts;
  }

  /** The pad sequence's block table: every pad row attends to (and writes) the pad block's first slot only. */
  private writePadTable(): void {
    const padTable = new Uint32Array(this.maxBlocksPerSeq);
    padTable[0] = this.kv.padBlock;
    this.gpu.device.queue.writeBuffer(this.t.blockTables.buffer, this.options.maxSeqs * this.maxBlocksPerSeq * 4, padTable);
  }

  /** The slot pad rows write: the pad block's first. */
  private get padSlot(): number {
    return this.kv.padBlock * this.kv.blockSize;
  }

  /**
   * Grow the KV buffers to the blocks the accounting hands out, if it grew: the body plans bind the old
   * buffers and are rebuilt on their next use (pipelines come from the cache; only bind groups are new).
   */
  private syncKvSize(): void {
    const want = this.options.kvBlocks?.() ?? this.kv.numBlocks;
    if (want <= this.kv.numBlocks) return;
    this.kv.grow(want);
    for (const p of this.bodies.values()) for (const d of p.dispatches) d.release();
    this.bodies.clear();
    this.writePadTable();
  }

  /** A tensor's first `rows` rows, as a view with that shape. */
  private rows(name: string, rows: number): Tensor {
    const t = this.t[name];
    return { ...t, shape: [rows, ...t.shape.slice(1)] };
  }

  /** The M-RoPE positions of a T-row step, [3, T] (rows t, h, w): the first 3T values of the buffer. */
  private ropePositions(T: number): Tensor {
    const t = this.t.ropePositions;
    if (!t) throw new InternalError('ropePositions asked of a decoder without M-RoPE');
    return { ...t, shape: [3, T] };
  }

  private flags(kernel: (typeof FLAG_KERNELS)[number]): Tensor {
    const i = FLAG_KERNELS.indexOf(kernel);
    return { buffer: this.flagsBuffer, shape: [2], dtype: 'u32', offsetBytes: i * this.flagStride, label: `lm.flags.${kernel}` };
  }

  private nextIds(rows: number): Tensor {
    return { buffer: this.flagsBuffer, shape: [rows], dtype: 'u32', offsetBytes: this.idsOffset, label: 'lm.next' };
  }

  /** A layer's attention input, a kernel each: RMSNorm, the q|k|v product(s), [q/k norms], RoPE, the KV write. */
  private separateLayerInput(l: number, T: number): Array<Promise<Dispatch>> {
    const { gpu, weights } = this;
    const c = this.config.text;
    const H = c.hiddenSize;
    const eps = c.rmsNormEps;
    const qkvWidth = (c.numHeads + 2 * c.numKvHeads) * c.headDim;
    const v = (name: string) => this.rows(name, T);
    const w = (name: string) => weights.get(`text.layers.${l}.${name}`);
    // qkv by parts of rows when its tensors are held in different formats (weights/row-split.ts): each
    // part's product writes its columns, with its share of the bias.
    const qkv = weights.rowParts(`text.layers.${l}.qkv`);
    const qkvBias = c.qkvBias ? w('qkv_b') : undefined;
    const steps: Array<Promise<Dispatch>> = [
      prepareRmsNorm(gpu, { x: v('h'), weight: w('ln1'), y: v('x') }, { rows: T, dim: H }, { eps }),
      ...qkv.map((part) =>
        prepareMatmul(
          gpu,
          {
            x: v('x'),
            weight: part.weight,
            bias:
              qkvBias && qkv.length > 1 ? { ...qkvBias, shape: [part.rows], offsetBytes: qkvBias.offsetBytes + part.first * 4 } : qkvBias,
            y: v('qkv'),
          },
          { M: T, N: part.rows, K: H },
          qkv.length > 1 ? { yColumns: { offset: part.first, stride: qkvWidth } } : {},
        ),
      ),
    ];
    if (c.qkNorm) {
      steps.push(
        prepareQkNorm(
          gpu,
          {
            x: { ...v('qkv'), shape: [T, c.numHeads + 2 * c.numKvHeads, c.headDim] },
            weight: { ...w('qk_norm'), shape: [2, c.headDim] },
          },
          { numTokens: T, numHeads: c.numHeads + 2 * c.numKvHeads, numQHeads: c.numHeads, numKHeads: c.numKvHeads, headDim: c.headDim },
          { eps },
        ),
      );
    }
    steps.push(
      prepareRope(
        gpu,
        {
          x: { ...v('qkv'), shape: [T, c.numHeads + 2 * c.numKvHeads, c.headDim] },
          positions: c.mrope ? this.ropePositions(T) : v('positions'),
          cosSin: this.t.rope,
          errors: this.flags('rope'),
        },
        {
          numTokens: T,
          numHeads: c.numHeads + 2 * c.numKvHeads,
          headDim: c.headDim,
          maxPositions: c.maxPositions,
          rotaryHeads: c.numHeads + c.numKvHeads,
          mrope: c.mrope,
        },
      ),
      prepareKvWrite(
        gpu,
        { qkv: v('qkv'), slots: v('slots'), kCache: this.kv.k[l], vCache: this.kv.v[l], errors: this.flags('kv-write') },
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
    );
    return steps;
  }

  /** The buffer of h after layer l in the fused plan (before the first layer: 'h', where the embedding is). */
  private hAfter(l: number): 'h' | 'h2' {
    return l % 2 === 0 ? 'h2' : 'h';
  }

  /** The fused plan's parts of the attention's output projection for T rows: [T, groups, H]. */
  private parts(T: number): Tensor {
    const t = this.t.parts;
    if (!t) throw new InternalError('the parts of the output projection are asked of a language model without the fused plan');
    return { ...t, shape: [T, ...t.shape.slice(1)] };
  }

  /** A layer's attention and output projection in one dispatch (decode-attention-out.wgsl), by groups of heads. */
  private fusedAttention(l: number, T: number, shape: PagedAttentionShape): Promise<Dispatch> {
    const { ints } = this;
    return prepareDecodeAttentionOut(
      this.gpu,
      {
        qkv: this.rows('qkv', T),
        ints: ints.whole,
        kCache: this.kv.k[l],
        vCache: this.kv.v[l],
        weight: this.weights.matrix(`text.layers.${l}.o`),
        part: this.parts(T),
      },
      { ...shape, H: this.config.text.hiddenSize },
      { tokenSeq: ints.offsetOf('tokenSeq'), tokenPos: ints.offsetOf('positions'), blockTables: ints.offsetOf('blockTables') },
      { workgroupSize: this.fusedOptions().workgroupSize },
    );
  }

  /** A layer's attention input in one dispatch (decode-qkv.wgsl): RMSNorm, q|k|v (+ bias), RoPE, the KV write. */
  private fusedLayerInput(l: number, T: number): Promise<Dispatch> {
    const c = this.config.text;
    const { consts, ints } = this;
    return prepareDecodeQkv(
      this.gpu,
      {
        x: this.rows(this.hAfter(l - 1), T),
        weight: this.weights.matrix(`text.layers.${l}.qkv`),
        consts: consts.whole,
        ints: ints.whole,
        qkv: this.rows('qkv', T),
        kCache: this.kv.k[l],
        vCache: this.kv.v[l],
      },
      {
        M: T,
        K: c.hiddenSize,
        numHeads: c.numHeads,
        numKvHeads: c.numKvHeads,
        headDim: c.headDim,
        maxPositions: c.maxPositions,
        numSlots: this.kv.numSlots,
        mrope: c.mrope,
      },
      {
        ln: consts.offsetOf(`ln1.${l}`),
        bias: c.qkvBias ? consts.offsetOf(`qkv_b.${l}`) : undefined,
        positions: ints.offsetOf(c.mrope ? 'ropePositions' : 'positions'),
        // A step's M-RoPE rows are T apart (mropeRows).
        positionStride: T,
        slots: ints.offsetOf('slots'),
      },
      this.fusedOptions(),
    );
  }

  private async buildBody(T: number): Promise<BodyPlan> {
    const { gpu, weights } = this;
    const c = this.config.text;
    const H = c.hiddenSize;
    const S = this.options.maxSeqs;
    const qkvWidth = (c.numHeads + 2 * c.numKvHeads) * c.headDim;
    const v = (name: string) => this.rows(name, T);
    const d: Dispatch[] = [];
    const release = () => {
      for (const x of d) x.release();
    };
    // Each group of preparations starts together, so the pipelines they need compile concurrently.
    // The table by parts of rows when it is larger than one binding (weights/row-split.ts): each part
    // writes the rows of the tokens whose ids it holds.
    const table = weights.rowParts('text.embed');
    const [splice, ...gathers] = await prepareAll([
      // Built for T rows; each step writes how many rows it really splices (numRows in the uniform).
      prepareSplice(
        gpu,
        { src: this.t.staged, rows: v('spliceRows'), dst: v('h'), errors: this.flags('splice') },
        { numRows: T, dim: H, numDstRows: T, numSrcRows: this.options.maxTokensPerStep },
      ),
      ...table.map((part) =>
        prepareEmbeddingGather(
          gpu,
          { ids: v('ids'), table: part.weight, out: v('h'), errors: this.flags('embedding-gather') },
          { numTokens: T, vocab: part.rows, dim: H, part: { first: part.first, total: c.vocabSize } },
        ),
      ),
    ]);
    d.push(...gathers, splice);
    const deepstack: KernelDispatch[] = [];
    const eps = c.rmsNormEps;
    const attention = new Set<Dispatch>();
    const attentionSplits: PagedAttentionSplit[] = [];
    const attentionShape: PagedAttentionShape = {
      numTokens: T,
      numHeads: c.numHeads,
      numKvHeads: c.numKvHeads,
      headDim: c.headDim,
      rowStride: qkvWidth,
      numSeqs: S + 1,
      maxBlocksPerSeq: this.maxBlocksPerSeq,
      blockSize: this.kv.blockSize,
      numSlots: this.kv.numSlots,
    };
    // Decode steps (few rows) of the fused plan: each layer's norms fused into its products.
    const fused = this.fusedRows(T);
    for (let l = 0; l < c.numLayers; l++) {
      const w = (name: string) => weights.get(`text.layers.${l}.${name}`);
      const m = (name: string) => weights.matrix(`text.layers.${l}.${name}`); // in the loaded dtype
      // The fused plan's layers read h from one buffer and leave it in the other (h, h2 by turns): each
      // decode-gate-up workgroup reads the whole row and writes its share of h + the attention's parts.
      const hOut = fused ? this.hAfter(l) : 'h';
      const steps = fused
        ? [
            this.fusedLayerInput(l, T),
            this.fusedAttention(l, T, attentionShape),
            prepareDecodeGateUp(
              gpu,
              {
                x: v(this.hAfter(l - 1)),
                part: this.parts(T),
                hOut: v(hOut),
                weight: m('gate_up'),
                consts: this.consts.whole,
                act: v('act'),
              },
              { M: T, K: H, I: c.intermediateSize, parts: this.parts(T).shape[1]! },
              this.consts.offsetOf(`ln2.${l}`),
              this.fusedOptions(),
            ),
          ]
        : [
            ...this.separateLayerInput(l, T),
            preparePagedAttention(
              gpu,
              {
                qkv: v('qkv'),
                tokenSeq: v('tokenSeq'),
                tokenPos: v('positions'),
                blockTables: this.t.blockTables,
                kCache: this.kv.k[l],
                vCache: this.kv.v[l],
                out: v('attn'),
              },
              attentionShape,
              { partial: this.t.attnPartial },
            ),
            // The residual adds are the matmuls' epilogues: h += a·Woᵀ, h += act·Wdownᵀ.
            prepareMatmul(
              gpu,
              { x: v('attn'), weight: m('o'), y: v('h') },
              { M: T, N: H, K: c.numHeads * c.headDim },
              { accumulate: true },
            ),
            prepareRmsNorm(gpu, { x: v('h'), weight: w('ln2'), y: v('x') }, { rows: T, dim: H }, { eps }),
            prepareMatmul(gpu, { x: v('x'), weight: m('gate_up'), y: v('gu') }, { M: T, N: 2 * c.intermediateSize, K: H }),
            prepareSwiglu(gpu, { x: v('gu'), y: v('act') }, { rows: T, dim: c.intermediateSize }),
          ];
      const attentionAt = fused ? 1 : steps.length - 5;
      steps.push(
        prepareMatmul(gpu, { x: v('act'), weight: m('down'), y: v(hOut) }, { M: T, N: H, K: c.intermediateSize }, { accumulate: true }),
      );
      const prepared = await prepareAll(steps).catch((e: unknown) => {
        release();
        throw e;
      });
      d.push(...prepared);
      if (l < (c.deepstackLayers ?? 0)) {
        // Built for T rows like the splice; each step writes its row count (and this level's first row).
        const add = await prepareSplice(
          gpu,
          { src: this.t.deepstack, rows: v('spliceRows'), dst: v(hOut), errors: this.flags('splice') },
          {
            numRows: T,
            dim: H,
            numDstRows: T,
            numSrcRows: c.deepstackLayers! * this.options.maxTokensPerStep,
            srcRowOffset: l * this.options.maxTokensPerStep,
          },
          { add: true },
        ).catch((e: unknown) => {
          release();
          throw e;
        });
        d.push(add);
        deepstack.push(add);
      }
      const attn = prepared[attentionAt]!;
      attention.add(leafDispatches([attn])[0]); // the kernel that reads the keys (the split plan's combine follows it)
      if (attn instanceof PagedAttentionSplit) attentionSplits.push(attn);
    }
    const media = new Set<Dispatch>([splice, ...deepstack]);
    const textOnly = d.filter((x) => !media.has(x));
    return { dispatches: d, splice, deepstack, textOnly, attention, attentionShape, attentionSplits };
  }

  private async buildHead(T: number, R: number): Promise<HeadPlan> {
    const { gpu, weights } = this;
    const c = this.config.text;
    const H = c.hiddenSize;
    const head = weights.rowParts('text.lm_head');
    // Where the body leaves h: the fused plan's layers alternate between two buffers.
    const h = this.fusedRows(T) ? this.hAfter(c.numLayers - 1) : 'h';
    // The head by parts of rows when it is larger than one binding: each part writes its logits' columns.
    const columns = (part: (typeof head)[number]) => (head.length > 1 ? { yColumns: { offset: part.first, stride: c.vocabSize } } : {});
    const logits: Array<Promise<Dispatch>> = this.fusedRows(R)
      ? head.map((part) =>
          prepareDecodeHead(
            gpu,
            { x: this.rows(h, T), weight: part.weight, consts: this.consts.whole, ints: this.ints.whole, y: this.rows('logits', R) },
            { M: R, N: part.rows, K: H, numRows: T },
            { ln: this.consts.offsetOf('norm'), rows: this.ints.offsetOf('headRows') },
            { ...this.fusedOptions(), ...columns(part) },
          ),
        )
      : [
          prepareEmbeddingGather(
            gpu,
            { ids: this.rows('headRows', R), table: this.rows(h, T), out: this.rows('hl', R), errors: this.flags('head-gather') },
            { numTokens: R, vocab: T, dim: H },
          ),
          prepareRmsNorm(
            gpu,
            { x: this.rows('hl', R), weight: weights.get('text.norm'), y: this.rows('xl', R) },
            { rows: R, dim: H },
            { eps: c.rmsNormEps },
          ),
          ...head.map((part) =>
            prepareMatmul(
              gpu,
              { x: this.rows('xl', R), weight: part.weight, y: this.rows('logits', R) },
              { M: R, N: part.rows, K: H },
              columns(part),
            ),
          ),
        ];
    const d: Dispatch[] = await prepareAll<Dispatch>([
      ...logits,
      prepareArgmax(gpu, { x: this.rows('logits', R), out: this.nextIds(R) }, { rows: R, cols: c.vocabSize }),
      prepareSample(
        gpu,
        { logits: this.rows('logits', R), rowParams: this.rows('rowParams', R), out: this.nextIds(R) },
        { rows: R, vocab: c.vocabSize },
      ),
    ]);
    const n = d.length;
    return { dispatches: d, logits: d.slice(0, n - 2), argmax: d[n - 2]!, sample: d[n - 1] as KernelDispatch };
  }

  private body(T: number): Promise<BodyPlan> {
    return this.cached(this.bodies, T, () => this.buildBody(T));
  }

  /** The head reads rows of h as a table of T rows, so its plan depends on the body's bucket too. */
  private head(T: number, R: number): Promise<HeadPlan> {
    return this.cached(this.heads, T * 65536 + R, () => this.buildHead(T, R));
  }

  /**
   * A plan from `plans`, built once: callers that ask while it is being built wait for the same build.
   * (Steps run one at a time, so the KV buffers never grow while a body plan is being built.)
   */
  private async cached<P extends BodyPlan | HeadPlan>(plans: Map<number, P>, key: number, build: () => Promise<P>): Promise<P> {
    const ready = plans.get(key);
    if (ready) return ready;
    const buildKey = `${plans === (this.bodies as Map<number, unknown>) ? 'body' : 'head'}:${key}`;
    let building = this.building.get(buildKey) as Promise<P> | undefined;
    if (!building) {
      building = build()
        .then((plan) => {
          plans.set(key, plan);
          return plan;
        })
        .finally(() => this.building.delete(buildKey));
      this.building.set(buildKey, building);
    }
    return building;
  }

  /**
   * Compile the plans (pipelines, bind groups) of steps of these shapes now rather than on first use, all
   * at once: their pipelines compile concurrently. `headRows` (default 1): rows that sample, one per
   * sequence (a batched decode step of 4 sequences samples 4 rows).
   */
  async warmUp(
    steps: ReadonlyArray<{ rows: number; headRows?: number }> = [{ rows: this.tokenBuckets[0] }],
    onPlan?: (done: number, total: number) => void,
  ): Promise<void> {
    const bodies = [...new Set(steps.map((s) => bucketFor(s.rows, this.tokenBuckets)))];
    const heads = [...new Map(steps.map((s) => [`${s.rows},${s.headRows ?? 1}`, s])).values()].map((s) => ({
      T: bucketFor(s.rows, this.tokenBuckets),
      R: bucketFor(s.headRows ?? 1, this.headBuckets),
    }));
    const total = bodies.length + heads.length;
    let done = 0;
    const count = () => onPlan?.(++done, total);
    await Promise.all([...bodies.map((T) => this.body(T).then(count)), ...heads.map(({ T, R }) => this.head(T, R).then(count))]);
  }

  /**
   * Run one step; resolves with the next id of every head row once the GPU is done. With a timer (profiles
   * only) each dispatch is timed on its own (dispatch-timer.ts); the results are the same.
   */
  async step(input: StepInput, options: { readLogits?: boolean; timer?: DispatchTimer } = {}): Promise<StepOutput> {
    if (this.destroyed) throw new InternalError('LanguageModel used after destroy()');
    const { gpu } = this;
    const n = input.ids.length;
    const S = input.numSeqs;
    const R = input.headRows.length;
    const c = this.config.text;
    if (n < 1 || n > this.options.maxTokensPerStep) {
      throw new InternalError(`step of ${n} tokens; this model was set up for 1..${this.options.maxTokensPerStep}`);
    }
    if (S < 1 || S > this.options.maxSeqs) throw new InternalError(`step over ${S} sequences; max ${this.options.maxSeqs}`);
    if (R > S || input.sampling.length !== R)
      throw new InternalError(`step with ${R} head rows, ${input.sampling.length} sampling entries, ${S} sequences`);
    for (const id of input.ids) {
      if (id >= c.vocabSize) throw new InternalError(`token id ${id} is outside the vocabulary of ${c.vocabSize}`);
    }
    this.syncKvSize();
    const T = bucketFor(n, this.tokenBuckets);
    const body = await this.body(T);
    const Rb = R > 0 ? bucketFor(R, this.headBuckets) : 0;
    const head = Rb > 0 ? await this.head(T, Rb) : undefined;
    // The fused kernels flag nothing on the GPU: what the separate ones would flag is checked here first.
    const bad = [
      ...(this.fusedRows(T) ? outOfRange(input, c.maxPositions, this.kv.numSlots) : []),
      ...(Rb > 0 && this.fusedRows(Rb) ? countOutOfRange('head-gather', input.headRows, n) : []),
    ];
    if (bad.length > 0) throw new GpuBoundsError(bad);

    // Inputs, padded to T rows: pad rows belong to the pad sequence and write the pad slot.
    const pad = (a: Uint32Array, value: number) => {
      if (a.length === T) return a;
      const out = new Uint32Array(T).fill(value);
      out.set(a);
      return out;
    };
    gpu.write(this.rows('ids', T), pad(input.ids, 0));
    gpu.write(this.rows('tokenSeq', T), pad(input.tokenSeq, this.padSeq));
    gpu.write(this.rows('positions', T), pad(input.positions, 0));
    if (c.mrope) gpu.write(this.ropePositions(T), mropeRows(input, T));
    gpu.write(this.rows('slots', T), pad(input.slots, this.padSlot));
    gpu.write(this.rows('blockTables', S), input.blockTables);
    // The longest context among the rows (pad rows attend to one key) sets how many runs of keys the
    // split attention dispatches this step.
    let maxCtx = 1;
    for (const p of input.positions) maxCtx = Math.max(maxCtx, p + 1);
    for (const a of body.attentionSplits) a.setContext(maxCtx);
    const spliceRows = input.splice?.rows.length ?? 0;
    const dispatches = [...(spliceRows > 0 ? body.dispatches : body.textOnly)];
    if (spliceRows > 0) {
      const sp = input.splice!;
      if (sp.data.length !== spliceRows * c.hiddenSize)
        throw new InternalError(`splice of ${spliceRows} rows got ${sp.data.length / c.hiddenSize} rows of data`);
      gpu.write(this.rows('spliceRows', spliceRows), sp.rows);
      gpu.write(this.rows('staged', spliceRows), sp.data);
      body.splice.writeParams(
        packParams([
          ['u32', spliceRows],
          ['u32', c.hiddenSize],
          ['u32', T],
          ['u32', 0],
        ]),
      );
      this.stageDeepstack(body, sp, T);
    }
    if (head) {
      const rows = new Uint32Array(Rb);
      rows.set(input.headRows);
      gpu.write(this.rows('headRows', Rb), rows);
      const params = [...input.sampling];
      while (params.length < Rb) params.push({ temperature: 0, topK: 0, topP: 1, seed: 0, step: 0 });
      gpu.write(this.rows('rowParams', Rb), new Uint32Array(packRowParams(params)));
      // The processors go between the logits and argmax.
      const adjust = await this.adjust.prepare(input.adjust, Rb);
      const sample = input.sampling.some((p) => p.temperature > 0);
      dispatches.push(...head.logits, ...(adjust ? [adjust] : []), head.argmax, ...(sample ? [head.sample] : []));
    }
    this.lastStep = {
      numTokens: n,
      numPaddedTokens: T,
      numHeadRows: R,
      numDispatches: leafDispatches(dispatches).length,
      numCommandBuffers: 1,
      numReadbacks: 1,
      readbackBytes: this.readBytes,
      encodeMs: 0,
    };
    // One command buffer: the layers, the head, and the copy of flags + sampled ids to a staging buffer.
    let bytes: Uint8Array;
    if (options.timer) {
      await options.timer.run(dispatches, 'language-model', (d) => this.stepCost(d, body, input));
      bytes = await gpu.readBytes(this.flagsBuffer, 0, this.readBytes);
    } else {
      bytes = await gpu.encodeAndRead(
        (e) => {
          const t0 = performance.now();
          encodeDispatches(e, dispatches, 'language-model');
          this.lastStep.encodeMs = performance.now() - t0;
        },
        this.flagsBuffer,
        0,
        this.readBytes,
        'language-model',
      );
    }
    this.checkFlags(bytes);
    const out: StepOutput = {
      ids: new Uint32Array(bytes.buffer.slice(bytes.byteOffset + this.idsOffset, bytes.byteOffset + this.idsOffset + R * 4)),
    };
    if (options.readLogits && R > 0) {
      out.logits = (await gpu.readF32(this.rows('logits', R))).slice();
      this.lastStep.numReadbacks++;
      this.lastStep.numCommandBuffers++;
      this.lastStep.readbackBytes += R * c.vocabSize * 4;
    }
    return out;
  }

  /** Each DeepStack level's rows into its block of the staging buffer, and its add's row count. */
  private stageDeepstack(body: BodyPlan, sp: NonNullable<StepInput['splice']>, T: number): void {
    const levels = body.deepstack.length;
    if (levels === 0) return;
    const n = sp.rows.length;
    const H = this.config.text.hiddenSize;
    const C = this.options.maxTokensPerStep;
    if (sp.deepstack?.length !== levels || sp.deepstack.some((x) => x.length !== n * H)) {
      throw new InternalError(
        `a step splicing ${n} media rows needs ${levels} DeepStack levels of ${n} rows; got ${sp.deepstack?.map((x) => x.length / H).join(', ') ?? 'none'}`,
      );
    }
    body.deepstack.forEach((add, l) => {
      const t = this.t.deepstack;
      this.gpu.write({ ...t, shape: [n, H], offsetBytes: t.offsetBytes + l * C * H * 4 }, sp.deepstack![l]);
      add.writeParams(
        packParams([
          ['u32', n],
          ['u32', H],
          ['u32', T],
          ['u32', l * C],
        ]),
      );
    });
  }

  /**
   * The work of the dispatches whose cost depends on the step (profiles): attention over the keys these
   * positions reach (pad rows: one key each, in the pad block), the splice over the rows it really copies.
   */
  private stepCost(d: Dispatch, body: BodyPlan, input: StepInput): DispatchCost | undefined {
    if (d === body.splice || body.deepstack.includes(d as KernelDispatch))
      return spliceCost(input.splice?.rows.length ?? 0, this.config.text.hiddenSize);
    if (!body.attention.has(d)) return undefined;
    const numPadRows = body.attentionShape.numTokens - input.ids.length;
    const contextLength = new Map<number, number>();
    let attended = numPadRows;
    input.positions.forEach((p, i) => {
      attended += p + 1;
      contextLength.set(input.tokenSeq[i], Math.max(contextLength.get(input.tokenSeq[i]) ?? 0, p + 1));
    });
    const distinct = [...contextLength.values()].reduce((a, n) => a + n, numPadRows > 0 ? 1 : 0);
    return pagedAttentionCost(body.attentionShape, { attended, distinct });
  }

  /** Raise the kernels' out-of-range flags read back with this step (and clear them for the next). */
  private checkFlags(bytes: Uint8Array): void {
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const bad: Array<{ kernel: string; count: number; maxIndex: number }> = [];
    FLAG_KERNELS.forEach((kernel, i) => {
      const count = view.getUint32(i * this.flagStride, true);
      if (count > 0) bad.push({ kernel, count, maxIndex: view.getUint32(i * this.flagStride + 4, true) });
    });
    if (bad.length === 0) return;
    this.gpu.device.queue.writeBuffer(this.flagsBuffer, 0, new Uint8Array(this.idsOffset));
    throw new GpuBoundsError(bad);
  }

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const p of this.bodies.values()) for (const d of p.dispatches) d.release();
    for (const p of this.heads.values()) for (const d of p.dispatches) d.release();
    this.bodies.clear();
    this.heads.clear();
    this.adjust.destroy();
    for (const [name, t] of Object.entries(this.t)) if (!this.ints.has(name) && name !== 'rope') this.gpu.release(t);
    this.gpu.release(this.ints.whole);
    this.gpu.release(this.consts.whole);
    this.gpu.memory.destroyBuffer(this.flagsBuffer);
  }
}

/**
 * The [3, T] M-RoPE rows of a step padded to T rows: the input's own rows, or its KV positions in all
 * three (text tokens); pad rows take position 0.
 */
function mropeRows(input: StepInput, T: number): Uint32Array {
  const n = input.ids.length;
  const out = new Uint32Array(3 * T);
  const given = input.ropePositions;
  if (given && given.length !== 3 * n) throw new InternalError(`step of ${n} tokens got ${given.length / 3} M-RoPE positions per axis`);
  for (let r = 0; r < 3; r++) out.set(given ? given.subarray(r * n, (r + 1) * n) : input.positions, r * T);
  return out;
}

type BoundsFlag = { kernel: string; count: number; maxIndex: number };

/** What rope.wgsl and kv-write.wgsl would flag for these rows: positions past the table, slots past the cache. */
function outOfRange(input: StepInput, maxPositions: number, numSlots: number): BoundsFlag[] {
  return [
    ...countOutOfRange('rope', input.ropePositions ?? input.positions, maxPositions, input.ids.length),
    ...countOutOfRange('kv-write', input.slots, numSlots),
  ];
}

/**
 * The flag of `values` at or above `limit`, as a kernel counts them: one per row (`rows` rows, each with
 * values.length / rows values: M-RoPE's three positions), the largest value.
 */
function countOutOfRange(kernel: string, values: Uint32Array, limit: number, rows = values.length): BoundsFlag[] {
  let maxIndex = 0;
  const badRows = new Set<number>();
  values.forEach((v, i) => {
    if (v < limit) return;
    badRows.add(i % rows);
    maxIndex = Math.max(maxIndex, v);
  });
  return badRows.size > 0 ? [{ kernel, count: badRows.size, maxIndex }] : [];
}
