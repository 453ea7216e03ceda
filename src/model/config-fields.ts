// Readers of config.json fields that name the field and the value in their errors (every family's config
// parser uses them).

import { ModelConfigError } from '../errors';

export type Json = Record<string, unknown>;

export function field(obj: Json, path: string, key: string, kind: 'number' | 'string' | 'boolean'): unknown {
  const v = obj[key];
  if (typeof v !== kind) {
    throw new ModelConfigError(`config.json: ${path}${key} must be a ${kind}, found ${v === undefined ? 'nothing' : JSON.stringify(v)}`);
  }
  return v;
}

export function int(obj: Json, path: string, key: string, fallback?: number): number {
  if (obj[key] === undefined && fallback !== undefined) return fallback;
  const v = field(obj, path, key, 'number') as number;
  if (!Number.isInteger(v) || v <= 0) throw new ModelConfigError(`config.json: ${path}${key} must be a positive integer, found ${v}`);
  return v;
}

/**
 * A real number in (min, max), exclusive. JSON cannot carry NaN, but 1e999 parses as Infinity, and a
 * negative or zero epsilon or RoPE base gives NaN or Infinity in every layer: generation would then
 * silently return token id 0.
 */
export function num(obj: Json, path: string, key: string, fallback: number, range: { min: number; max: number; why: string }): number {
  if (obj[key] === undefined) return fallback;
  const v = field(obj, path, key, 'number') as number;
  if (!(Number.isFinite(v) && v > range.min && v < range.max)) {
    throw new ModelConfigError(
      `config.json: ${path}${key} is ${v} but must be a finite number above ${range.min}${range.max < Infinity ? ` and below ${range.max}` : ''} (${range.why})`,
    );
  }
  return v;
}

export const EPSILON = { min: 0, max: 1, why: 'the epsilon added to the variance in a norm' };

export function sub(obj: Json, key: string): Json {
  const v = obj[key];
  if (!v || typeof v !== 'object') throw new ModelConfigError(`config.json: '${key}' is missing or not an object`);
  return v as Json;
}
