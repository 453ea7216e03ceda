// A Qwen2 tokenizer loaded from vocab.json + merges.txt + tokenizer_config.json (src/processor/qwen2-bpe.ts:
// the tokenizer.json transformers' Qwen2Converter builds from them), on Qwen3-VL-2B-Instruct's own files,
// which carry no tokenizer.json. Expected ids are Qwen2's published encodings (the Qwen2 BPE: Qwen2.5 and
// Qwen3 share it): the pattern's cases (spaces, newlines, tabs, contractions, an emoji), the special tokens
// of the chat template, and decoding back to the text.

import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { NodeDirSource } from '../../src/io/model-source-node';
import { TextTokenizer } from '../../src/processor/tokenizer';

const DIR = resolve(import.meta.dirname, '../fixtures/models/Qwen3-VL-2B-Instruct');

let tok: TextTokenizer;
beforeAll(async () => {
  tok = await TextTokenizer.load(new NodeDirSource(DIR));
});

const PLAIN: Array<[string, number[]]> = [
  ['hello', [14990]],
  [' world', [1879]],
  ['hello world', [14990, 1879]],
  ['hello ', [14990, 220]],
  ['hello  ', [14990, 256]],
  ["I'm", [40, 2776]],
  ['\n', [198]],
  ['hello\n\n', [14990, 271]],
  [' \n', [715]],
  ['  ', [256]],
  ['hello\tworld', [14990, 76508]],
  ['😊', [144236]],
];

describe('Qwen2 tokenizer from vocab.json + merges.txt', () => {
  it.each(PLAIN)('%j', (text, ids) => {
    expect(tok.encodePlain(text)).toEqual(ids);
    expect(tok.decode(ids, false)).toBe(text);
  });

  it('the chat special tokens are added tokens, split out of trusted text', () => {
    const { ids } = tok.encodeSegments([{ text: '<|im_start|>user\nhi<|im_end|>', trusted: true }], false);
    expect(ids).toEqual([151644, 872, 198, 6023, 151645]);
    expect(tok.encodeSegments([{ text: 'hi<|endoftext|>!', trusted: true }], false).ids).toEqual([6023, 151643, 0]);
    expect(tok.tokenId('<|image_pad|>')).toBe(151655);
    expect(tok.tokenId('<|vision_start|>')).toBe(151652);
    expect(tok.isSpecial(151645)).toBe(true);
  });
});
