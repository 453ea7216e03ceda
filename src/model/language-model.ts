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

import { InternalError } from '../errors';
import type { GpuContext } from '../gpu/context';
import { prepareArgmax } from '../kernels/argmax';
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
import { pagedAttentionCost, PagedAttentionSplit, type PagedAttentionShape } from '../kernels/paged-attention';
import { packRowParams, prepareSample } from '../kernels/sample';
import { prepareSplice, spliceCost } from '../kernels/splice';
import type { ModelConfig } from './config';
import type { DecoderParts } from './decoder/decoder-parts';
import { DecoderTensors } from './decoder/decoder-tensors';
import { FUSED_MAX_ROWS, fusable, fusedHeadLogits, fusedLayer, hAfter, makeFusedTensors } from './decoder/layer-fused';
import { separateHeadLogits, separateLayer } from './decoder/layer-separate';
import { checkFusedInput, StepFlags } from './decoder/step-flags';
import { mropeRows, type StepInput, type StepOutput } from './decoder/step-input';
import { HeadAdjust } from './head-adjust';
import type { KvCacheBuffers } from './kv-cache';
import { NO_STEP, type StepStats } from './runner/model-runner';
import { bucketFor, rowBuckets } from './step-buckets';
import type { ModelWeights } from './weights';

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

export class LanguageModel {
  readonly maxBlocksPerSeq: number;
  /** Row counts a step is padded to. */
  readonly tokenBuckets: readonly number[];
  readonly headBuckets: readonly number[];
  /** How steps of at most FUSED_MAX_ROWS rows run (LanguageModelOptions.decodePlan). */
  readonly decodePlan: DecodePlan;
  private readonly tensors: DecoderTensors;
  private readonly flags: StepFlags;
  /** What the layers' and the head's dispatches are built from. */
  private readonly parts: DecoderParts;
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
    this.tensors = new DecoderTensors(gpu, weights, c, { rows: C, seqs: S, maxBlocksPerSeq: this.maxBlocksPerSeq });
    this.adjust = new HeadAdjust(gpu, this.tensors.get('logits'), S, c.vocabSize);
    this.flags = new StepFlags(gpu, S);
    this.parts = { gpu, weights, c, kv, tensors: this.tensors, flags: this.flags };
    const wanted = options.decodePlan ?? (gpu.kernelVariant === 'workgroup' ? 'fused' : 'separate');
    this.decodePlan =
      wanted === 'fused' && fusable(c, weights, this.tensors, gpu.limits.maxStorageBufferBindingSize) ? 'fused' : 'separate';
    if (this.decodePlan === 'fused') makeFusedTensors(this.tensors, c, C);
    this.writePadTable();
  }

  /** Whether a step of T rows (a bucket) runs the fused layers, and a head of R rows the fused head. */
  private fusedRows(rows: number): boolean {
    return this.decodePlan === 'fused' && rows <= FUSED_MAX_ROWS;
  }

  /** The pad sequence's block table: every pad row attends to (and writes) the pad block's first slot only. */
  private writePadTable(): void {
    const padTable = new Uint32Array(this.maxBlocksPerSeq);
    padTable[0] = this.kv.padBlock;
    const blockTables = this.tensors.get('blockTables');
    this.gpu.device.queue.writeBuffer(
      blockTables.buffer,
      blockTables.offsetBytes + this.options.maxSeqs * this.maxBlocksPerSeq * 4,
      padTable,
    );
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

  private async buildBody(T: number): Promise<BodyPlan> {
    const { gpu, weights, tensors } = this;
    const c = this.config.text;
    const H = c.hiddenSize;
    const v = (name: string) => tensors.rows(name, T);
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
        { src: tensors.get('staged'), rows: v('spliceRows'), dst: v('h'), errors: this.flags.of('splice') },
        { numRows: T, dim: H, numDstRows: T, numSrcRows: this.options.maxTokensPerStep },
      ),
      ...table.map((part) =>
        prepareEmbeddingGather(
          gpu,
          { ids: v('ids'), table: part.weight, out: v('h'), errors: this.flags.of('embedding-gather') },
          { numTokens: T, vocab: part.rows, dim: H, part: { first: part.first, total: c.vocabSize } },
        ),
      ),
    ]);
    d.push(...gathers, splice);
    const deepstack: KernelDispatch[] = [];
    const attention = new Set<Dispatch>();
    const attentionSplits: PagedAttentionSplit[] = [];
    const attentionShape: PagedAttentionShape = {
      numTokens: T,
      numHeads: c.numHeads,
      numKvHeads: c.numKvHeads,
      headDim: c.headDim,
      rowStride: (c.numHeads + 2 * c.numKvHeads) * c.headDim,
      numSeqs: this.options.maxSeqs + 1,
      maxBlocksPerSeq: this.maxBlocksPerSeq,
      blockSize: this.kv.blockSize,
      numSlots: this.kv.numSlots,
    };
    // Decode steps (few rows) of the fused plan: a layer in 4 dispatches.
    const layer = this.fusedRows(T) ? fusedLayer : separateLayer;
    for (let l = 0; l < c.numLayers; l++) {
      const { steps, attentionAt, hOut } = layer(this.parts, l, T, attentionShape);
      const prepared = await prepareAll(steps).catch((e: unknown) => {
        release();
        throw e;
      });
      d.push(...prepared);
      if (l < (c.deepstackLayers ?? 0)) {
        // Built for T rows like the splice; each step writes its row count (and this level's first row).
        const add = await prepareSplice(
          gpu,
          { src: tensors.get('deepstack'), rows: v('spliceRows'), dst: v(hOut), errors: this.flags.of('splice') },
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
    const { gpu, tensors } = this;
    const c = this.config.text;
    // Where the body leaves h: the fused plan's layers alternate between two buffers.
    const h = this.fusedRows(T) ? hAfter(c.numLayers - 1) : 'h';
    const logits = this.fusedRows(R) ? fusedHeadLogits(this.parts, T, R, h) : separateHeadLogits(this.parts, T, R, h);
    const d: Dispatch[] = await prepareAll<Dispatch>([
      ...logits,
      prepareArgmax(gpu, { x: tensors.rows('logits', R), out: this.flags.nextIds(R) }, { rows: R, cols: c.vocabSize }),
      prepareSample(
        gpu,
        { logits: tensors.rows('logits', R), rowParams: tensors.rows('rowParams', R), out: this.flags.nextIds(R) },
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
    const { gpu, tensors } = this;
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
    checkFusedInput(input, {
      fusedBody: this.fusedRows(T),
      fusedHead: Rb > 0 && this.fusedRows(Rb),
      maxPositions: c.maxPositions,
      numSlots: this.kv.numSlots,
    });

    // Inputs, padded to T rows: pad rows belong to the pad sequence and write the pad slot.
    const pad = (a: Uint32Array, value: number) => {
      if (a.length === T) return a;
      const out = new Uint32Array(T).fill(value);
      out.set(a);
      return out;
    };
    gpu.write(tensors.rows('ids', T), pad(input.ids, 0));
    gpu.write(tensors.rows('tokenSeq', T), pad(input.tokenSeq, this.padSeq));
    gpu.write(tensors.rows('positions', T), pad(input.positions, 0));
    if (c.mrope) gpu.write(tensors.ropePositions(T), mropeRows(input, T));
    gpu.write(tensors.rows('slots', T), pad(input.slots, this.padSlot));
    gpu.write(tensors.rows('blockTables', S), input.blockTables);
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
      gpu.write(tensors.rows('spliceRows', spliceRows), sp.rows);
      gpu.write(tensors.rows('staged', spliceRows), sp.data);
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
      gpu.write(tensors.rows('headRows', Rb), rows);
      const params = [...input.sampling];
      while (params.length < Rb) params.push({ temperature: 0, topK: 0, topP: 1, seed: 0, step: 0 });
      gpu.write(tensors.rows('rowParams', Rb), new Uint32Array(packRowParams(params)));
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
      readbackBytes: this.flags.readBytes,
      encodeMs: 0,
    };
    // One command buffer: the layers, the head, and the copy of flags + sampled ids to a staging buffer.
    let bytes: Uint8Array;
    if (options.timer) {
      await options.timer.run(dispatches, 'language-model', (d) => this.stepCost(d, body, input));
      bytes = await gpu.readBytes(this.flags.buffer, 0, this.flags.readBytes);
    } else {
      bytes = await gpu.encodeAndRead(
        (e) => {
          const t0 = performance.now();
          encodeDispatches(e, dispatches, 'language-model');
          this.lastStep.encodeMs = performance.now() - t0;
        },
        this.flags.buffer,
        0,
        this.flags.readBytes,
        'language-model',
      );
    }
    this.flags.check(bytes);
    const out: StepOutput = { ids: this.flags.ids(bytes, R) };
    if (options.readLogits && R > 0) {
      out.logits = (await gpu.readF32(tensors.rows('logits', R))).slice();
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
      const t = this.tensors.get('deepstack');
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

  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    for (const p of this.bodies.values()) for (const d of p.dispatches) d.release();
    for (const p of this.heads.values()) for (const d of p.dispatches) d.release();
    this.bodies.clear();
    this.heads.clear();
    this.adjust.destroy();
    this.tensors.destroy();
    this.flags.destroy();
  }
}
