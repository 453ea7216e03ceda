// Greedy decoding straight on Hugging Face's decoder_model_merged graph, the way transformers.js chains the
// sessions: the prompt's embeddings with an empty past, then one token at a time, embed_tokens for its
// embedding and the step's present.* as the next past. Works with onnxruntime-web and onnxruntime-node
// (both are onnxruntime-common's API). Used by the export checks (bench/model/onnx-check.ts,
// bench/audio/onnx-check.ts) and the raw onnxruntime side of bench:model's cpu column.

import type { InferenceSession, Tensor } from 'onnxruntime-common';

export interface GreedyRun {
  /** The onnxruntime module's Tensor class. */
  Tensor: typeof Tensor;
  embed: InferenceSession;
  decoder: InferenceSession;
  /** [prompt tokens, hidden] f32, media rows spliced in. */
  prompt: Float32Array;
  hidden: number;
  layers: number;
  kvHeads: number;
  headDim: number;
  maxNewTokens: number;
  stopIds?: ReadonlySet<number>;
  /** Each step's last-row logits, as they come. */
  onLogits?: (step: number, logits: Float32Array) => void;
}

export interface GreedyResult {
  tokens: number[];
  /** performance.now() when the first token was picked, and when the last one was. */
  firstTokenAt: number;
  endAt: number;
}

function argmax(x: Float32Array): number {
  let best = 0;
  for (let i = 1; i < x.length; i++) if (x[i]! > x[best]!) best = i;
  return best;
}

export async function greedyDecode(r: GreedyRun): Promise<GreedyResult> {
  const { Tensor: T, hidden } = r;
  const keepsLogits = r.decoder.inputNames.includes('num_logits_to_keep');
  let past: Record<string, Tensor> = {};
  for (let i = 0; i < r.layers; i++) {
    for (const kind of ['key', 'value'])
      past[`past_key_values.${i}.${kind}`] = new T('float32', new Float32Array(0), [1, r.kvHeads, 0, r.headDim]);
  }
  const tokens: number[] = [];
  let embeds = r.prompt;
  let total = r.prompt.length / hidden;
  let firstTokenAt = 0;
  for (let step = 0; step < r.maxNewTokens; step++) {
    const seq = embeds.length / hidden;
    const out = await r.decoder.run({
      inputs_embeds: new T('float32', embeds, [1, seq, hidden]),
      attention_mask: new T('int64', new BigInt64Array(total).fill(1n), [1, total]),
      position_ids: new T(
        'int64',
        BigInt64Array.from({ length: seq }, (_, j) => BigInt(total - seq + j)),
        [1, seq],
      ),
      ...(keepsLogits ? { num_logits_to_keep: new T('int64', BigInt64Array.of(1n), []) } : {}),
      ...past,
    });
    const logits = out.logits!.data as Float32Array;
    const vocab = out.logits!.dims[2]!;
    const last = logits.subarray(logits.length - vocab);
    r.onLogits?.(step, last);
    const next = argmax(last);
    tokens.push(next);
    if (step === 0) firstTokenAt = performance.now();
    if (r.stopIds?.has(next) || step === r.maxNewTokens - 1) break;
    past = {};
    for (const [name, t] of Object.entries(out)) if (name.startsWith('present.')) past[name.replace('present.', 'past_key_values.')] = t;
    const e = await r.embed.run({ input_ids: new T('int64', BigInt64Array.of(BigInt(next)), [1, 1]) });
    embeds = e.inputs_embeds!.data as Float32Array;
    total += 1;
  }
  return { tokens, firstTokenAt, endAt: performance.now() };
}
