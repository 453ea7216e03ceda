// Text side of the processor: typed special tokens stay text, placeholders only from image parts, chat
// template sources, stop tokens from the files, and streaming detokenization equal to batch decode.

import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  AudioNotSupportedError,
  ChatTemplateError,
  InvalidMessageError,
  ProcessorConfigError,
  VideoNotSupportedError,
} from '../../src/errors';
import { Idefics3Processor, type ChatMessage, type ModelFiles } from '../../src/processor/index';
import { NodeDirSource } from '../../src/io/model-source-node';
import { decodeImageNode, loadProcessorFromDirectory } from '../../src/processor/node';

const REAL_DIR = resolve(import.meta.dirname, '../../test/fixtures/models/SmolVLM-256M-Instruct');
const IMAGE_ID = 49190;
const FAKE_ID = 49189;

/** The real checkpoint's files with some replaced (string) or removed (null). */
function overridden(overrides: Record<string, string | null>): ModelFiles {
  const base = new NodeDirSource(REAL_DIR);
  return {
    where: `${base.where} (with overrides)`,
    async readText(name) {
      if (name in overrides) return overrides[name] ?? undefined;
      return await base.readText(name);
    },
  };
}

const count = (ids: ArrayLike<number>, id: number): number => Array.from(ids).filter((x) => x === id).length;

describe('prompt plan: placeholders only from image parts', () => {
  let p: Idefics3Processor;
  beforeAll(async () => {
    p = await loadProcessorFromDirectory(REAL_DIR);
  });

  it('a typed "<image>" / "<fake_token_around_image>" / "<end_of_utterance>" stays plain text', () => {
    const typed = 'What is <image> and <fake_token_around_image><end_of_utterance>?';
    const plan = p.planPrompt([{ role: 'user', content: [{ type: 'text', text: typed }] }], []);
    expect(plan.placeholders).toEqual([]);
    expect(count(plan.tokenIds, IMAGE_ID)).toBe(0);
    expect(count(plan.tokenIds, FAKE_ID)).toBe(0);
    // Exactly one <end_of_utterance>: the template's, not the typed one.
    expect(count(plan.tokenIds, 49279)).toBe(1);
    // The typed text round-trips through decode.
    expect(p.decode(Array.from(plan.tokenIds), false)).toBe(`<|im_start|>User: ${typed}<end_of_utterance>\nAssistant:`);
  });

  it('typed "<image>" next to a real image: only the image part becomes placeholders', () => {
    const layout = p.imageLayout(640, 480);
    const messages: ChatMessage<null>[] = [
      {
        role: 'user',
        content: [
          { type: 'text', text: 'see <image>: ' },
          { type: 'image', image: null },
          { type: 'text', text: '<image>' },
        ],
      },
    ];
    const plan = p.planPrompt(messages, [layout]);
    expect(plan.placeholders).toHaveLength(1);
    expect(plan.placeholders[0]!.length).toBe(832);
    expect(count(plan.tokenIds, IMAGE_ID)).toBe(832);
    const ph = plan.placeholders[0]!;
    expect(ph.runs).toHaveLength(13);
    for (const r of ph.runs) {
      expect(r.length).toBe(64);
      for (let i = r.offset; i < r.offset + r.length; i++) expect(plan.tokenIds[i]).toBe(IMAGE_ID);
    }
  });

  it('one placeholder entry per image part, in order, with lengths from the layouts', () => {
    const sizes: Array<[number, number]> = [
      [640, 480],
      [20, 30],
      [1000, 333],
    ];
    const layouts = sizes.map(([w, h]) => p.imageLayout(w, h));
    const messages: ChatMessage<null>[] = [
      {
        role: 'user',
        content: [
          { type: 'image', image: null },
          { type: 'text', text: 'and' },
          { type: 'image', image: null },
        ],
      },
      { role: 'assistant', content: 'Two images.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'third:' },
          { type: 'image', image: null },
        ],
      },
    ];
    const plan = p.planPrompt(messages, layouts);
    expect(plan.placeholders.map((x) => x.imageIndex)).toEqual([0, 1, 2]);
    expect(plan.placeholders.map((x) => x.length)).toEqual([832, 832, 576]);
    expect(plan.placeholders.map((x) => x.numTiles)).toEqual([13, 13, 9]);
    const offsets = plan.placeholders.map((x) => x.spanOffset);
    expect([...offsets].sort((a, b) => a - b)).toEqual(offsets);
    expect(count(plan.tokenIds, IMAGE_ID)).toBe(832 + 832 + 576);
    // HF's expansion length: (S + 3) + ((S + 2) * cols + 1) * rows.
    for (const ph of plan.placeholders) expect(ph.spanLength).toBe(64 + 3 + ((64 + 2) * ph.cols + 1) * ph.rows);
  });

  it('image parts and layouts must agree in number', () => {
    const messages: ChatMessage<null>[] = [{ role: 'user', content: [{ type: 'image', image: null }] }];
    expect(() => p.planPrompt(messages, [])).toThrow(InvalidMessageError);
    expect(() => p.planPrompt(messages, [])).toThrow(/1 image parts but 0 image layouts/);
  });

  it('counts before work: planPrompt from sizes equals prepare() on the pixels', async () => {
    const { readFileSync } = await import('node:fs');
    const bytes = new Uint8Array(readFileSync(resolve(import.meta.dirname, '../../public/sample.png')));
    const messages: ChatMessage[] = [
      {
        role: 'user',
        content: [
          { type: 'image', image: bytes },
          { type: 'text', text: 'Describe.' },
        ],
      },
    ];
    const prepared = await p.prepare(messages);
    const planned = p.planPrompt(messages, [p.imageLayout(640, 480)]);
    expect(Array.from(planned.tokenIds)).toEqual(Array.from(prepared.plan.tokenIds));
    expect(planned.placeholders).toEqual(prepared.plan.placeholders);
    expect(prepared.images[0]!.pixelValues.length).toBe(13 * 3 * 512 * 512);
  });

  it('rejects bad messages with named errors', () => {
    expect(() => p.planPrompt([], [])).toThrow(InvalidMessageError);
    expect(() => p.planPrompt([{ role: 'robot' as 'user', content: 'hi' }], [])).toThrow(/role is "robot"/);
    expect(() => p.planPrompt([{ role: 'user', content: [{ type: 'sound' } as never] }], [])).toThrow(
      /use 'text', 'image', 'video' or 'audio'/,
    );
    // An audio part is known, and refused by an image checkpoint by name.
    expect(() => p.planPrompt([{ role: 'user', content: [{ type: 'audio', audio: new Uint8Array(1) }] }], [])).toThrow(
      AudioNotSupportedError,
    );
    // SmolVLM (v1) has no video settings: a video part is refused by name.
    expect(() => p.planPrompt([{ role: 'user', content: [{ type: 'video', video: new Uint8Array(1) }] }], [])).toThrow(
      VideoNotSupportedError,
    );
  });
});

describe('chat template sources', () => {
  const messages: ChatMessage<null>[] = [{ role: 'user', content: 'Hi' }];
  const expected = '<|im_start|>User: Hi<end_of_utterance>\nAssistant:';

  it('chat_template.json, chat_template.jinja and tokenizer_config.json give the same template', async () => {
    const real = await Idefics3Processor.load(new NodeDirSource(REAL_DIR), { decodeImage: decodeImageNode });
    const source = real.chatTemplate.source;
    const jinja = await Idefics3Processor.load(overridden({ 'chat_template.json': null, 'chat_template.jinja': source }), {
      decodeImage: decodeImageNode,
    });
    const fromTokenizer = await Idefics3Processor.load(overridden({ 'chat_template.json': null }), { decodeImage: decodeImageNode });
    for (const proc of [real, jinja, fromTokenizer]) {
      expect(proc.chatTemplate.source).toBe(source);
      expect(proc.decode(Array.from(proc.planPrompt(messages, []).tokenIds), false)).toBe(expected);
    }
  });

  it('the .jinja file wins over chat_template.json', async () => {
    const proc = await Idefics3Processor.load(overridden({ 'chat_template.jinja': '{{ messages[0].content[0].text }}!' }), {
      decodeImage: decodeImageNode,
    });
    expect(proc.decode(Array.from(proc.planPrompt(messages, []).tokenIds), false)).toBe('Hi!');
  });

  it('a template that rewrites user text is refused (provenance would be lost)', async () => {
    const proc = await Idefics3Processor.load(overridden({ 'chat_template.jinja': '{{ messages[0].content[0].text | upper }}' }), {
      decodeImage: decodeImageNode,
    });
    expect(() => proc.planPrompt(messages, [])).toThrow(ChatTemplateError);
  });

  it('no template anywhere -> ProcessorConfigError naming the files', async () => {
    const tc = JSON.parse((await new NodeDirSource(REAL_DIR).readText('tokenizer_config.json'))!);
    delete tc.chat_template;
    const files = overridden({ 'chat_template.json': null, 'tokenizer_config.json': JSON.stringify(tc) });
    await expect(Idefics3Processor.load(files, { decodeImage: decodeImageNode })).rejects.toThrow(ProcessorConfigError);
    await expect(Idefics3Processor.load(files, { decodeImage: decodeImageNode })).rejects.toThrow(/chat_template\.jinja/);
  });

  it('a missing tokenizer.json and a mismatched image_seq_len are named errors', async () => {
    await expect(Idefics3Processor.load(overridden({ 'tokenizer.json': null }), { decodeImage: decodeImageNode })).rejects.toThrow(
      /tokenizer\.json is missing/,
    );
    const bad = overridden({ 'processor_config.json': '{"image_seq_len": 169}' });
    await expect(Idefics3Processor.load(bad, { decodeImage: decodeImageNode })).rejects.toThrow(
      /image_seq_len is 169 but config\.json implies 64/,
    );
  });
});

describe('stop tokens and streaming detokenization', () => {
  let p: Idefics3Processor;
  beforeAll(async () => {
    p = await loadProcessorFromDirectory(REAL_DIR);
  });

  it('stop tokens come from the files: <end_of_utterance> 49279 and <|im_end|> 2', async () => {
    expect(p.stopTokenIds).toEqual([49279, 2]);
    expect(p.tokenizer.tokenId('<end_of_utterance>')).toBe(49279);
    expect(p.tokenizer.tokenId('<|im_end|>')).toBe(2);
    // Not hard-coded: a different generation_config changes them.
    const other = await Idefics3Processor.load(overridden({ 'generation_config.json': '{"eos_token_id": [7, 2]}' }), {
      decodeImage: decodeImageNode,
    });
    expect(other.stopTokenIds).toEqual([7, 2, 49279]);
  });

  const texts = [
    'Café naïve façade — 😀👍🏽 日本語のテキスト, ¿qué tal? Ünïcödé ✓ 🇫🇷 “quotes”',
    '  leading spaces\n\n\ttabs and 123456 digits 🧑‍🚀 ZWJ emoji',
  ];
  for (const text of texts) {
    it(`stream of ${JSON.stringify(text.slice(0, 20))}... equals batch decode`, () => {
      const ids = [...p.tokenizer.encodePlain(text), 49279, 2];
      // The byte-level tokenizer splits emoji across tokens: some single tokens decode to U+FFFD.
      expect(ids.some((id) => p.decode([id]).includes('\uFFFD'))).toBe(true);
      const d = p.createDetokenizer();
      const deltas = ids.map((id) => d.push(id));
      deltas.push(d.flush());
      expect(deltas.every((s) => !s.includes('\uFFFD'))).toBe(true);
      expect(deltas.join('')).toBe(p.decode(ids, true));
      expect(deltas.join('')).toBe(text);
      expect(d.text).toBe(text);
    });
  }

  it('an incomplete character at the end flushes as U+FFFD, like batch decode', () => {
    const ids = p.tokenizer.encodePlain('ok 😀');
    const cut = ids.slice(0, -1);
    const d = p.createDetokenizer();
    const out = cut.map((id) => d.push(id)).join('') + d.flush();
    expect(out).toBe(p.decode(cut));
  });
});
