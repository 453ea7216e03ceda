// gguf-tokenizer.ts: the tokenizer a GGUF file carries (tokenizer.ggml.*) rewritten as the Hugging Face
// files it was converted from, so tokenizer.ts, chat-template.ts and stop-tokens.ts serve a GGUF checkpoint
// unchanged. llama.cpp's converter writes, for a byte-level BPE ("gpt2") vocabulary:
//   tokens       every id's token string (GPT-2 byte-to-unicode form), token_type per id
//                (1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte)
//   merges       "left right" strings, in rank order
//   pre          which pre-tokenizer (by name; the regexes live in llama.cpp)
//   bos/eos/eot/eom/pad/unknown ids, add_bos_token/add_eos_token, chat_template
// Pre-tokenizers rebuilt here, as the checkpoints' own tokenizer.json have them:
//   smollm   Digits (each digit alone), then ByteLevel with the GPT-2 pattern (SmolLM, SmolVLM)
//   qwen2    NFC, Split by the Qwen2 pattern (isolated), then ByteLevel without its own pattern (qwen2-bpe.ts)
//   tekken   Split by Tekken's pattern (isolated), then ByteLevel without its own pattern, and BPE with
//            ignore_merges (a piece that is a whole token is that token), as tekken.ts converts tekken.json
//            (Voxtral). llama.cpp's loader (src/llama-vocab.cpp, `tokenizer_pre == "tekken"`) sets
//            ignore_merges and add_bos for it; a file's tokenizer.ggml.add_bos_token still wins, as there.
//   gpt2, default  ByteLevel with the GPT-2 pattern

import { ProcessorConfigError } from '../errors';
import { QWEN2_PATTERN } from './qwen2-bpe';

type Json = Record<string, unknown>;
type Metadata = ReadonlyMap<string, unknown>;

const CONTROL = 3;
const USER_DEFINED = 4;

const byteLevel = (useRegex: boolean, trimOffsets: boolean) => ({
  type: 'ByteLevel',
  add_prefix_space: false,
  trim_offsets: trimOffsets,
  use_regex: useRegex,
});

/**
 * Tekken's pre-tokenizer pattern: mistral-common's tekken.json config.pattern for Voxtral (the Split regex of
 * transformers' conversion, test/fixtures/models/Voxtral-Mini-3B-2507/tokenizer.json), which llama.cpp's
 * LLAMA_VOCAB_PRE_TYPE_TEKKEN rewrites without \p{Lu}/\p{Ll} classes. A GGUF file names it ('tekken') but does
 * not carry it.
 */
const TEKKEN_PATTERN =
  '[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+';

interface PreTokenizer {
  normalizer: Json | null;
  pre_tokenizer: Json;
  /** BPE ignore_merges: a pre-tokenized piece that is a whole vocabulary token is that token. */
  ignoreMerges?: boolean;
  /** add_bos_token when the file does not say (llama.cpp's default for this pre-tokenizer). */
  addBos?: boolean;
}

const PRE_TOKENIZERS: Record<string, PreTokenizer> = {
  smollm: {
    normalizer: null,
    pre_tokenizer: { type: 'Sequence', pretokenizers: [{ type: 'Digits', individual_digits: true }, byteLevel(true, true)] },
  },
  qwen2: {
    normalizer: { type: 'NFC' },
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [{ type: 'Split', pattern: { Regex: QWEN2_PATTERN }, behavior: 'Isolated', invert: false }, byteLevel(false, false)],
    },
  },
  tekken: {
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [{ type: 'Split', pattern: { Regex: TEKKEN_PATTERN }, behavior: 'Isolated', invert: false }, byteLevel(false, true)],
    },
    ignoreMerges: true,
    addBos: true,
  },
  gpt2: { normalizer: null, pre_tokenizer: byteLevel(true, true) },
  default: { normalizer: null, pre_tokenizer: byteLevel(true, true) },
};

function strings(m: Metadata, key: string, where: string): string[] {
  const v = m.get(key);
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))
    throw new ProcessorConfigError(`${where} has no ${key} list of strings; it carries no tokenizer Tessera can read.`);
  return v as string[];
}

const idOf = (m: Metadata, key: string): number | undefined => {
  const v = m.get(key);
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : undefined;
};

/** The files a GGUF vocabulary stands for: tokenizer.json, tokenizer_config.json, generation_config.json. */
export function ggufTokenizerFiles(m: Metadata, where: string): Record<string, Json> {
  const model = m.get('tokenizer.ggml.model');
  if (model !== 'gpt2') {
    throw new ProcessorConfigError(
      `${where} has a '${String(model)}' tokenizer (tokenizer.ggml.model); Tessera reads GGUF byte-level BPE ('gpt2') vocabularies`,
    );
  }
  const pre = String(m.get('tokenizer.ggml.pre') ?? 'default');
  const preTokenizer = PRE_TOKENIZERS[pre];
  if (!preTokenizer) {
    throw new ProcessorConfigError(
      `${where} uses the '${pre}' pre-tokenizer (tokenizer.ggml.pre), which Tessera does not rebuild; it rebuilds ${Object.keys(PRE_TOKENIZERS).join(', ')}`,
    );
  }
  const tokens = strings(m, 'tokenizer.ggml.tokens', where);
  const merges = strings(m, 'tokenizer.ggml.merges', where);
  const typesValue = m.get('tokenizer.ggml.token_type');
  const types = Array.isArray(typesValue) && typesValue.length === tokens.length ? (typesValue as number[]) : undefined;
  const vocab: Record<string, number> = {};
  const added: Json[] = [];
  tokens.forEach((token, id) => {
    if (!Object.hasOwn(vocab, token)) vocab[token] = id;
    const type = types?.[id];
    if (type === CONTROL || type === USER_DEFINED) {
      added.push({
        id,
        content: token,
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: type === USER_DEFINED,
        special: type === CONTROL,
      });
    }
  });
  const name = (id: number | undefined) => (id === undefined ? undefined : tokens[id]);
  const bos = idOf(m, 'tokenizer.ggml.bos_token_id');
  const eos = idOf(m, 'tokenizer.ggml.eos_token_id');
  const ends = [eos, idOf(m, 'tokenizer.ggml.eot_token_id'), idOf(m, 'tokenizer.ggml.eom_token_id')].filter(
    (x): x is number => x !== undefined,
  );
  const addBosKey = m.get('tokenizer.ggml.add_bos_token');
  const addBos = typeof addBosKey === 'boolean' ? addBosKey : preTokenizer.addBos === true;
  const tokenizer: Json = {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: preTokenizer.normalizer,
    pre_tokenizer: preTokenizer.pre_tokenizer,
    post_processor:
      addBos && bos !== undefined
        ? {
            type: 'TemplateProcessing',
            single: [{ SpecialToken: { id: tokens[bos], type_id: 0 } }, { Sequence: { id: 'A', type_id: 0 } }],
            pair: [
              { SpecialToken: { id: tokens[bos], type_id: 0 } },
              { Sequence: { id: 'A', type_id: 0 } },
              { Sequence: { id: 'B', type_id: 1 } },
            ],
            special_tokens: { [tokens[bos]]: { id: tokens[bos], ids: [bos], tokens: [tokens[bos]] } },
          }
        : null,
    decoder: { type: 'ByteLevel', add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: name(idOf(m, 'tokenizer.ggml.unknown_token_id')) ?? null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: preTokenizer.ignoreMerges === true,
      vocab,
      merges,
    },
  };
  const template = m.get('tokenizer.chat_template');
  const tokenizerConfig: Json = {
    add_bos_token: addBos,
    add_eos_token: m.get('tokenizer.ggml.add_eos_token') === true,
    clean_up_tokenization_spaces: false,
    ...(name(bos) !== undefined ? { bos_token: name(bos) } : {}),
    ...(name(eos) !== undefined ? { eos_token: name(eos) } : {}),
    ...(name(idOf(m, 'tokenizer.ggml.padding_token_id')) !== undefined
      ? { pad_token: name(idOf(m, 'tokenizer.ggml.padding_token_id')) }
      : {}),
    ...(name(idOf(m, 'tokenizer.ggml.unknown_token_id')) !== undefined
      ? { unk_token: name(idOf(m, 'tokenizer.ggml.unknown_token_id')) }
      : {}),
    ...(typeof template === 'string' ? { chat_template: template } : {}),
  };
  return {
    'tokenizer.json': tokenizer,
    'tokenizer_config.json': tokenizerConfig,
    'generation_config.json': { ...(bos !== undefined ? { bos_token_id: bos } : {}), eos_token_id: ends },
  };
}
