// The language model as two onnxruntime sessions in Hugging Face's export layout: embed_tokens (ids -> rows)
// and decoder_model_merged (rows + attention mask + positions + past K/V -> logits + present K/V).
//
// forward() runs rows that each add the same number of new tokens after their past (kv-rows.ts: the rows'
// K/V side by side, left-padded to the longest, the padding masked out):
//
//   row i (pad_i, past p_i = padded - pad_i):   mask [ 0 … 0 | 1 … 1 | 1 … 1 ]   positions p_i … p_i + n - 1
//                                                      pad_i    p_i     n new

import { InternalError } from '../../errors';
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
   * Rows that each add `n` tokens after their past. `embeds` is [rows, n, hidden], in the past's row order.
   * Returns each row's last-position logits ([rows, vocab]) and the rows' K/V with the new tokens.
   */
  async forward(embeds: Float32Array, n: number, past: KvRows): Promise<{ logits: Float32Array; present: KvRows }> {
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
      position_ids: new ort.Tensor('int64', positions, [b, n]),
    };
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
