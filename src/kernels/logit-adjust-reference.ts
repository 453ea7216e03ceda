// What the logit processors mean, in plain TypeScript: a row's penalties, then its token mask, applied
// to its logits in place before argmax and the sampler. The GPU kernel (logit-adjust.ts,
// logit-adjust.wgsl) implements exactly this and is tested against it; the CPU backend (src/model/ort/)
// applies it directly. No WGSL here, so it loads anywhere.

/** What a masked token's logit becomes: the lowest finite f32 (finite, so argmax does not flag the row). */
export const MASKED_LOGIT = -3.4028234663852886e38;

/** Processors for one row's logits. */
export interface LogitAdjust {
  /** logits[ids[i]] -= amounts[i] (ids unique): OpenAI's frequency and presence penalties. */
  penalties?: { ids: Uint32Array; amounts: Float32Array };
  /**
   * The tokens that may come next: bit j of word i is token 32 i + j (set = allowed), ceil(vocab / 32)
   * words (a grammar's next-token bitmask). Every other token's logit becomes MASKED_LOGIT.
   */
  allowed?: Int32Array | Uint32Array;
}

/** Words of a vocab-wide bitmask. */
export function maskWords(vocab: number): number {
  return Math.ceil(vocab / 32);
}

/** Whether `id` is allowed by `mask`. */
export function isAllowed(mask: Int32Array | Uint32Array, id: number): boolean {
  return ((mask[id >>> 5]! >>> (id & 31)) & 1) !== 0;
}

/** Apply each row's processors to `logits` ([rows, vocab] f32) in place, rounding as the GPU does (f32). */
export function adjustLogitsReference(logits: Float32Array, vocab: number, adjust: ReadonlyArray<LogitAdjust | undefined>): void {
  adjust.forEach((a, r) => {
    if (!a) return;
    const row = logits.subarray(r * vocab, (r + 1) * vocab);
    const { penalties, allowed } = a;
    if (penalties) {
      penalties.ids.forEach((id, i) => {
        if (id < vocab && (!allowed || isAllowed(allowed, id))) row[id] = Math.fround(row[id]! - penalties.amounts[i]!);
      });
    }
    if (allowed) {
      for (let id = 0; id < vocab; id++) if (!isAllowed(allowed, id)) row[id] = MASKED_LOGIT;
    }
  });
}

/**
 * OpenAI's penalty amounts for a row: count * frequency + (count > 0) * presence per token of the output
 * so far (`counts`: token id -> times sampled). Undefined when both factors are 0.
 */
export function penaltyAmounts(
  counts: ReadonlyMap<number, number>,
  frequency: number,
  presence: number,
): LogitAdjust['penalties'] | undefined {
  if ((frequency === 0 && presence === 0) || counts.size === 0) return undefined;
  const ids = new Uint32Array(counts.size);
  const amounts = new Float32Array(counts.size);
  let i = 0;
  for (const [id, n] of counts) {
    ids[i] = id;
    amounts[i] = n * frequency + presence;
    i++;
  }
  return { ids, amounts };
}
