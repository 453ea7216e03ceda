// response_format matchers over real tokenizers: SmolVLM's (byte-level BPE, 49,280 tokens) and Voxtral's
// (tekken converted to byte-level BPE, 131,072), and a small byte-fallback one built here. A valid answer,
// tokenized as the model would write it, passes the mask token by token and then only the stop tokens are
// allowed; seeded random walks through the masks always end in JSON that validates (a validator written
// from the JSON Schema text, test/helpers/json-schema-subset.ts).

import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InternalError, UnsupportedSchemaError } from '../../src/errors';
import { GrammarCache } from '../../src/grammar/grammar-cache';
import type { ResponseFormatSpec } from '../../src/grammar/grammar-source';
import { grammarVocabulary, vocabTypeOf } from '../../src/grammar/tokenizer-info';
import { NodeDirSource } from '../../src/io/model-source-node';
import { readJson, type ModelFiles } from '../../src/processor/files';
import { loadStopTokenIds } from '../../src/processor/stop-tokens';
import { TextTokenizer } from '../../src/processor/tokenizer';
import { mulberry32 } from '../../src/selfcheck/random';
import { allowedIds, allows, byteLevelBytes, randomWalk, walk } from '../helpers/grammar';
import { validate } from '../helpers/json-schema-subset';

const MODELS = resolve(import.meta.dirname, '../fixtures/models');

interface Model {
  tokenizer: TextTokenizer;
  vocabSize: number;
  stops: number[];
}

async function loadModel(name: string): Promise<Model> {
  const files = new NodeDirSource(resolve(MODELS, name));
  const tokenizer = await TextTokenizer.load(files);
  const config = (await readJson(files, 'config.json')) as { vocab_size?: number; text_config?: { vocab_size?: number } };
  const vocabSize = config.text_config?.vocab_size ?? config.vocab_size!;
  return { tokenizer, vocabSize, stops: await loadStopTokenIds(files, tokenizer) };
}

const schemaFormat = (schema: object): ResponseFormatSpec => ({
  type: 'json_schema',
  json_schema: { name: 'answer', schema: schema as Record<string, unknown>, strict: true },
});

/** Nested objects, arrays and enums. */
const PET = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 12 },
    kind: { enum: ['cat', 'dog', 'bird'] },
    tags: { type: 'array', items: { type: 'string', maxLength: 8 }, maxItems: 3 },
    owner: {
      type: 'object',
      properties: {
        first: { type: 'string', maxLength: 10 },
        pets: { type: 'array', items: { enum: ['x50', 'x19', 'x10'] }, minItems: 1, maxItems: 2 },
      },
      required: ['first', 'pets'],
      additionalProperties: false,
    },
  },
  required: ['name', 'kind', 'tags', 'owner'],
  additionalProperties: false,
};
const PET_VALUE = { name: 'Rex', kind: 'dog', tags: ['good', 'loud'], owner: { first: 'Ann', pets: ['x19', 'x10'] } };

/** Numbers with bounds, an integer, booleans. */
const READING = {
  type: 'object',
  properties: {
    celsius: { type: 'integer', minimum: -40, maximum: 60 },
    count: { type: 'integer', minimum: 0 },
    ratio: { type: 'number' },
    calibrated: { type: 'boolean' },
    ok: { type: ['boolean', 'null'] },
  },
  required: ['celsius', 'count', 'ratio', 'calibrated', 'ok'],
  additionalProperties: false,
};
const READING_VALUE = { celsius: -12, count: 1024, ratio: 0.25, calibrated: true, ok: null };

const CASES: Array<{ label: string; format: ResponseFormatSpec; schema: object; value: unknown }> = [
  {
    label: 'json_object',
    format: { type: 'json_object' },
    schema: { type: 'object' },
    value: { a: [1, 'two', { three: null }], b: true, 'c d': -1.5e-3 },
  },
  { label: 'nested objects, arrays, enums', format: schemaFormat(PET), schema: PET, value: PET_VALUE },
  { label: 'bounded integers, numbers, booleans', format: schemaFormat(READING), schema: READING, value: READING_VALUE },
];

describe('SmolVLM tokenizer', () => {
  let smol: Model;
  let cache: GrammarCache;
  /** Tokens that close a string, array or object: random walks pick them often so answers end. */
  let closers: number[];

  beforeAll(async () => {
    smol = await loadModel('SmolVLM-256M-Instruct');
    cache = await GrammarCache.create(smol.tokenizer, { vocabSize: smol.vocabSize, stopTokenIds: smol.stops });
    closers = smol.tokenizer.vocabulary().flatMap((p, id) => (/^["\]}]+,?$/.test(p) ? [id] : []));
  });
  afterAll(() => cache.dispose());

  it('builds the vocabulary from tokenizer.json: byte-level, special tokens blanked, stop tokens kept', () => {
    const v = grammarVocabulary(smol.tokenizer, smol.vocabSize, smol.stops);
    expect(v.vocabType).toBe('byte_level');
    expect(v.pieces).toHaveLength(49280);
    expect(smol.stops).toEqual([49279, 2]);
    expect(v.pieces[49190]).toBe(''); // <image>
    expect(v.pieces[49279]).toBe('<end_of_utterance>');
    expect(v.pieces[smol.tokenizer.tokenId('Ġhello')!]).toBe('Ġhello');
    expect(cache.tokenizerInfoMs).toBeGreaterThan(0);
  });

  for (const c of CASES) {
    it(`${c.label}: a valid answer passes token by token, then only the stop tokens are allowed`, async () => {
      expect(validate(c.value, c.schema)).toEqual([]);
      const ids = smol.tokenizer.encodePlain(JSON.stringify(c.value));
      const m = await cache.createMatcher(c.format);
      const mask = new Int32Array(m.maskWords);
      for (const [i, id] of ids.entries()) {
        m.fillMask(mask);
        expect(allows(mask, id), `token ${i} ${JSON.stringify(smol.tokenizer.piece(id))}`).toBe(true);
        m.accept(id);
      }
      m.fillMask(mask);
      expect(allowedIds(mask, m.vocabSize)).toEqual([...smol.stops].sort((a, b) => a - b));
      expect(m.isTerminated).toBe(false);
      m.accept(smol.stops[0]!);
      expect(m.isTerminated).toBe(true);
      expect(m.numTokens).toBe(ids.length + 1);
      expect(() => m.fillMask(mask)).toThrow(InternalError);
      m.dispose();
    });
  }

  it('masks out tokens that would break the JSON or the schema', async () => {
    const tok = smol.tokenizer;
    const id = (piece: string) => tok.tokenId(piece)!;
    const m = await cache.createMatcher(schemaFormat(PET));
    const mask = new Int32Array(m.maskWords);
    m.fillMask(mask);
    expect(allows(mask, id('['))).toBe(false);
    expect(allows(mask, id('{'))).toBe(true);
    expect(allows(mask, id('Ġ{'))).toBe(false); // no whitespace
    expect(allows(mask, 49190)).toBe(false); // <image>
    expect(walk(m, tok.encodePlain('{"name":"Rex","kind":"'), smol.stops)).toBe('incomplete');
    m.fillMask(mask);
    expect(allows(mask, id('c'))).toBe(true); // cat
    expect(allows(mask, id('f'))).toBe(false); // not an enum value
    expect(allows(mask, id('"'))).toBe(false); // "" is not one either
    expect(() => m.accept(id('f'))).toThrow(/token \d+ \(output token \d+\) is not allowed by the response_format grammar/);
    expect(() => m.accept(smol.vocabSize)).toThrow(InternalError);
    m.dispose();
    m.dispose(); // a second dispose is harmless
    expect(() => m.fillMask(mask)).toThrow(/after dispose/);
  });

  it('keeps the answer valid UTF-8: after byte 0xF4 only 0x80..0x8F may follow', async () => {
    const tok = smol.tokenizer;
    const m = await cache.createMatcher(schemaFormat({ type: 'string' }));
    const mask = new Int32Array(m.maskWords);
    m.accept(tok.tokenId('"')!);
    m.accept(tok.tokenId('ô')!); // byte 0xF4 alone: the first of four
    m.fillMask(mask);
    expect(allows(mask, tok.tokenId('°')!)).toBe(false); // 0xB0: XGrammar itself would allow it
    expect(allows(mask, tok.tokenId('"')!)).toBe(false);
    expect(allowedIds(mask, m.vocabSize).length).toBeGreaterThan(0);
    m.dispose();
  });

  it('random walks through the masks end in JSON that validates', async () => {
    const random = mulberry32(20261126);
    for (const c of CASES) {
      let numStopped = 0;
      for (let i = 0; i < 10; i++) {
        const m = await cache.createMatcher(c.format);
        const { ids, stopped } = randomWalk(m, random, { stopIds: smol.stops, closers, maxTokens: 300 });
        m.dispose();
        if (!stopped) continue;
        numStopped++;
        // Valid UTF-8 (U+FFFD only where the model wrote that character itself), then valid JSON.
        const bytes = byteLevelBytes(ids.map((id) => smol.tokenizer.piece(id)!));
        const text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
        expect(smol.tokenizer.decode(ids, false)).toBe(text);
        const value = JSON.parse(text);
        expect(validate(value, c.schema), `${c.label}: ${text}`).toEqual([]);
      }
      expect(numStopped, c.label).toBeGreaterThanOrEqual(8);
    }
  });

  it('compiles a schema once whatever its keyword order; refuses an unsupported one with every path', async () => {
    const before = cache.numGrammars;
    const a = await cache.compile(schemaFormat(READING));
    const b = await cache.compile(
      schemaFormat({ additionalProperties: false, required: READING.required, type: 'object', properties: READING.properties }),
    );
    expect(b.cached).toBe(true);
    expect(b.key).toBe(a.key);
    expect(cache.numGrammars).toBe(Math.max(before, 1));
    const bad = schemaFormat({
      type: 'object',
      properties: { when: { type: 'string', format: 'date-time' }, n: { type: 'number', maximum: 1 } },
    });
    await expect(cache.createMatcher(bad)).rejects.toThrow(UnsupportedSchemaError);
    await expect(cache.createMatcher(bad)).rejects.toThrow(
      /\$\.properties\.when\.format: format .*\n {2}\$\.properties\.n\.maximum: maximum/,
    );
  });

  it('pads a vocab_size larger than the tokenizer: padded ids are never allowed', async () => {
    const padded = await GrammarCache.create(smol.tokenizer, { vocabSize: smol.vocabSize + 70, stopTokenIds: smol.stops });
    const m = await padded.createMatcher({ type: 'json_object' });
    const mask = new Int32Array(m.maskWords);
    expect(m.maskWords).toBe(Math.ceil((smol.vocabSize + 70) / 32));
    m.accept(smol.tokenizer.tokenId('{"')!);
    m.fillMask(mask);
    expect(allowedIds(mask, m.vocabSize).filter((id) => id >= smol.vocabSize)).toEqual([]);
    expect(allowedIds(mask, m.vocabSize).length).toBeGreaterThan(1000);
    padded.dispose();
    // The cache freed the matcher it made; both dispose() calls are harmless.
    expect(() => m.fillMask(mask)).toThrow(/after dispose/);
    m.dispose();
    padded.dispose();
    await expect(padded.createMatcher({ type: 'json_object' })).rejects.toThrow(/after dispose/);
  });
});

describe('other vocabularies', () => {
  it("Voxtral's tokenizer (131,072 tokens, byte-level)", async () => {
    const vox = await loadModel('Voxtral-Mini-3B-2507');
    expect(vocabTypeOf(vox.tokenizer.decoderSteps)).toBe('byte_level');
    const cache = await GrammarCache.create(vox.tokenizer, { vocabSize: vox.vocabSize, stopTokenIds: vox.stops });
    const m = await cache.createMatcher(schemaFormat(PET));
    expect(walk(m, vox.tokenizer.encodePlain(JSON.stringify(PET_VALUE)), vox.stops)).toBe('complete');
    cache.dispose();
  });

  it('a byte-fallback tokenizer: <0xNN> pieces are bytes, ▁ is a space, and bytes must form UTF-8', async () => {
    const bytes = Array.from({ length: 256 }, (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    const words = ['▁', '{', '}', '"', ':', ',', 'a', 'b', '▁a', '{"', '":"', '"}'];
    const vocab: Record<string, number> = {};
    ['<unk>', '<s>', '</s>', ...bytes, ...words].forEach((t, i) => {
      vocab[t] = i;
    });
    const tokenizerJson = {
      version: '1.0',
      added_tokens: ['<unk>', '<s>', '</s>'].map((content, id) => ({
        id,
        content,
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: false,
        special: true,
      })),
      normalizer: null,
      pre_tokenizer: { type: 'Metaspace', replacement: '▁', prepend_scheme: 'first', split: false },
      post_processor: null,
      decoder: {
        type: 'Sequence',
        decoders: [
          { type: 'Replace', pattern: { String: '▁' }, content: ' ' },
          { type: 'ByteFallback' },
          { type: 'Fuse' },
          { type: 'Strip', content: ' ', start: 1, stop: 0 },
        ],
      },
      model: {
        type: 'BPE',
        dropout: null,
        unk_token: '<unk>',
        continuing_subword_prefix: null,
        end_of_word_suffix: null,
        fuse_unk: true,
        byte_fallback: true,
        vocab,
        merges: [],
      },
    };
    const files: ModelFiles = {
      where: 'a byte-fallback tokenizer made in the test',
      readText: async (name) =>
        name === 'tokenizer.json' ? JSON.stringify(tokenizerJson) : name === 'tokenizer_config.json' ? '{}' : undefined,
    };
    const tokenizer = await TextTokenizer.load(files);
    expect(vocabTypeOf(tokenizer.decoderSteps)).toBe('byte_fallback');
    const size = Object.keys(vocab).length;
    const cache = await GrammarCache.create(tokenizer, { vocabSize: size, stopTokenIds: [2] });
    const id = (t: string) => vocab[t]!;
    const format = schemaFormat({ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] });
    // {"a":" é"} with é as its two UTF-8 bytes and the space as ▁
    const answer = ['{"', 'a', '":"', '▁', '<0xC3>', '<0xA9>', '"}'].map(id);
    const m = await cache.createMatcher(format);
    expect(walk(m, answer, [2])).toBe('complete');
    const m2 = await cache.createMatcher(format);
    const mask = new Int32Array(m2.maskWords);
    for (const t of ['{"', 'a', '":"', '<0xC3>']) m2.accept(id(t));
    m2.fillMask(mask);
    expect(allows(mask, id('<0xA9>'))).toBe(true);
    expect(allows(mask, id('<0x41>'))).toBe(false); // 'A' cannot continue a two-byte character
    expect(allows(mask, id('a'))).toBe(false);
    cache.dispose();
  });
});
