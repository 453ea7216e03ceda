// A token's text and bytes on its own (OpenAI's logprobs name each token so). The text is the token
// decoded alone (U+FFFD where it is part of a character: byte-level BPE splits UTF-8 characters across
// tokens). The bytes are exact: a byte-level piece maps back through GPT-2's byte-to-character table, a
// byte-fallback piece '<0xNN>' is that byte, a SentencePiece '▁' is a space. Special tokens have no
// bytes. Names are computed once per id.

import { byteLevelBytes } from './byte-level';
import type { TextTokenizer } from './tokenizer';

export type TokenNames = (id: number) => { token: string; bytes: number[] | null };

const encoder = new TextEncoder();

/** The bytes a vocabulary piece stands for, given the decoder's steps; undefined if it cannot be told. */
function pieceBytes(piece: string, steps: readonly string[], table: () => Int16Array): number[] | undefined {
  if (steps.includes('ByteLevel')) {
    const t = table();
    const out: number[] = [];
    for (let i = 0; i < piece.length; i++) {
      const b = t[piece.charCodeAt(i)] ?? -1;
      if (b < 0) return undefined;
      out.push(b);
    }
    return out;
  }
  if (steps.includes('ByteFallback')) {
    const m = /^<0x([0-9A-Fa-f]{2})>$/.exec(piece);
    if (m) return [Number.parseInt(m[1]!, 16)];
  }
  if (steps.includes('Metaspace') || steps.includes('Replace')) return [...encoder.encode(piece.replaceAll('\u2581', ' '))];
  return undefined;
}

export function tokenNames(tokenizer: TextTokenizer): TokenNames {
  const cache = new Map<number, { token: string; bytes: number[] | null }>();
  const steps = tokenizer.decoderSteps;
  let table: Int16Array | undefined;
  const lazyTable = () => (table ??= byteLevelBytes());
  return (id) => {
    let name = cache.get(id);
    if (!name) {
      const token = tokenizer.decode([id], false);
      const piece = tokenizer.piece(id);
      const bytes = tokenizer.isSpecial(id)
        ? null
        : ((piece !== undefined ? pieceBytes(piece, steps, lazyTable) : undefined) ?? [...encoder.encode(token)]);
      name = { token, bytes };
      cache.set(id, name);
    }
    return name;
  };
}
