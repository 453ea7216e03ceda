// A Tekken vocabulary as a GGUF file carries it (tokenizer.ggml.*, pre 'tekken': the keys
// scripts/gguf-convert-voxtral.ts writes from Voxtral's tokenizer.json, which the tiny checkpoints share with
// the fixture) rebuilt by src/processor/gguf-tokenizer.ts, against Tessera's own tekken.json conversion
// (src/processor/tekken.ts) of the same vocabulary: the same ids for varied text and random-token text, the
// same text back, BOS added as llama.cpp's loader adds it for 'tekken' unless the file says otherwise.

import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { MemorySource } from '../../src/io/model-source';
import type { GgufEntry } from '../../src/model/weights/gguf/gguf-format';
import { ggufTokenizerFiles } from '../../src/processor/gguf-tokenizer';
import { TextTokenizer } from '../../src/processor/tokenizer';
import { voxtralTokenizerEntries } from '../../scripts/gguf-convert-voxtral';
import { readJson } from '../../scripts/gguf-convert';
import { randomVocabTexts, TEKKEN_TEXTS, tekkenFromTokenizerJson } from '../helpers/tekken-json';

const DIR = resolve(import.meta.dirname, '../fixtures/models/Voxtral-Mini-3B-2507');

let entries: GgufEntry[];
let fromGguf: TextTokenizer;
let fromTekken: TextTokenizer;

/** The tokenizer the GGUF metadata stands for, with `patch` applied to its keys (undefined: key removed). */
function ggufTokenizer(patch: Record<string, unknown> = {}): Promise<TextTokenizer> {
  const metadata = new Map<string, unknown>(entries.map((e) => [e.key, e.value]));
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) metadata.delete(key);
    else metadata.set(key, value);
  }
  const files = ggufTokenizerFiles(metadata, 'voxtral.gguf (test)');
  return TextTokenizer.load(
    new MemorySource(Object.fromEntries(Object.entries(files).map(([name, v]) => [name, JSON.stringify(v)])), 'voxtral.gguf (test)'),
  );
}

beforeAll(async () => {
  entries = voxtralTokenizerEntries(DIR, 131072);
  fromGguf = await ggufTokenizer();
  const tekken = JSON.stringify(tekkenFromTokenizerJson(readJson(DIR, 'tokenizer.json')));
  fromTekken = await TextTokenizer.load(new MemorySource({ 'tekken.json': tekken }, 'voxtral-tekken (in memory)'));
}, 60_000);

describe("a GGUF file's Tekken vocabulary (pre 'tekken')", () => {
  it('carries the keys llama.cpp writes for it', () => {
    const byKey = new Map(entries.map((e) => [e.key, e.value]));
    expect(byKey.get('tokenizer.ggml.model')).toBe('gpt2');
    expect(byKey.get('tokenizer.ggml.pre')).toBe('tekken');
    expect(byKey.get('tokenizer.ggml.bos_token_id')).toBe(1);
    expect(byKey.get('tokenizer.ggml.eos_token_id')).toBe(2);
    expect(byKey.get('tokenizer.ggml.add_bos_token')).toBe(true);
    expect(byKey.get('tokenizer.ggml.add_eos_token')).toBe(false);
    expect((byKey.get('tokenizer.ggml.tokens') as string[]).length).toBe(131072);
  });

  it(`encodes ${TEKKEN_TEXTS.length} texts (plain and trusted) and 200 random-token texts as the tekken.json conversion does`, () => {
    for (const text of TEKKEN_TEXTS) {
      for (const trusted of [false, true]) {
        const want = fromTekken.encodeSegments([{ text, trusted }]).ids;
        expect(fromGguf.encodeSegments([{ text, trusted }]).ids, `${JSON.stringify(text)} trusted=${trusted}`).toEqual(want);
      }
    }
    for (const text of randomVocabTexts(fromTekken, 200, 30)) {
      expect(fromGguf.encodePlain(text), JSON.stringify(text)).toEqual(fromTekken.encodePlain(text));
    }
    // mistral-common's ids for the transcription prompt's language text.
    expect(fromGguf.encodePlain('lang:en')).toEqual([9909, 1058, 1262]);
  });

  it('decodes to the same text, special tokens kept or skipped', () => {
    for (const text of TEKKEN_TEXTS) {
      const ids = fromTekken.encodeSegments([{ text, trusted: true }]).ids;
      expect(fromGguf.decode(ids, false), JSON.stringify(text)).toBe(fromTekken.decode(ids, false));
      expect(fromGguf.decode(ids, true)).toBe(fromTekken.decode(ids, true));
    }
    for (const name of ['<s>', '</s>', '[INST]', '[/INST]', '[AUDIO]', '[BEGIN_AUDIO]', '[TRANSCRIBE]']) {
      expect(fromGguf.tokenId(name), name).toBe(fromTekken.tokenId(name));
      expect(fromGguf.isSpecial(fromGguf.tokenId(name)!), name).toBe(true);
    }
  });

  it("adds BOS as llama.cpp does for 'tekken' when the file does not say, and as the file says when it does", async () => {
    const noKey = await ggufTokenizer({ 'tokenizer.ggml.add_bos_token': undefined });
    expect(noKey.encodeSegments([{ text: 'hi', trusted: false }]).ids).toEqual([1, ...fromTekken.encodePlain('hi')]);
    const off = await ggufTokenizer({ 'tokenizer.ggml.add_bos_token': false });
    expect(off.encodeSegments([{ text: 'hi', trusted: false }]).ids).toEqual(fromTekken.encodePlain('hi'));
  }, 30_000);
});
