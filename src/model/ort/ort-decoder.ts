// The language model as two onnxruntime sessions in Hugging Face's export layout: embed_tokens (ids -> rows)
// and decoder_model_merged (rows + attention mask + positions + past K/V -> logits + present K/V).
//
// Each sequence's K/V lives in the runner as the decoder's own `present` tensors, [1, kv heads, tokens,
// head_dim] per layer and kind, fed back as `past` on its next step: a sequence running alone costs no copy.
// Sequences decoding together (one new token each) run as one batch: their pasts are laid side by side,
// left-padded to the longest with the padding masked out (attention_mask 0), and each row's part of the
// batch's `present` is cut back out afterwards.
//
//   row i (past p_i, longest P):   past  [ 0 … 0 | K/V of its p_i tokens ]     mask [ 0 … 0 | 1 … 1 | 1 ]
//                                          P - p_i                                P - p_i    p_i    new

import { InternalError } from '../../errors';
import type { TextConfig } from '../config';
import type { OrtModule, OrtSession, OrtTensor } from './ort-api';

/** One sequence's K/V: present tensors per layer, [key, value] interleaved. */
export interface SeqKv {
  tensors: OrtTensor[];
  /** Tokens held. */
  length: number;
}

export interface DecoderRow {
  /** [n, hidden] input rows (embeddings, media rows spliced in). */
  embeds: Float32Array;
  n: number;
  /** The sequence's K/V so far (undefined: none yet). */
  past: SeqKv | undefined;
}

export class OrtDecoder {
  readonly pastNames: string[] = [];
  readonly presentNames: string[] = [];
  /** The decoder takes num_logits_to_keep (newer exports): then only the last row's logits are computed. */
  private readonly keepsLogits: boolean;
  readonly hidden: number;
  readonly vocab: number;

  constructor(
    private readonly ort: OrtModule,
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

  /** One sequence alone: its n rows after its past. Returns the last row's logits and the new K/V. */
  async runOne(row: DecoderRow): Promise<{ logits: Float32Array; kv: SeqKv }> {
    const { text, ort } = this;
    const past = row.past?.length ?? 0;
    const total = past + row.n;
    const feeds: Record<string, OrtTensor> = {
      inputs_embeds: new ort.Tensor('float32', row.embeds, [1, row.n, this.hidden]),
      attention_mask: new ort.Tensor('int64', new BigInt64Array(total).fill(1n), [1, total]),
      position_ids: new ort.Tensor(
        'int64',
        BigInt64Array.from({ length: row.n }, (_, j) => BigInt(past + j)),
        [1, row.n],
      ),
    };
    this.pastNames.forEach((name, i) => {
      feeds[name] = row.past?.tensors[i] ?? new ort.Tensor('float32', new Float32Array(0), [1, text.numKvHeads, 0, text.headDim]);
    });
    const out = await this.run(feeds);
    const logits = out.logits!.data as Float32Array;
    const rows = logits.length / this.vocab;
    return { logits: logits.subarray((rows - 1) * this.vocab), kv: { tensors: this.presentNames.map((n) => out[n]!), length: total } };
  }

  /** Sequences that decode one token each, as one batch. Returns each row's logits and new K/V. */
  async runBatch(rows: readonly DecoderRow[]): Promise<Array<{ logits: Float32Array; kv: SeqKv }>> {
    if (rows.length === 1) return [await this.runOne(rows[0]!)];
    const { text, ort } = this;
    const b = rows.length;
    const kvh = text.numKvHeads;
    const hd = text.headDim;
    if (rows.some((r) => r.n !== 1)) throw new InternalError('runBatch takes one new token per sequence');
    const P = Math.max(...rows.map((r) => r.past?.length ?? 0));
    const embeds = new Float32Array(b * this.hidden);
    for (const [i, r] of rows.entries()) embeds.set(r.embeds, i * this.hidden);
    const mask = new BigInt64Array(b * (P + 1));
    const positions = new BigInt64Array(b);
    rows.forEach((r, i) => {
      const p = r.past?.length ?? 0;
      mask.fill(1n, i * (P + 1) + (P - p), (i + 1) * (P + 1));
      positions[i] = BigInt(p);
    });
    const feeds: Record<string, OrtTensor> = {
      inputs_embeds: new ort.Tensor('float32', embeds, [b, 1, this.hidden]),
      attention_mask: new ort.Tensor('int64', mask, [b, P + 1]),
      position_ids: new ort.Tensor('int64', positions, [b, 1]),
    };
    this.pastNames.forEach((name, k) => {
      const data = new Float32Array(b * kvh * P * hd);
      rows.forEach((r, i) => {
        const p = r.past?.length ?? 0;
        if (p === 0) return;
        const src = r.past!.tensors[k]!.data as Float32Array;
        for (let h = 0; h < kvh; h++) data.set(src.subarray(h * p * hd, (h + 1) * p * hd), ((i * kvh + h) * P + (P - p)) * hd);
      });
      feeds[name] = new ort.Tensor('float32', data, [b, kvh, P, hd]);
    });
    const out = await this.run(feeds);
    const logits = out.logits!.data as Float32Array;
    const perRow = logits.length / b;
    return rows.map((r, i) => {
      const p = r.past?.length ?? 0;
      const tensors = this.presentNames.map((n) => {
        const src = out[n]!.data as Float32Array;
        const mine = new Float32Array(kvh * (p + 1) * hd);
        for (let h = 0; h < kvh; h++) {
          const from = ((i * kvh + h) * (P + 1) + (P - p)) * hd;
          mine.set(src.subarray(from, from + (p + 1) * hd), h * (p + 1) * hd);
        }
        return new ort.Tensor('float32', mine, [1, kvh, p + 1, hd]);
      });
      return { logits: logits.subarray((i + 1) * perRow - this.vocab, (i + 1) * perRow), kv: { tensors, length: p + 1 } };
    });
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
