// A checkpoint at the real SmolVLM-256M config schema but a size that loads in milliseconds, in memory.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { MemorySource } from '../../src/io/model-source';
import { parseModelConfig } from '../../src/families/registry';
import type { TensorToWrite } from '../../src/model/weights/safetensors-writer';
import { weightLayout } from '../../src/model/weight-layout';
import { randomUniform } from '../../src/selfcheck/random';

export const REAL_CONFIG = JSON.parse(
  readFileSync(resolve(import.meta.dirname, '../fixtures/models/SmolVLM-256M-Instruct/config.json'), 'utf8'),
);

/** The real config schema at a size that loads in milliseconds. */
export function microConfig(overrides: Record<string, unknown> = {}): Record<string, any> {
  const c = structuredClone(REAL_CONFIG);
  c.vision_config = {
    ...c.vision_config,
    hidden_size: 128,
    intermediate_size: 64,
    num_hidden_layers: 1,
    num_attention_heads: 2,
    image_size: 32,
    patch_size: 16,
  };
  c.text_config = {
    ...c.text_config,
    hidden_size: 64,
    intermediate_size: 32,
    num_hidden_layers: 1,
    num_attention_heads: 1,
    num_key_value_heads: 1,
    head_dim: 64,
    vocab_size: 100,
    max_position_embeddings: 64,
  };
  c.scale_factor = 2;
  c.image_token_id = 99;
  return { ...c, ...overrides };
}

export function tensorsFor(config: Record<string, any>, dtype: TensorToWrite['dtype'] = 'F32'): TensorToWrite[] {
  return weightLayout(parseModelConfig(config)).checkpoint.map((t, i) => ({
    name: t.name,
    shape: t.shape,
    dtype,
    data: randomUniform(
      t.shape.reduce((a, b) => a * b, 1),
      i + 1,
    ),
  }));
}

export function microSource(config: Record<string, any>, files: Record<string, Uint8Array>): MemorySource {
  return new MemorySource({ 'config.json': JSON.stringify(config), ...files }, 'micro checkpoint');
}
