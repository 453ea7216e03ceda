// Reading GGUF metadata for a family's config: each key by its llama.cpp name, a named error when a key the
// family needs is missing or of the wrong kind.

import { ModelConfigError } from '../errors';
import type { GgufHeader } from '../model/weights/gguf/gguf-format';

export class GgufMetadata {
  constructor(
    private readonly header: GgufHeader,
    private readonly where: string,
  ) {}

  private missing(key: string, kind: string): never {
    throw new ModelConfigError(
      `${this.where}: GGUF metadata '${key}' (${kind}) is missing or not ${kind}; the file was not written by a llama.cpp converter Tessera knows`,
    );
  }

  has(key: string): boolean {
    return this.header.metadata.has(key);
  }

  number(key: string, fallback?: number): number {
    const v = this.header.metadata.get(key);
    if (typeof v === 'number' && Number.isFinite(v)) return v;
    if (v === undefined && fallback !== undefined) return fallback;
    return this.missing(key, 'a number');
  }

  string(key: string, fallback?: string): string {
    const v = this.header.metadata.get(key);
    if (typeof v === 'string') return v;
    if (v === undefined && fallback !== undefined) return fallback;
    return this.missing(key, 'a string');
  }

  numbers(key: string, fallback?: number[]): number[] {
    const v = this.header.metadata.get(key);
    if (Array.isArray(v) && v.every((x) => typeof x === 'number')) return v as number[];
    if (v === undefined && fallback !== undefined) return fallback;
    return this.missing(key, 'a list of numbers');
  }

  /** The id of a token of the file's vocabulary, by its text. */
  tokenId(text: string): number | undefined {
    const tokens = this.header.metadata.get('tokenizer.ggml.tokens');
    const id = Array.isArray(tokens) ? tokens.indexOf(text) : -1;
    return id >= 0 ? id : undefined;
  }
}
