// The model families Tessera runs, keyed by config.json's model_type. A new family is a folder beside
// idefics3/, voxtral/, qwen2_5_vl/ and qwen3_vl/ and one line here (docs/families.md).

import { ModelConfigError, UnsupportedModelError } from '../errors';
import type { ModelConfig } from '../model/config';
import type { Json } from '../model/config-fields';
import type { ModelFamily } from './family';
import { idefics3 } from './idefics3';
import { qwen2_5_vl } from './qwen2_5_vl';
import { qwen3_vl } from './qwen3_vl';
import { voxtral } from './voxtral';

export const FAMILIES: readonly ModelFamily[] = [idefics3, voxtral, qwen2_5_vl, qwen3_vl];

/** Every model_type some family reads, in registry order. */
export const supportedModelTypes = (): string[] => FAMILIES.flatMap((f) => f.modelTypes);

/**
 * Variants of families Tessera knows but does not run, and what sets them apart: their error says so
 * rather than only listing what runs.
 */
const KNOWN_VARIANTS: Record<string, string> = {
  qwen3_vl_moe: 'Qwen3-VL with a mixture-of-experts decoder (Qwen3-VL-30B-A3B, Qwen3-VL-235B-A22B); Tessera implements dense decoders',
  qwen2_vl: 'Qwen2-VL, the generation before Qwen2.5-VL: its vision blocks use LayerNorm and a QuickGELU fc1/fc2 MLP, without windows',
};

/** The family that reads this model_type, or a named error listing what Tessera runs. */
export function familyOf(modelType: unknown): ModelFamily {
  const family = typeof modelType === 'string' ? FAMILIES.find((f) => f.modelTypes.includes(modelType)) : undefined;
  if (family) return family;
  const variant = typeof modelType === 'string' && Object.hasOwn(KNOWN_VARIANTS, modelType) ? ` (${KNOWN_VARIANTS[modelType]})` : '';
  throw new UnsupportedModelError(
    `model_type '${String(modelType)}' is not supported${variant}; Tessera runs ${supportedModelTypes().join(', ')} checkpoints ` +
      `(${FAMILIES.map((f) => f.architecture).join('; ')}).`,
  );
}

/** The family of a parsed config (the one that parsed it). */
export function familyOfConfig(config: ModelConfig): ModelFamily {
  return familyOf(config.modelType);
}

/** config.json's object → the runtime's config, parsed by the family its model_type names. */
export function parseModelConfig(raw: unknown): ModelConfig {
  if (!raw || typeof raw !== 'object') throw new ModelConfigError('config.json is not a JSON object');
  const c = raw as Json;
  return familyOf(c.model_type).parseConfig(c);
}
