// Voxtral's Tekken tokenizer in test form: the tekken.json its tokenizer.json (HF's conversion, the fixture
// test/fixtures/models/Voxtral-Mini-3B-2507/tokenizer.json, also the tiny checkpoints') was converted from,
// and texts that exercise it (scripts, emoji, code, digits, spaces, control-token strings).

import type { TextTokenizer } from '../../src/processor/tokenizer';

export const NUM_SPECIAL = 1000;
const VOCAB_SIZE = 131072;
/** Entries in the real tekken.json; those past VOCAB_SIZE - NUM_SPECIAL are unused by mistral-common. */
const FILE_VOCAB_ENTRIES = 150000;

type Json = Record<string, unknown>;

/** GPT-2's bytes_to_unicode, inverted: byte-level character → byte. Written out here, apart from tekken.ts. */
function charToByte(): Map<string, number> {
  const map = new Map<string, number>();
  let next = 256;
  for (let b = 0; b < 256; b++) {
    const printable = (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || (b >= 174 && b <= 255);
    map.set(String.fromCharCode(printable ? b : next++), b);
  }
  return map;
}

/** The tekken.json that the fixture tokenizer.json was converted from (as far as the conversion keeps it). */
export function tekkenFromTokenizerJson(tj: Json): Json {
  const model = tj.model as { vocab: Record<string, number> };
  const byId: string[] = [];
  for (const [token, id] of Object.entries(model.vocab)) byId[id] = token;
  const toByte = charToByte();
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const vocab: Json[] = [];
  for (let id = NUM_SPECIAL; id < VOCAB_SIZE; id++) {
    const bytes = Uint8Array.from([...byId[id]!].map((c) => toByte.get(c)!));
    let str: string | null = null;
    try {
      str = utf8.decode(bytes);
    } catch {
      // mistral-common writes null for tokens that are not whole UTF-8
    }
    vocab.push({ rank: id - NUM_SPECIAL, token_bytes: Buffer.from(bytes).toString('base64'), token_str: str });
  }
  // Unused tail, as in the real file (0xF8 never occurs in UTF-8, so these are not real tokens).
  for (let rank = vocab.length; rank < FILE_VOCAB_ENTRIES; rank++) {
    const bytes = [0xf8, rank >> 16, (rank >> 8) & 255, rank & 255];
    vocab.push({ rank, token_bytes: Buffer.from(bytes).toString('base64'), token_str: null });
  }
  // List the specials up to the last named one ([TRANSCRIBE] 34); the rest are mistral-common's fillers.
  const added = tj.added_tokens as Array<{ id: number; content: string }>;
  const special_tokens = added.filter((t) => t.id <= 34).map((t) => ({ rank: t.id, token_str: t.content, is_control: true }));
  const split = (tj.pre_tokenizer as { pretokenizers: Array<{ pattern?: { Regex: string } }> }).pretokenizers[0]!;
  return {
    config: {
      pattern: split.pattern!.Regex,
      num_vocab_tokens: FILE_VOCAB_ENTRIES,
      default_vocab_size: VOCAB_SIZE,
      default_num_special_tokens: NUM_SPECIAL,
      version: 'v7',
    },
    vocab,
    special_tokens,
  };
}

export const TEKKEN_TEXTS = [
  '',
  'Hello, world! How are you doing today?',
  "Les élèves ont préféré l'été à Noël ; où est-ce ? Ça coûte 12,50 € — déjà vu.",
  'नमस्ते, आप कैसे हैं? मैं ठीक हूँ। हिन्दी में लिखा गया वाक्य।',
  '今天天气很好，我们去公园散步吧。机器学习模型在浏览器中运行。',
  'Привет, мир! こんにちは世界。안녕하세요. مرحبا بالعالم. Γειά σου Κόσμε.',
  'I ❤️ tokenizers 🤖🎉 👩‍👩‍👧‍👦 🇫🇷 👍🏽 ✨',
  'function f(x) {\n\tif (x > 0) {\n\t\treturn x * 2; // double\n\t}\r\n\treturn -x;\n}\n\n\n',
  'def main():\n    for i in range(10):\n        print(f"{i:03d}")\n',
  '3.14159 1234567890 2025-11-26 0x1F 1e-9 100,000 ½ ² ١٢٣',
  'lang:en',
  '[INST] what is this? [/INST] <s></s> [AUDIO][BEGIN_AUDIO][TRANSCRIBE]',
  '   leading and trailing spaces   ',
  ' one leading space',
  '\n\n  \t \n',
  'Donaudampfschifffahrtsgesellschaftskapitänsmütze',
  'e\u0301 n\u0303 a\u200bb 𠜎𠜱𠝹 \u00a0nbsp',
  'See https://example.com/path?q=1&r=2#frag — **bold** _it_ `code` <div class="x">',
  'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa !!!!!!????.... ------ ======',
  'ALL CAPS TEXT, CamelCaseWord, snake_case_word, kebab-case-word, iPhone, McDonald’s',
];

/** `count` texts, each the decoding of `length` vocabulary ids drawn by a fixed-seed LCG (glibc's constants). */
export function randomVocabTexts(tok: TextTokenizer, count: number, length: number): string[] {
  let seed = 12345;
  const next = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed / 2 ** 32;
  };
  return Array.from({ length: count }, () =>
    tok.decode(
      Array.from({ length }, () => NUM_SPECIAL + Math.floor(next() * (VOCAB_SIZE - NUM_SPECIAL))),
      false,
    ),
  );
}
