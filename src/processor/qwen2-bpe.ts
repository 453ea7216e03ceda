// qwen2-bpe.ts: a Qwen2 tokenizer's vocab.json + merges.txt (+ tokenizer_config.json's added tokens)
// rewritten as the tokenizer.json transformers builds from them (its `Qwen2Converter`, what
// `Qwen2TokenizerFast` loads when a checkpoint has no tokenizer.json), so tokenizer.ts serves such a
// checkpoint with one implementation:
//   model          BPE over the vocabulary and merges, no unknown token, no prefixes or suffixes, no byte fallback
//   normalizer     NFC
//   pre_tokenizer  Split by the Qwen2 pattern (isolated), then ByteLevel without its own regex
//   decoder        ByteLevel;   post_processor  ByteLevel (trim_offsets false: no change to the ids)
//   added_tokens   tokenizer_config.json's added_tokens_decoder, in id order
// Qwen2.5-VL and Qwen3-VL checkpoints name `tokenizer_class: Qwen2Tokenizer`.

import { ProcessorConfigError } from '../errors';

type Json = Record<string, unknown>;

/** The split pattern of transformers' Qwen2Converter (contractions, letter runs, single digits, punctuation, spaces). */
export const QWEN2_PATTERN =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const BYTE_LEVEL = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: false, use_regex: false };

/** The merges of merges.txt: one "left right" pair a line, after an optional "#version" header. */
function parseMerges(text: string, where: string): string[] {
  const merges: string[] = [];
  text.split('\n').forEach((line, i) => {
    const l = line.replace(/\r$/, '');
    if (l === '' || (i === 0 && l.startsWith('#version'))) return;
    if (l.split(' ').length !== 2) {
      throw new ProcessorConfigError(
        `${where}: line ${i + 1} is not a merge of two pieces ("left right"): ${JSON.stringify(l.slice(0, 80))}`,
      );
    }
    merges.push(l);
  });
  return merges;
}

export function qwen2BpeToTokenizerJson(vocab: unknown, mergesText: string, config: Json, where: string): Json {
  if (!vocab || typeof vocab !== 'object' || Array.isArray(vocab)) {
    throw new ProcessorConfigError(`vocab.json in ${where} is not an object of token -> id.`);
  }
  for (const [token, id] of Object.entries(vocab as Json)) {
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0) {
      throw new ProcessorConfigError(
        `vocab.json in ${where}: token ${JSON.stringify(token)} has id ${JSON.stringify(id)}, not a whole number.`,
      );
    }
  }
  const decoder = config.added_tokens_decoder;
  const added = decoder && typeof decoder === 'object' ? Object.entries(decoder as Json) : [];
  const addedTokens = added
    .map(([id, t]) => {
      const token = t as Json;
      if (typeof token?.content !== 'string' || !/^\d+$/.test(id)) {
        throw new ProcessorConfigError(`tokenizer_config.json in ${where}: added token ${id} has no content string.`);
      }
      return {
        id: Number(id),
        content: token.content,
        single_word: token.single_word === true,
        lstrip: token.lstrip === true,
        rstrip: token.rstrip === true,
        normalized: token.normalized === true,
        special: token.special === true,
      };
    })
    .sort((a, b) => a.id - b.id);
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: addedTokens,
    normalizer: { type: 'NFC' },
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [{ type: 'Split', pattern: { Regex: QWEN2_PATTERN }, behavior: 'Isolated', invert: false }, BYTE_LEVEL],
    },
    post_processor: BYTE_LEVEL,
    decoder: BYTE_LEVEL,
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: '',
      end_of_word_suffix: '',
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges: parseMerges(mergesText, `merges.txt in ${where}`),
    },
  };
}
