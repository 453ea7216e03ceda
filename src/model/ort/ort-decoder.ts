// The language model as two onnxruntime sessions in Hugging Face's export layout: embed_tokens (ids -> rows)
// and decoder_model_merged (rows + attention mask + positions + past K/V -> logits + present K/V).
//
// forward() runs rows that each add the same number of new tokens after their past (kv-rows.ts: the rows'
// K/V side by side, left-padded to the longest, the padding masked out):
//
//   row i (pad_i, past p_i = padded - pad_i):   mask [ 0 … 0 | 1 … 1 | 1 … 1 ]   positions p_i … p_i + n - 1
//                                                      pad_i    p_i     n new
//
// A decoder with M-RoPE (Qwen-VL) takes position_ids [3, rows, n] (rows t, h, w: the runner's
// ropePositions, or p_i … on all three when a row has none), and Qwen3-VL's also deepstack_visual_embeds
// [levels, rows, n, hidden] (scripts/onnx/qwen-onnx.ts): each level's vision rows at their tokens, zero
// elsewhere.

import { InternalError, OnnxGraphMismatchError } from '../../errors';
import type { TextConfig } from '../config';
import type { KvRows } from './kv-rows';
import type { OrtModule, OrtSession, OrtTensor } from './ort-api';

export class OrtDecoder {
  readonly pastNames: string[] = [];
  readonly presentNames: string[] = [];
  /** The decoder takes num_logits_to_keep (newer exports): then only the last row's logits are computed. */
  private readonly keepsLogits: boolean;
  readonly hidden: number;
  readonly vocab: number;

  constructor(
    readonly ort: OrtModule,
    readonly embedSession: OrtSession,
    readonly session: OrtSession,
    readonly text: TextConfig,
  ) {
    for (let i = 0; i < text.numLayers; i++) {
      for (const kind of ['key', 'value']) {
        this.pastNames.push(`past_key_values.${i}.${kind}`);
        this.presentNames.push(`present.${i}.${kind}`);
      }
    }
    const missing = [...this.pastNames, 'inputs_embeds', 'attention_mask'].filter((n) => !session.inputNames.includes(n));
    if (missing.length > 0) {
      throw new InternalError(
        `decoder_model_merged.onnx lacks the inputs ${missing.slice(0, 4).join(', ')} of a ${text.numLayers}-layer decoder`,
      );
    }
    if (text.mrope && !session.inputNames.includes('position_ids')) {
      throw new OnnxGraphMismatchError('decoder_model_merged.onnx', 'position_ids [3, batch, seq] (M-RoPE)', 'takes no position_ids');
    }
    const levels = text.deepstackLayers ?? 0;
    if (levels > 0 && !session.inputNames.includes('deepstack_visual_embeds')) {
      // transformers.js's Qwen3-VL layout has no DeepStack input: such a graph answers differently from the checkpoint.
      throw new OnnxGraphMismatchError(
        'decoder_model_merged.onnx',
        `deepstack_visual_embeds [${levels}, batch, seq, ${text.hiddenSize}] (the checkpoint adds vision features in its first ${levels} decoder layers)`,
        'has no such input (the transformers.js layout leaves DeepStack out, so its answers differ from the model)',
      );
    }
    this.keepsLogits = session.inputNames.includes('num_logits_to_keep');
    this.hidden = text.hiddenSize;
    this.vocab = text.vocabSize;
  }

  /** Embedding rows of `ids`, [ids.length, hidden]. */
  async embed(ids: Uint32Array): Promise<Float32Array> {
    const t = new this.ort.Tensor(
      'int64',
      BigInt64Array.from(ids, (v) => BigInt(v)),
      [1, ids.length],
    );
    const out = await this.embedSession.run({ input_ids: t });
    const e = out.inputs_embeds;
    if (!e) throw new InternalError('embed_tokens.onnx gave no inputs_embeds');
    return e.data as Float32Array;
  }

  /**
   * Rows that each add `n` tokens after their past. `embeds` is [rows, n, hidden], in the past's row order;
   * `extras[i]` row i's M-RoPE positions and DeepStack additions, when it has any.
   * Returns each row's last-position logits ([rows, vocab]) and the rows' K/V with the new tokens.
   */
  async forward(
    embeds: Float32Array,
    n: number,
    past: KvRows,
    extras: ReadonlyArray<RowExtras | undefined> = [],
  ): Promise<{ logits: Float32Array; present: KvRows }> {
    const { ort } = this;
    const b = past.pads.length;
    if (embeds.length !== b * n * this.hidden) {
      throw new InternalError(`forward: ${embeds.length} embedding values for ${b} rows of ${n} tokens of width ${this.hidden}`);
    }
    const width = past.padded + n;
    const mask = new BigInt64Array(b * width);
    const positions = new BigInt64Array(b * n);
    past.pads.forEach((pad, i) => {
      mask.fill(1n, i * width + pad, (i + 1) * width);
      const p = past.padded - pad;
      for (let j = 0; j < n; j++) positions[i * n + j] = BigInt(p + j);
    });
    const feeds: Record<string, OrtTensor> = {
      inputs_embeds: new ort.Tensor('float32', embeds, [b, n, this.hidden]),
      attention_mask: new ort.Tensor('int64', mask, [b, width]),
      position_ids: this.text.mrope
        ? new ort.Tensor('int64', this.mropePositions(positions, n, extras), [3, b, n])
        : new ort.Tensor('int64', positions, [b, n]),
    };
    const levels = this.text.deepstackLayers ?? 0;
    if (levels > 0)
      feeds.deepstack_visual_embeds = new ort.Tensor('float32', this.deepstack(levels, b, n, extras), [levels, b, n, this.hidden]);
    this.pastNames.forEach((name, k) => {
      feeds[name] = past.tensors[k]!;
    });
    const out = await this.run(feeds);
    const all = out.logits!.data as Float32Array;
    const perRow = all.length / b;
    let logits = all;
    if (perRow !== this.vocab) {
      // Exports without num_logits_to_keep give every position's logits: keep each row's last.
      logits = new Float32Array(b * this.vocab);
      for (let i = 0; i < b; i++) logits.set(all.subarray((i + 1) * perRow - this.vocab, (i + 1) * perRow), i * this.vocab);
    }
    return { logits, present: { tensors: this.presentNames.map((name) => out[name]!), padded: width, pads: past.pads } };
  }

  /** [3, rows, n]: each row's ropePositions, or its cache positions on all three axes. */
  private mropePositions(positions: BigInt64Array, n: number, extras: ReadonlyArray<RowExtras | undefined>): BigInt64Array {
    const b = positions.length / n;
    const out = new BigInt64Array(3 * b * n);
    for (let i = 0; i < b; i++) {
      const rope = extras[i]?.ropePositions;
      if (rope && rope.length !== 3 * n) throw new InternalError(`forward: row ${i} has ${rope.length} M-RoPE positions for ${n} tokens`);
      for (let a = 0; a < 3; a++) {
        for (let j = 0; j < n; j++) out[(a * b + i) * n + j] = rope ? BigInt(rope[a * n + j]!) : positions[i * n + j]!;
      }
    }
    return out;
  }

  /** [levels, rows, n, hidden]: each row's DeepStack rows at their tokens, zero elsewhere. */
  private deepstack(levels: number, b: number, n: number, extras: ReadonlyArray<RowExtras | undefined>): Float32Array {
    const h = this.hidden;
    const out = new Float32Array(levels * b * n * h);
    for (let i = 0; i < b; i++) {
      for (const seg of extras[i]?.deepstack ?? []) {
        seg.levels.forEach((rows, l) => {
          if (l < levels) out.set(rows, ((l * b + i) * n + seg.offset) * h);
        });
      }
    }
    return out;
  }

  /** Runs the decoder, adding the inputs some exports have (HF Optimum's older merged decoders branch on use_cache_branch). */
  private run(feeds: Record<string, OrtTensor>): Promise<Record<string, OrtTensor>> {
    const names = this.session.inputNames;
    if (this.keepsLogits) feeds.num_logits_to_keep = new this.ort.Tensor('int64', BigInt64Array.of(1n), []);
    if (!names.includes('position_ids')) delete feeds.position_ids;
    if (names.includes('use_cache_branch')) {
      const past = feeds[this.pastNames[0]!]!.dims[2]!;
      feeds.use_cache_branch = new this.ort.Tensor('bool', Uint8Array.of(past > 0 ? 1 : 0), [1]);
    }
    return this.session.run(feeds);
  }
}

/** What a row of forward() carries besides its embeddings. */
export interface RowExtras {
  /** [3, n] M-RoPE positions (rows t, h, w) of the row's new tokens. */
  ropePositions?: Uint32Array;
  /** DeepStack rows: from token `offset` on, each level's [rows, hidden] additions. */
  deepstack?: ReadonlyArray<{ offset: number; levels: readonly Float32Array[] }>;
}
