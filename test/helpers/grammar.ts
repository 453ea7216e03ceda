// Driving src/grammar/ in tests: a one-character-per-token vocabulary (so a grammar's language can be read
// character by character), walking a text or token ids through a ResponseMatcher with the mask checked at
// every step, listing a finite grammar's whole language, and seeded random walks.

import type { GrammarCache } from '../../src/grammar/grammar-cache';
import type { ResponseFormatSpec } from '../../src/grammar/grammar-source';
import type { ResponseMatcher } from '../../src/grammar/response-matcher';
import type { GrammarVocabulary } from '../../src/grammar/tokenizer-info';

/** Printable ASCII, a tab, U+001F, 'é' and '😀', one token each, then the stop token (its piece ''). */
export function charVocabulary(): GrammarVocabulary {
  const pieces: string[] = [];
  for (let c = 32; c < 127; c++) pieces.push(String.fromCharCode(c));
  pieces.push('\t', '\u001f', 'é', '😀', '');
  return { pieces, vocabType: 'raw', vocabSize: pieces.length, stopTokenIds: [pieces.length - 1] };
}

export function allows(mask: Int32Array, id: number): boolean {
  return ((mask[id >> 5]! >>> (id & 31)) & 1) === 1;
}

/** The ids a mask allows. */
export function allowedIds(mask: Int32Array, vocabSize: number): number[] {
  const out: number[] = [];
  for (let id = 0; id < vocabSize; id++) if (allows(mask, id)) out.push(id);
  return out;
}

/**
 * Walks `ids` through `m`, each checked against the mask first; then whether a stop token is allowed and
 * accepted. 'rejected at N' when the mask refused ids[N].
 */
export function walk(
  m: ResponseMatcher,
  ids: readonly number[],
  stopIds: readonly number[],
): 'complete' | 'incomplete' | `rejected at ${number}` {
  const mask = new Int32Array(m.maskWords);
  for (let i = 0; i < ids.length; i++) {
    m.fillMask(mask);
    if (!allows(mask, ids[i]!)) return `rejected at ${i}`;
    m.accept(ids[i]!);
  }
  m.fillMask(mask);
  const stop = stopIds.find((s) => allows(mask, s));
  if (stop === undefined) return 'incomplete';
  m.accept(stop);
  return m.isTerminated ? 'complete' : 'incomplete';
}

/** Whether the grammar of `format` takes exactly `text` (character vocabulary). */
export async function takes(cache: GrammarCache, format: ResponseFormatSpec, text: string): Promise<boolean> {
  const vocab = charVocabulary();
  const ids = [...text].map((ch) => vocab.pieces.indexOf(ch));
  if (ids.includes(-1)) throw new Error(`'${text}' has a character outside charVocabulary()`);
  const m = await cache.createMatcher(format);
  try {
    return walk(m, ids, vocab.stopTokenIds) === 'complete';
  } finally {
    m.dispose();
  }
}

/** Every text the grammar of `format` takes, sorted (character vocabulary; the language must be finite). */
export async function language(cache: GrammarCache, format: ResponseFormatSpec, maxLength = 24): Promise<string[]> {
  const vocab = charVocabulary();
  const stop = vocab.stopTokenIds[0]!;
  const out: string[] = [];
  const explore = async (prefix: number[]): Promise<void> => {
    if (prefix.length > maxLength) throw new Error(`a text longer than ${maxLength}: the language is not finite`);
    const m = await cache.createMatcher(format);
    const mask = new Int32Array(m.maskWords);
    for (const id of prefix) m.accept(id);
    m.fillMask(mask);
    m.dispose();
    for (const id of allowedIds(mask, vocab.vocabSize)) {
      if (id === stop) out.push(prefix.map((i) => vocab.pieces[i]).join(''));
      else await explore([...prefix, id]);
    }
  };
  await explore([]);
  return out.sort();
}

/**
 * A seeded random walk: each step a random token among those the mask allows; a stop token as soon as
 * one is allowed (with probability `stopBias`), and tokens from `closers` (that end a string, an array
 * or an object) with probability 0.3, so answers end within `maxTokens`. Returns the ids before the stop,
 * and whether it stopped.
 */
export function randomWalk(
  m: ResponseMatcher,
  random: () => number,
  opts: { stopIds: readonly number[]; closers: readonly number[]; maxTokens: number; stopBias?: number },
): { ids: number[]; stopped: boolean } {
  const mask = new Int32Array(m.maskWords);
  const ids: number[] = [];
  for (let step = 0; step < opts.maxTokens; step++) {
    m.fillMask(mask);
    const stop = opts.stopIds.find((id) => allows(mask, id));
    const closing = opts.closers.filter((id) => allows(mask, id));
    let id: number;
    if (stop !== undefined && random() < (opts.stopBias ?? 0.9)) id = stop;
    else if (closing.length && random() < 0.3) id = closing[Math.floor(random() * closing.length)]!;
    else id = nthAllowed(mask, Math.floor(random() * countAllowed(mask)));
    m.accept(id);
    if (opts.stopIds.includes(id)) return { ids, stopped: true };
    ids.push(id);
  }
  return { ids, stopped: false };
}

function popcount(x: number): number {
  let n = 0;
  for (let v = x; v !== 0; v &= v - 1) n++;
  return n;
}

function countAllowed(mask: Int32Array): number {
  let n = 0;
  for (const w of mask) n += popcount(w);
  if (n === 0) throw new Error('no token is allowed');
  return n;
}

/** The id of the k-th allowed token (k from 0). */
function nthAllowed(mask: Int32Array, k: number): number {
  let left = k;
  for (let i = 0; i < mask.length; i++) {
    const n = popcount(mask[i]!);
    if (left >= n) {
      left -= n;
      continue;
    }
    for (let bits = mask[i]!; ; bits &= bits - 1) {
      if (left-- === 0) return i * 32 + (31 - Math.clz32(bits & -bits));
    }
  }
  throw new Error(`fewer than ${k + 1} tokens are allowed`);
}

/** The bytes of byte-level pieces (GPT-2's byte-to-character table, reversed). */
export function byteLevelBytes(pieces: readonly string[]): Uint8Array {
  const table = new Map<string, number>();
  const printable = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  let shifted = 0;
  for (let b = 0; b < 256; b++) table.set(String.fromCodePoint(printable(b) ? b : 256 + shifted++), b);
  return Uint8Array.from(pieces.flatMap((p) => [...p].map((ch) => table.get(ch)!)));
}
