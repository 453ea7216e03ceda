// The decoder side shared by the Qwen-VL families: M-RoPE read from a text config's rope_scaling (or
// transformers 5's rope_parameters), checked against the head size.

import { ModelConfigError } from '../errors';
import type { MropeConfig } from '../model/config';
import type { Json } from '../model/config-fields';

/**
 * `mrope_section` (the frequencies of t, h and w, summing to head_dim / 2) from a rope_scaling or
 * rope_parameters object; `fallback` is the family config class's default when the object names none.
 */
export function parseMropeSection(rope: Json, where: string, headDim: number, fallback?: readonly number[]): MropeConfig['section'] {
  const raw = rope.mrope_section ?? fallback;
  if (!Array.isArray(raw) || raw.length !== 3 || !raw.every((s) => Number.isInteger(s) && s >= 0)) {
    throw new ModelConfigError(`config.json: ${where}.mrope_section must be three whole numbers (t, h, w), found ${JSON.stringify(raw)}`);
  }
  const [t, h, w] = raw as number[];
  if (t + h + w !== headDim / 2) {
    throw new ModelConfigError(
      `config.json: ${where}.mrope_section [${t}, ${h}, ${w}] sums to ${t + h + w}; it must be head_dim / 2 = ${headDim / 2} ` +
        '(one axis per rotary frequency)',
    );
  }
  return [t, h, w];
}

/** A rope type other than plain (default) M-RoPE is refused by name. */
export function checkRopeType(rope: Json, where: string): void {
  const type = rope.rope_type ?? rope.type;
  if (type !== undefined && type !== 'default' && type !== 'mrope') {
    throw new ModelConfigError(
      `config.json: ${where}.rope_type '${String(type)}' is not supported (Tessera runs M-RoPE without scaling: 'default' or 'mrope')`,
    );
  }
}
