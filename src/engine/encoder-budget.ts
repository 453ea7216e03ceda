// The scheduler's default encoder budget: how many embedding rows the media encoder may be producing at
// once (the engine option encoderBudget overrides it).

import type { ModelConfig } from '../model/config';

/** Default encoder budget in tiles (times the model's image_seq_len embeddings per tile). */
const DEFAULT_ENCODER_BUDGET_TILES = 32;

/**
 * Embedding rows the encoder may produce at once by default: 32 tiles of an Idefics3 checkpoint, 32
 * audio chunks, or for a Qwen-VL checkpoint (whose images have no tiles) 32 × 64 rows, an image of some
 * 1.6 megapixels (a larger one still runs, alone).
 */
export function defaultEncoderBudget(c: ModelConfig): number {
  return DEFAULT_ENCODER_BUDGET_TILES * (c.vision?.imageSeqLen ?? c.audio?.tokensPerChunk ?? 64);
}
