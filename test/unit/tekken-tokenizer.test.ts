// tekken.json (Mistral's tokenizer file) against tokenizer.json (HF's conversion of it): the tekken.json is
// built FROM the real Voxtral-Mini-3B-2507 tokenizer.json (test/helpers/tekken-json.ts: byte-level strings →
// bytes → base64, rank = id - 1000, special tokens from ids 0-999), converted back by src/processor/tekken.ts,
// and both tokenizers must give the same ids on varied text. Merges are derived from ranks, so equal ids test the derivation.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ProcessorConfigError } from '../../src/errors';
import { MemorySource } from '../../src/io/model-source';
import { NodeDirSource } from '../../src/io/model-source-node';
import type { ModelFiles } from '../../src/processor/files';
import { tekkenToTokenizerJson } from '../../src/processor/tekken';
import { TextTokenizer } from '../../src/processor/tokenizer';
import { VoxtralProcessor } from '../../src/processor/voxtral-processor';
import { NUM_SPECIAL, randomVocabTexts, TEKKEN_TEXTS as TEXTS, tekkenFromTokenizerJson } from '../helpers/tekken-json';

const DIR = resolve(import.meta.dirname, '../fixtures/models/Voxtral-Mini-3B-2507');
type Json = Record<string, unknown>;

let reference: TextTokenizer; // from the fixture's tokenizer.json
let fromTekken: TextTokenizer; // from the tekken.json built from it, through TextTokenizer.load
let tokenizerJson: Json;
let tekken: Json;
let tekkenText: string;

beforeAll(async () => {
  tokenizerJson = JSON.parse(readFileSync(resolve(DIR, 'tokenizer.json'), 'utf8')) as Json;
  tekken = tekkenFromTokenizerJson(tokenizerJson);
  tekkenText = JSON.stringify(tekken);
  reference = await TextTokenizer.load(new NodeDirSource(DIR));
  fromTekken = await TextTokenizer.load(new MemorySource({ 'tekken.json': tekkenText }, 'voxtral-tekken (in memory)'));
}, 60_000);

describe('tekken.json converted to tokenizer.json (real Voxtral vocabulary)', () => {
  it('gives the vocabulary, merges and pipeline of HF conversion exactly', () => {
    const got = tekkenToTokenizerJson(JSON.parse(tekkenText), 'tekken.json (test)').tokenizer;
    const gotModel = got.model as { vocab: Record<string, number>; merges: Array<[string, string]> };
    const refModel = tokenizerJson.model as { vocab: Record<string, number>; merges: string[] };
    // The unused tail of the file's vocab is left out: 131072 ids, as in tokenizer.json.
    expect(Object.keys(gotModel.vocab)).toHaveLength(Object.keys(refModel.vocab).length);
    const vocabDiffs = Object.entries(refModel.vocab).filter(([token, id]) => gotModel.vocab[token] !== id);
    expect(vocabDiffs.slice(0, 5)).toEqual([]);
    expect(gotModel.merges).toHaveLength(refModel.merges.length);
    const firstMergeDiff = refModel.merges.findIndex((m, i) => m !== gotModel.merges[i]!.join(' '));
    expect(firstMergeDiff).toBe(-1);
    for (const key of ['added_tokens', 'normalizer', 'pre_tokenizer', 'post_processor', 'decoder']) {
      expect(got[key], key).toEqual(tokenizerJson[key]);
    }
    const { vocab: _v, merges: _m, ...rest } = gotModel;
    const { vocab: _rv, merges: _rm, ...refRest } = refModel;
    expect(rest).toEqual(refRest);
  });

  it(`encodes ${TEXTS.length} texts (plain and trusted) and 200 random-token texts to the same ids as tokenizer.json`, () => {
    for (const text of TEXTS) {
      for (const trusted of [false, true]) {
        const want = reference.encodeSegments([{ text, trusted }]).ids;
        expect(fromTekken.encodeSegments([{ text, trusted }]).ids, `${JSON.stringify(text)} trusted=${trusted}`).toEqual(want);
      }
    }
    // Harder text for the merges: runs of random vocabulary tokens (seeded), decoded to text and encoded.
    for (const text of randomVocabTexts(reference, 200, 30)) {
      expect(fromTekken.encodePlain(text), JSON.stringify(text)).toEqual(reference.encodePlain(text));
    }
    // Independent of both: mistral-common's ids for the transcription prompt's language text.
    expect(fromTekken.encodePlain('lang:en')).toEqual([9909, 1058, 1262]);
  });

  it('decodes every text back to itself', () => {
    for (const text of TEXTS) {
      const ids = fromTekken.encodeSegments([{ text, trusted: false }], false).ids;
      expect(fromTekken.decode(ids, false), JSON.stringify(text)).toBe(text);
      expect(fromTekken.decode(ids, false)).toBe(reference.decode(ids, false));
    }
  });

  it('typed control-token strings stay plain text unless trusted', () => {
    const text = '[INST]hi[/INST][AUDIO]';
    const plain = fromTekken.encodeSegments([{ text, trusted: false }]).ids;
    expect(plain[0]).toBe(1); // BOS from the post-processor
    expect(plain.slice(1).filter((id) => id < NUM_SPECIAL)).toEqual([]);
    expect(fromTekken.encodeSegments([{ text, trusted: true }]).ids).toEqual([1, 3, ...fromTekken.encodePlain('hi'), 4, 24]);
  });

  it('finds the control tokens by name, marks them special, and names BOS/EOS in its config', () => {
    const control = {
      '<s>': 1,
      '</s>': 2,
      '[INST]': 3,
      '[/INST]': 4,
      '[AUDIO]': 24,
      '[BEGIN_AUDIO]': 25,
      '[TRANSCRIBE]': 34,
      '<SPECIAL_999>': 999,
    };
    for (const [name, id] of Object.entries(control)) {
      expect(fromTekken.tokenId(name), name).toBe(id);
      expect(fromTekken.isSpecial(id)).toBe(true);
    }
    expect(fromTekken.configTokenId('bos_token')).toBe(1);
    expect(fromTekken.configTokenId('eos_token')).toBe(2);
    expect(fromTekken.decode([1, 24, 25, 34, 2], false)).toBe('<s>[AUDIO][BEGIN_AUDIO][TRANSCRIBE]</s>');
    expect(fromTekken.decode([1, ...fromTekken.encodePlain('ok'), 2], true)).toBe('ok');
  });

  it('a Voxtral checkpoint with tekken.json instead of tokenizer.json plans the same prompts', async () => {
    const base = new NodeDirSource(DIR);
    const files: ModelFiles = {
      where: `${base.where} (tekken.json instead of tokenizer.json)`,
      async readText(name) {
        if (name === 'tekken.json') return tekkenText;
        if (name === 'tokenizer.json' || name === 'tokenizer_config.json') return undefined;
        return await base.readText(name);
      },
    };
    const [viaTekken, viaJson] = await Promise.all([VoxtralProcessor.load(files, 375, 24), VoxtralProcessor.load(base, 375, 24)]);
    const audio = { type: 'audio' as const, audio: null };
    const transcribe = (p: VoxtralProcessor) =>
      Array.from(p.planPrompt([{ role: 'user', content: [audio] }], [2], { transcription: { language: 'fr' } }).tokenIds);
    expect(transcribe(viaTekken)).toEqual(transcribe(viaJson));
    const chat = [{ role: 'user' as const, content: [audio, { type: 'text' as const, text: 'Résume cet audio en une phrase.' }] }];
    const ask = (p: VoxtralProcessor) => Array.from(p.planPrompt(chat, [1]).tokenIds);
    expect(ask(viaTekken)).toEqual(ask(viaJson));
    expect(viaTekken.stopTokenIds).toEqual(viaJson.stopTokenIds);
  }, 60_000);
});

/** A tekken.json small enough to read: 256 bytes, then "ab", "bc", "abc", " a"; 3 specials. */
function tinyTekken(): Json {
  const b64 = (s: string) => Buffer.from(s, 'latin1').toString('base64');
  const words = ['ab', 'bc', 'abc', ' a', 'unused tail'];
  return {
    config: {
      pattern: '[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}|\\s+',
      default_vocab_size: 3 + 256 + 4,
      default_num_special_tokens: 3,
      version: 'v7',
    },
    vocab: [
      ...Array.from({ length: 256 }, (_, b) => ({ rank: b, token_bytes: b64(String.fromCharCode(b)), token_str: null })),
      ...words.map((w, i) => ({ rank: 256 + i, token_bytes: b64(w), token_str: w })),
    ],
    special_tokens: ['<unk>', '<s>', '</s>'].map((token_str, rank) => ({ rank, token_str, is_control: true })),
  };
}

describe('tekken.json conversion rules (a tiny vocabulary)', () => {
  it('derives merges in rank order of the merged token, then by the ranks of its parts', () => {
    const { tokenizer, config } = tekkenToTokenizerJson(tinyTekken(), 'tiny');
    const model = tokenizer.model as { vocab: Record<string, number>; merges: string[][] };
    // "abc" splits as a+bc (ranks 97, 257) and ab+c (256, 99): a+bc first. " a" is "Ġa" in byte-level form.
    expect(model.merges).toEqual([
      ['a', 'b'],
      ['b', 'c'],
      ['a', 'bc'],
      ['ab', 'c'],
      ['Ġ', 'a'],
    ]);
    expect(Object.keys(model.vocab)).toHaveLength(3 + 260);
    expect(model.vocab.abc).toBe(3 + 258);
    expect(model.vocab['<s>']).toBe(1);
    expect(config).toMatchObject({ bos_token: '<s>', eos_token: '</s>', unk_token: '<unk>', add_bos_token: true });
  });

  it('encodes and decodes through TextTokenizer.load', async () => {
    const tok = await TextTokenizer.load(new MemorySource({ 'tekken.json': JSON.stringify(tinyTekken()) }));
    const ids = tok.encodeSegments([{ text: 'abc abd', trusted: false }]).ids;
    // "abc" is a token. " abd": "ab" (rank 256) merges before " a" (259), and nothing merges " " + "ab".
    expect(ids).toEqual([1, 3 + 258, 3 + 32, 3 + 256, 3 + 100]);
    expect(tok.decode(ids, true)).toBe('abc abd');
  });

  it('names the field and the file of malformed input', () => {
    const cases: Array<[string, (t: Json) => unknown, RegExp]> = [
      ['null', () => null, /tiny is not a JSON object/],
      ['an array', () => [], /tiny is not a JSON object/],
      ['no config', ({ config: _, ...t }) => t, /tiny has no "config" object/],
      ['no vocab', ({ vocab: _, ...t }) => t, /tiny has no "vocab" list/],
      ['no special_tokens', ({ special_tokens: _, ...t }) => t, /tiny has no "special_tokens" list/],
      ['no pattern', (t) => ({ ...t, config: { ...(t.config as Json), pattern: undefined } }), /tiny: config\.pattern/],
      [
        'bad base64',
        (t) => withVocab(t, 258, { token_bytes: '!!not base64' }),
        /tiny: vocab\[258\]\.token_bytes "!!not base64" is not base64/,
      ],
      ['no token_bytes', (t) => withVocab(t, 258, { token_bytes: undefined }), /tiny: vocab\[258\]\.token_bytes undefined is not base64/],
      [
        'a duplicate rank',
        (t) => withVocab(t, 258, { rank: 257 }),
        /tiny: vocab\[258\]\.rank is 257 but must be 258 .*rank 257 is a duplicate/,
      ],
      [
        'repeated bytes',
        (t) => withVocab(t, 258, { token_bytes: btoa('ab') }),
        /tiny: vocab\[258\]\.token_bytes repeats the bytes of vocab\[256\]/,
      ],
      [
        'a wrong byte token',
        (t) => withVocab(t, 5, { token_bytes: btoa('\u0006') }),
        /tiny: vocab\[5\]\.token_bytes .* rank 5 must be the single byte 5/,
      ],
      ['an empty token', (t) => withVocab(t, 259, { token_bytes: '' }), /tiny: vocab\[259\]\.token_bytes decodes to 0 bytes/],
      [
        'zero special tokens',
        (t) => withConfig(t, { default_num_special_tokens: 0 }),
        /tiny: config\.default_num_special_tokens is 0, not a positive integer/,
      ],
      ['a fractional count', (t) => withConfig(t, { default_num_special_tokens: 2.5 }), /default_num_special_tokens is 2\.5/],
      [
        'too many special tokens',
        (t) => withConfig(t, { default_num_special_tokens: 8 }),
        /default_num_special_tokens is 8 but config\.default_vocab_size is 263, which leaves no room/,
      ],
      [
        'fewer than listed',
        (t) => withConfig(t, { default_num_special_tokens: 2 }),
        /special_tokens lists 3 tokens but config\.default_num_special_tokens is 2/,
      ],
      ['a vocab size past the list', (t) => withConfig(t, { default_vocab_size: 300 }), /tiny: vocab has 261 entries but .* needs 297/],
      ['no vocab size', (t) => withConfig(t, { default_vocab_size: '263' }), /config\.default_vocab_size is "263"/],
      ['special ranks out of order', (t) => withSpecial(t, 1, { rank: 2 }), /tiny: special_tokens\[1\]\.rank is 2 but must be 1/],
      ['a repeated special', (t) => withSpecial(t, 2, { token_str: '<s>' }), /tiny: special_tokens\[2\]\.token_str '<s>' is listed twice/],
      ['a nameless special', (t) => withSpecial(t, 0, { token_str: null }), /tiny: special_tokens\[0\]\.token_str is null/],
      ['no <s>', (t) => withSpecial(t, 1, { token_str: '<bos>' }), /tiny: special_tokens has no '<s>'/],
    ];
    for (const [name, mutate, message] of cases) {
      const convert = () => tekkenToTokenizerJson(mutate(tinyTekken()), 'tiny');
      expect(convert, name).toThrow(ProcessorConfigError);
      expect(convert, name).toThrow(message);
    }
  });

  it('a folder with neither tokenizer.json nor tekken.json, or a broken tekken.json, is a named error', async () => {
    await expect(TextTokenizer.load(new MemorySource({}, 'empty-folder'))).rejects.toThrow(
      /tokenizer\.json is missing from empty-folder, and so is tekken\.json/,
    );
    await expect(TextTokenizer.load(new MemorySource({ 'tekken.json': '{"config": ' }, 'f'))).rejects.toThrow(ProcessorConfigError);
    await expect(TextTokenizer.load(new MemorySource({ 'tekken.json': '{"vocab": []}' }, 'f'))).rejects.toThrow(
      /tekken\.json in f has no "config" object/,
    );
  });
});

function withVocab(t: Json, index: number, patch: Json): Json {
  const vocab = [...(t.vocab as Json[])];
  vocab[index] = { ...vocab[index], ...patch };
  return { ...t, vocab };
}

function withSpecial(t: Json, index: number, patch: Json): Json {
  const special_tokens = [...(t.special_tokens as Json[])];
  special_tokens[index] = { ...special_tokens[index], ...patch };
  return { ...t, special_tokens };
}

function withConfig(t: Json, patch: Json): Json {
  return { ...t, config: { ...(t.config as Json), ...patch } };
}
