// tekken.ts: Mistral's tekken.json (mistral-common `Tekkenizer`, tokens/tokenizers/tekken.py) rewritten as
// the Hugging Face tokenizer.json that transformers' `convert_tekken_tokenizer` (MistralConverter) writes
// for it, so that tokenizer.ts serves both formats with one implementation.
//
// Ids, as mistral-common numbers them (Voxtral: numSpecial 1000, default_vocab_size 131072):
//
//   0 .. numSpecial-1            special tokens by rank: special_tokens[i] (rank i), then fillers
//                                `<SPECIAL_{id}>` up to numSpecial; never produced by text
//   numSpecial .. vocabSize-1    vocab[r] (rank r) is id r + numSpecial; only the first
//                                vocabSize - numSpecial entries are used (the file holds more: 150000)
//
// mistral-common encodes with tiktoken: split the text by `config.pattern`, then merge each piece's UTF-8
// bytes, always the adjacent pair whose concatenation has the lowest rank. As HF BPE (what the converter
// writes, and what the fixture test/fixtures/models/Voxtral-Mini-3B-2507/tokenizer.json is):
// - tokens are byte-level strings (GPT-2 `bytes_to_unicode`: one character per byte), so the Split
//   pre-tokenizer runs the pattern on text and ByteLevel (use_regex false) only maps bytes to characters;
// - merges are derived from ranks: for each token of 2+ bytes, every split into two vocab tokens is a merge,
//   ordered by the token's rank, then by the left part's rank, then the right part's;
// - ignore_merges: a piece that is a whole token is that token (tiktoken's first lookup).
// test/unit/tekken-tokenizer.test.ts checks vocabulary, merges and ids against HF's conversion of Voxtral's.

import { ProcessorConfigError } from '../errors';
import { byteLevelChars } from './byte-level';

type Json = Record<string, unknown>;

export interface ConvertedTekken {
  /** The tokenizer.json object (what `JSON.parse` of a converted checkpoint's file would give). */
  tokenizer: Json;
  /** The tokenizer_config.json object HF writes beside it: BOS/EOS names, add_bos_token. */
  config: Json;
}

const BOS = '<s>';
const EOS = '</s>';

function isObject(v: unknown): v is Json {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function positiveInteger(config: Json, key: string, where: string): number {
  const v = config[key];
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1) {
    throw new ProcessorConfigError(
      `${where}: config.${key} is ${JSON.stringify(v)}, not a positive integer; the file is not a tekken tokenizer, download it again.`,
    );
  }
  return v;
}

/**
 * Converts a parsed tekken.json into the equivalent tokenizer.json and tokenizer_config.json objects.
 * `where` names the file in errors ("tekken.json in <folder>"). Throws ProcessorConfigError on anything
 * mistral-common would refuse.
 */
export function tekkenToTokenizerJson(tekken: unknown, where: string): ConvertedTekken {
  if (!isObject(tekken)) throw new ProcessorConfigError(`${where} is not a JSON object; it is not a tekken tokenizer.`);
  const config = tekken.config;
  if (!isObject(config)) throw new ProcessorConfigError(`${where} has no "config" object; it is not a tekken tokenizer.`);
  const pattern = config.pattern;
  if (typeof pattern !== 'string' || pattern.length === 0) {
    throw new ProcessorConfigError(`${where}: config.pattern (the pre-tokenizer regex) is missing or empty; download the file again.`);
  }
  const vocabSize = positiveInteger(config, 'default_vocab_size', where);
  const numSpecial = positiveInteger(config, 'default_num_special_tokens', where);
  // The 256 single bytes must fit after the special tokens (mistral-common asserts vocab[b] == bytes([b])).
  if (numSpecial > vocabSize - 256) {
    throw new ProcessorConfigError(
      `${where}: config.default_num_special_tokens is ${numSpecial} but config.default_vocab_size is ${vocabSize}, ` +
        'which leaves no room for the 256 byte tokens; the config is inconsistent, download the file again.',
    );
  }
  const specials = specialTokens(tekken.special_tokens, numSpecial, where);
  const table = vocabTokens(tekken.vocab, vocabSize - numSpecial, where);

  // Specials first, then bytes: the order of transformers' vocab dict (a later equal string wins there too).
  // No prototype, so that a token spelled "__proto__" is an own key like any other.
  const vocab: Record<string, number> = Object.create(null);
  specials.forEach((s, id) => {
    vocab[s] = id;
  });
  table.tokens.forEach((t, rank) => {
    vocab[t] = rank + numSpecial;
  });
  const bosId = specials.indexOf(BOS);
  const eosId = specials.indexOf(EOS);
  if (bosId < 0 || eosId < 0) {
    throw new ProcessorConfigError(`${where}: special_tokens has no '${bosId < 0 ? BOS : EOS}'; prompts need it. Download the file again.`);
  }
  const tokenizer: Json = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: specials.map((content, id) => ({
      id,
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        { type: 'Split', pattern: { Regex: pattern }, behavior: 'Isolated', invert: false },
        { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false },
      ],
    },
    post_processor: {
      type: 'TemplateProcessing',
      single: [{ SpecialToken: { id: BOS, type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
      pair: [
        { SpecialToken: { id: BOS, type_id: 0 } },
        { Sequence: { id: 'A', type_id: 0 } },
        { SpecialToken: { id: BOS, type_id: 1 } },
        { Sequence: { id: 'B', type_id: 1 } },
      ],
      special_tokens: {
        [EOS]: { id: EOS, ids: [eosId], tokens: [EOS] },
        [BOS]: { id: BOS, ids: [bosId], tokens: [BOS] },
      },
    },
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: true,
      vocab,
      merges: mergesFromRanks(table),
    },
  };
  const tokenizerConfig: Json = {
    add_bos_token: true,
    add_eos_token: false,
    add_prefix_space: false,
    bos_token: BOS,
    eos_token: EOS,
    clean_up_tokenization_spaces: false,
    tokenizer_class: 'PreTrainedTokenizerFast',
  };
  for (const [key, token] of [
    ['unk_token', '<unk>'],
    ['pad_token', '<pad>'],
  ] as const) {
    if (specials.includes(token)) tokenizerConfig[key] = token;
  }
  return { tokenizer, config: tokenizerConfig };
}

/** Names of ids 0..numSpecial-1: the listed special tokens (rank i at index i), then `<SPECIAL_{id}>`. */
function specialTokens(list: unknown, numSpecial: number, where: string): string[] {
  if (!Array.isArray(list)) {
    throw new ProcessorConfigError(
      `${where} has no "special_tokens" list (tekken files before v7 relied on mistral-common's built-in list, which Tessera does not carry); use a v7 or later tekken.json or a tokenizer.json.`,
    );
  }
  if (list.length > numSpecial) {
    throw new ProcessorConfigError(
      `${where}: special_tokens lists ${list.length} tokens but config.default_num_special_tokens is ${numSpecial}; the file is inconsistent, download it again.`,
    );
  }
  const names: string[] = [];
  const seen = new Set<string>();
  list.forEach((t, i) => {
    const rank = isObject(t) ? t.rank : undefined;
    const name = isObject(t) ? t.token_str : undefined;
    if (rank !== i) {
      throw new ProcessorConfigError(
        `${where}: special_tokens[${i}].rank is ${JSON.stringify(rank)} but must be ${i} (ranks are the list order${typeof rank === 'number' && rank < i ? `; rank ${rank} is a duplicate` : ''}); download the file again.`,
      );
    }
    if (typeof name !== 'string' || name.length === 0) {
      throw new ProcessorConfigError(
        `${where}: special_tokens[${i}].token_str is ${JSON.stringify(name)}, not a token name; download the file again.`,
      );
    }
    if (seen.has(name)) {
      throw new ProcessorConfigError(`${where}: special_tokens[${i}].token_str '${name}' is listed twice; download the file again.`);
    }
    seen.add(name);
    names.push(name);
  });
  for (let id = names.length; id < numSpecial; id++) {
    const filler = `<SPECIAL_${id}>`;
    if (seen.has(filler))
      throw new ProcessorConfigError(`${where}: special_tokens names '${filler}' at another rank than ${id}; download the file again.`);
    names.push(filler);
  }
  return names;
}

/** The first `count` vocab entries (index = rank) as byte-level strings, validated as mistral-common does. */
function vocabTokens(list: unknown, count: number, where: string): TokenTable {
  if (!Array.isArray(list)) throw new ProcessorConfigError(`${where} has no "vocab" list; it is not a tekken tokenizer.`);
  if (list.length < count) {
    throw new ProcessorConfigError(
      `${where}: vocab has ${list.length} entries but config.default_vocab_size - default_num_special_tokens needs ${count}; the file is truncated, download it again.`,
    );
  }
  const toChar = byteLevelChars();
  const table = new TokenTable(count);
  for (let i = 0; i < count; i++) {
    const entry: unknown = list[i];
    const rank = isObject(entry) ? entry.rank : undefined;
    if (rank !== i) {
      throw new ProcessorConfigError(
        `${where}: vocab[${i}].rank is ${JSON.stringify(rank)} but must be ${i} (ranks are the list order${typeof rank === 'number' && rank < i ? `; rank ${rank} is a duplicate` : ''}); download the file again.`,
      );
    }
    const b64 = (entry as Json).token_bytes;
    let bytes: string; // one char per byte (code 0-255), as atob gives it
    try {
      if (typeof b64 !== 'string') throw new TypeError('not a string');
      bytes = atob(b64);
    } catch {
      throw new ProcessorConfigError(`${where}: vocab[${i}].token_bytes ${JSON.stringify(b64)} is not base64; download the file again.`);
    }
    if (bytes.length === 0 || (i < 256 && (bytes.length !== 1 || bytes.charCodeAt(0) !== i))) {
      throw new ProcessorConfigError(
        `${where}: vocab[${i}].token_bytes decodes to ${bytes.length} bytes, but ${i < 256 ? `rank ${i} must be the single byte ${i}` : 'a token has at least one byte'}; download the file again.`,
      );
    }
    let s = '';
    for (let k = 0; k < bytes.length; k++) s += toChar[bytes.charCodeAt(k)];
    const earlier = table.add(s);
    if (earlier >= 0) {
      throw new ProcessorConfigError(`${where}: vocab[${i}].token_bytes repeats the bytes of vocab[${earlier}]; download the file again.`);
    }
  }
  return table;
}

const HASH_BASE = 0x01000193;

/** Polynomial hash mod 2^32 of s[start, end): Σ s[i]·B^(end-1-i). */
function hashOf(s: string, start = 0, end = s.length): number {
  let h = 0;
  for (let i = start; i < end; i++) h = (Math.imul(h, HASH_BASE) + s.charCodeAt(i)) | 0;
  return h;
}

/**
 * Byte-level tokens by rank, with a hash index that finds a token equal to any substring of another one
 * without building that substring. Why: deriving merges looks up both halves of every split of every token
 * (about 1M splits for Voxtral's 130072 tokens); slicing them into new strings for a Map took ~0.45 s in
 * Node 20, this ~0.1 s. With the polynomial hash a prefix's hash grows by one character per step and
 * hash(suffix from k) = hash(token) - hash(prefix k)·B^(n-k); a candidate is confirmed by its characters.
 */
class TokenTable {
  readonly tokens: string[] = [];
  /** hash of tokens[rank] */
  readonly hashes: number[] = [];
  /** Open addressing, linear probing: the rank in each slot (-1 empty) and its hash. */
  private readonly slotRank: Int32Array;
  private readonly slotHash: Int32Array;
  private readonly mask: number;

  constructor(capacity: number) {
    let size = 1024;
    while (size < 2 * capacity) size *= 2;
    this.mask = size - 1;
    this.slotRank = new Int32Array(size).fill(-1);
    this.slotHash = new Int32Array(size);
  }

  /** Adds the token of the next rank; if an equal token is already there, adds nothing and returns its rank. */
  add(token: string): number {
    const h = hashOf(token);
    const found = this.find(h, token, 0, token.length);
    if (found >= 0) return found;
    let i = this.slot(h);
    while (this.slotRank[i] !== -1) i = (i + 1) & this.mask;
    this.slotRank[i] = this.tokens.length;
    this.slotHash[i] = h;
    this.tokens.push(token);
    this.hashes.push(h);
    return -1;
  }

  /** Rank of the token equal to s[start, start + length), whose hash is h; -1 if none. */
  find(h: number, s: string, start: number, length: number): number {
    for (let i = this.slot(h); this.slotRank[i] !== -1; i = (i + 1) & this.mask) {
      if (this.slotHash[i] !== h) continue;
      const rank = this.slotRank[i]!;
      const t = this.tokens[rank]!;
      if (t.length === length && s.startsWith(t, start)) return rank;
    }
    return -1;
  }

  /** murmur3's finalizer: spreads the polynomial hash's low bits before masking. */
  private slot(h: number): number {
    let x = h ^ (h >>> 16);
    x = Math.imul(x, 0x85ebca6b);
    x ^= x >>> 13;
    x = Math.imul(x, 0xc2b2ae35);
    return (x ^ (x >>> 16)) & this.mask;
  }
}

/**
 * Merges equivalent to merging by rank, as transformers' MistralConverter / TikTokenConverter derive them
 * (`extract_vocab_merges_from_model`): in rank order of the merged token, each split of it into two vocab
 * tokens, sorted by (left rank, right rank). Tokens are visited in rank order, so no global sort is needed.
 * Byte-level strings have one character per byte, so a split of the string is a split of the bytes.
 */
function mergesFromRanks(table: TokenTable): Array<[string, string]> {
  const { tokens, hashes } = table;
  let maxLength = 0;
  for (const t of tokens) maxLength = Math.max(maxLength, t.length);
  const power = new Int32Array(maxLength + 1); // B^k mod 2^32
  power[0] = 1;
  for (let k = 1; k <= maxLength; k++) power[k] = Math.imul(power[k - 1]!, HASH_BASE);

  const merges: Array<[string, string]> = [];
  const lefts: number[] = []; // this token's splits: left and right ranks, kept sorted by (left, right)
  const rights: number[] = [];
  for (let rank = 0; rank < tokens.length; rank++) {
    const t = tokens[rank]!;
    const n = t.length;
    let count = 0;
    let prefix = 0;
    for (let k = 1; k < n; k++) {
      prefix = (Math.imul(prefix, HASH_BASE) + t.charCodeAt(k - 1)) | 0;
      const l = table.find(prefix, t, 0, k);
      if (l < 0) continue;
      const r = table.find((hashes[rank]! - Math.imul(prefix, power[n - k]!)) | 0, t, k, n - k);
      if (r < 0) continue;
      // Insertion sort: a token has a handful of splits.
      let j = count++;
      for (; j > 0 && (lefts[j - 1]! > l || (lefts[j - 1] === l && rights[j - 1]! > r)); j--) {
        lefts[j] = lefts[j - 1]!;
        rights[j] = rights[j - 1]!;
      }
      lefts[j] = l;
      rights[j] = r;
    }
    for (let j = 0; j < count; j++) merges.push([tokens[lefts[j]!]!, tokens[rights[j]!]!]);
  }
  return merges;
}
