// The pieces every tiny checkpoint is made of (make-tiny.ts, make-tiny-video.ts, make-bench-model.ts): the
// reduced sizes of smolvlm-tiny, a config at those sizes from a real one, and deterministic random tensors
// for a config's checkpoint layout (each seeded by its name, so the files are byte-identical on every run).

import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { parseModelConfig } from '../src/families/registry';
import type { ModelConfig } from '../src/model/config';
import { weightLayout } from '../src/model/weight-layout';
import type { TensorToWrite } from '../src/model/weights/safetensors-writer';
import { mulberry32 } from '../src/selfcheck/random';

/** Reduced sizes of one tiny checkpoint; everything else is the real SmolVLM-256M-Instruct config. */
export interface TinySizes {
  vision: Record<string, number>;
  text: Record<string, number>;
  scale_factor: number;
  /** Processor: tiles of max_image_size px (the vision tower's image_size), images resized to a longest edge. */
  max_image_size: number;
  longest_edge: number;
}

/** smolvlm-tiny: tiles of 128 px, images resized to a longest edge of 512. */
export const TINY: TinySizes = {
  vision: { hidden_size: 128, intermediate_size: 256, num_hidden_layers: 2, num_attention_heads: 2, image_size: 128, patch_size: 16 },
  text: {
    hidden_size: 192,
    intermediate_size: 384,
    num_hidden_layers: 2,
    num_attention_heads: 3,
    num_key_value_heads: 1,
    head_dim: 64,
    max_position_embeddings: 2048,
  },
  scale_factor: 2,
  max_image_size: 128,
  longest_edge: 512,
};

function fnv1a(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** n normal samples (Box-Muller) from a PRNG seeded by `name`. */
function normal(name: string, n: number, mean: number, std: number): Float32Array {
  const next = mulberry32(fnv1a(name));
  const out = new Float32Array(n);
  for (let i = 0; i < n; i += 2) {
    const u = Math.max(next(), 1e-12);
    const v = next();
    const r = Math.sqrt(-2 * Math.log(u));
    out[i] = mean + std * r * Math.cos(2 * Math.PI * v);
    if (i + 1 < n) out[i + 1] = mean + std * r * Math.sin(2 * Math.PI * v);
  }
  return out;
}

/**
 * Initialisation chosen so activations stay O(1) through the layers and logits are spread out
 * (std about 3), which keeps greedy decoding far from ties: fan-in scaled linear weights, norm weights
 * near 1, small biases. With tied embeddings the token embeddings are smaller (std 0.4): at std 1 a
 * token's own embedding dominates the last hidden state. (Greedy decoding of the tied variant still
 * settles on one repeated token; its first-step logits are the golden that exercises the tied head.)
 */
function initTensor(name: string, shape: number[], tied: boolean): Float32Array {
  const n = shape.reduce((a, b) => a * b, 1);
  if (/norm|layer_norm/.test(name) && name.endsWith('.weight')) return normal(name, n, 1, 0.1);
  if (name.endsWith('.bias')) return normal(name, n, 0, 0.05);
  if (name.includes('embed_tokens')) return normal(name, n, 0, tied ? 0.4 : 1);
  if (name.includes('position_embedding') || name.includes('embed_positions')) return normal(name, n, 0, 0.5);
  if (name === 'lm_head.weight' || name.endsWith('.lm_head.weight')) return normal(name, n, 0, 3 / Math.sqrt(shape[1]));
  const fanIn = shape.slice(1).reduce((a, b) => a * b, 1);
  return normal(name, n, 0, 1 / Math.sqrt(fanIn));
}

export function tinyConfig(base: Record<string, any>, modelType: string, tied: boolean, sizes: TinySizes = TINY): Record<string, any> {
  const c = structuredClone(base);
  c.model_type = modelType;
  c.scale_factor = sizes.scale_factor;
  c.tie_word_embeddings = tied;
  c.text_config = { ...c.text_config, ...sizes.text, tie_word_embeddings: tied };
  c.vision_config = {
    ...c.vision_config,
    ...sizes.vision,
    max_image_size: { longest_edge: sizes.max_image_size },
    size: { longest_edge: sizes.longest_edge },
  };
  c._tessera = 'Random weights at reduced sizes, made by `npm run make:tiny`. Not a trained model.';
  return c;
}

export function writeJson(path: string, value: unknown): void {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** A tensor of the checkpoint `config` describes, its values made on demand (a bench model at real widths
 * is written one tensor at a time, never held whole). */
export interface TensorSpec {
  name: string;
  shape: number[];
  values: () => Float32Array;
}

/** `parse`: the config's parser (default: the registry's, by model_type). */
export function tensorSpecsFor(
  config: Record<string, any>,
  parse: (c: Record<string, any>) => ModelConfig = parseModelConfig,
): TensorSpec[] {
  const parsed = parse(config);
  return weightLayout(parsed).checkpoint.map((t) => ({
    name: t.name,
    shape: t.shape,
    values: () => initTensor(t.name, t.shape, parsed.tieWordEmbeddings),
  }));
}

/** `parse`: the config's parser (default: the registry's, by model_type). */
export function tensorsFor(
  config: Record<string, any>,
  dtype: TensorToWrite['dtype'],
  parse: (c: Record<string, any>) => ModelConfig = parseModelConfig,
): TensorToWrite[] {
  return tensorSpecsFor(config, parse).map((t) => ({ name: t.name, shape: t.shape, dtype, data: t.values() }));
}
