// utf8-guard.ts: keeps a constrained answer valid UTF-8. XGrammar 0.1.27 matches a byte-level vocabulary
// byte by byte but decodes UTF-8 laxly: inside a JSON string it accepts overlong forms (C0 80), surrogates
// (ED A0 80) and sequences past U+10FFFF (F4 90 80 80). Decoding turns each into several U+FFFD, so an
// answer could hold garbage and break a maxLength the grammar counted (found by the random walks in
// test/unit/grammar-walk.test.ts). The guard removes from the mask every token whose bytes would make the
// answer invalid UTF-8 (RFC 3629, table 3-7 of Unicode), from the current position on:
//
//   state 0: at a character boundary      -> mask &= the tokens valid there (computed with the guard)
//   state s: inside a character           -> mask &= the tokens valid from s (seven such states, each
//                                            computed over the vocabulary the first time it is met)
//
// A token's bytes: byte-level pieces map back through GPT-2's byte-to-character table (the table
// src/processor/token-names.ts reverses for log probabilities), byte-fallback pieces '<0xNN>' are one byte,
// '▁' is a space; everything else is the piece's own UTF-8.

import type { VocabType } from './tokenizer-info';
import { byteLevelBytes } from '../processor/byte-level';

/** At a character boundary. Other states: (remaining << 16) | (lo << 8) | hi, the next byte's range. */
export const UTF8_BOUNDARY = 0;
const INVALID = -1;

const encoder = new TextEncoder();

export class Utf8Guard {
  /** Every token's bytes, one after another: token i is data[start[i] .. start[i + 1]). */
  private readonly data: Uint8Array;
  private readonly start: Int32Array;
  private readonly maskWords: number;
  /** For each state met so far: bit set where the token's bytes are valid UTF-8 from that state. */
  private readonly validFrom = new Map<number, Int32Array>();

  private constructor(data: Uint8Array, start: Int32Array, maskWords: number) {
    this.data = data;
    this.start = start;
    this.maskWords = maskWords;
    this.validMask(UTF8_BOUNDARY);
  }

  /** For `pieces` (id order, as grammarVocabulary returns them) of a vocabulary of `vocabSize` logits. */
  static forVocabulary(pieces: readonly string[], vocabType: VocabType, vocabSize: number): Utf8Guard {
    const table = vocabType === 'byte_level' ? byteLevelBytes() : undefined;
    const start = new Int32Array(pieces.length + 1);
    let data = new Uint8Array(pieces.length * 8);
    let end = 0;
    pieces.forEach((piece, id) => {
      if (data.length - end < piece.length * 3) {
        const grown = new Uint8Array(Math.max(data.length * 2, end + piece.length * 3));
        grown.set(data);
        data = grown;
      }
      end += writeBytes(piece, vocabType, table, data, end);
      start[id + 1] = end;
    });
    return new Utf8Guard(data.subarray(0, end), start, Math.ceil(vocabSize / 32));
  }

  /** The state after token `id` from `state`; -1 when its bytes would be invalid UTF-8 there. */
  advance(state: number, id: number): number {
    if (id + 1 >= this.start.length) return state;
    return run(state, this.data, this.start[id]!, this.start[id + 1]!);
  }

  /** Clears from `mask` the tokens invalid from `state`. */
  restrict(mask: Int32Array, state: number): void {
    const valid = this.validMask(state);
    for (let i = 0; i < mask.length; i++) mask[i]! &= valid[i]!;
  }

  /**
   * The tokens valid from `state`. There are eight states (the boundary and seven ways to be inside a
   * character), each computed once, on first use, over the whole vocabulary.
   */
  private validMask(state: number): Int32Array {
    let mask = this.validFrom.get(state);
    if (mask) return mask;
    mask = new Int32Array(this.maskWords).fill(-1);
    for (let id = 0; id + 1 < this.start.length; id++) {
      if (run(state, this.data, this.start[id]!, this.start[id + 1]!) === INVALID) mask[id >> 5]! &= ~(1 << (id & 31));
    }
    this.validFrom.set(state, mask);
    return mask;
  }
}

/** Runs data[from .. to) through the UTF-8 automaton from `state` (see UTF8_BOUNDARY). */
function run(state: number, data: Uint8Array, from: number, to: number): number {
  let s = state;
  for (let i = from; i < to; i++) {
    const b = data[i]!;
    if (s === UTF8_BOUNDARY) {
      s = lead(b);
      if (s === INVALID) return INVALID;
      continue;
    }
    const remaining = s >> 16;
    if (b < ((s >> 8) & 0xff) || b > (s & 0xff)) return INVALID;
    s = remaining === 1 ? UTF8_BOUNDARY : ((remaining - 1) << 16) | (0x80 << 8) | 0xbf;
  }
  return s;
}

/** The state after a first byte: 0 for ASCII, the continuation it needs, or INVALID. */
function lead(b: number): number {
  if (b < 0x80) return UTF8_BOUNDARY;
  if (b >= 0xc2 && b <= 0xdf) return need(1, 0x80, 0xbf);
  if (b === 0xe0) return need(2, 0xa0, 0xbf);
  if (b === 0xed) return need(2, 0x80, 0x9f);
  if (b >= 0xe1 && b <= 0xef) return need(2, 0x80, 0xbf);
  if (b === 0xf0) return need(3, 0x90, 0xbf);
  if (b >= 0xf1 && b <= 0xf3) return need(3, 0x80, 0xbf);
  if (b === 0xf4) return need(3, 0x80, 0x8f);
  return INVALID;
}

/** The state that needs `remaining` more bytes, the next one in lo..hi. */
function need(remaining: number, lo: number, hi: number): number {
  return (remaining << 16) | (lo << 8) | hi;
}

/** Writes the bytes of `piece` at data[at ..] (room for 3 bytes per UTF-16 unit is there); returns how many. */
function writeBytes(piece: string, vocabType: VocabType, table: Int16Array | undefined, data: Uint8Array, at: number): number {
  if (table) {
    // Every character of GPT-2's table is below U+0144, so one UTF-16 unit each.
    let i = 0;
    for (; i < piece.length; i++) {
      const c = piece.charCodeAt(i);
      const b = c < table.length ? table[c]! : -1;
      if (b < 0) break;
      data[at + i] = b;
    }
    // A piece outside the table (an added token) is text: XGrammar keeps it as its UTF-8 too.
    if (i === piece.length) return i;
  } else if (vocabType === 'byte_fallback') {
    const m = /^<0x([0-9A-Fa-f]{2})>$/.exec(piece);
    if (m) {
      data[at] = Number.parseInt(m[1]!, 16);
      return 1;
    }
    return encoder.encodeInto(piece.replaceAll('\u2581', ' '), data.subarray(at)).written;
  }
  return encoder.encodeInto(piece, data.subarray(at)).written;
}
