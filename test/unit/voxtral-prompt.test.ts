// Voxtral prompts, token by token, against the layouts mistral-common's Tekken v7 instruct tokenizer builds
// (src/mistral_common/tokens/tokenizers/instruct.py and audio.py, v1.8.1 a153ac81: one [BEGIN_AUDIO] per
// audio part, then 375 [AUDIO] per started 30 s of 16 kHz samples; "lang:en" = 9909 1058 1262; text
// chunks as plain Tekken tokens). mistral-common itself cannot run here (no PyPI), so the expected ids are
// written out from those rules, and the text ids come from the same tokenizer.json.

import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ImageNotSupportedError, InvalidMessageError } from '../../src/errors';
import { NodeDirSource } from '../../src/io/model-source-node';
import { VoxtralProcessor } from '../../src/processor/voxtral-processor';

const DIR = resolve(import.meta.dirname, '../fixtures/models/Voxtral-Mini-3B-2507');
const [BOS, EOS, INST, END_INST, AUDIO, BEGIN_AUDIO, TRANSCRIBE, SYS, END_SYS] = [1, 2, 3, 4, 24, 25, 34, 17, 18];
const LANG_EN = [9909, 1058, 1262];

const audioRun = (chunks: number) => [BEGIN_AUDIO, ...new Array<number>(375 * chunks).fill(AUDIO)];

let p: VoxtralProcessor;
beforeAll(async () => {
  p = await VoxtralProcessor.load(new NodeDirSource(DIR), 375, 24);
});

describe('Voxtral prompts (mistral-common v7 rules)', () => {
  it('chunks per clip: 375 tokens per started 30 s at 16 kHz (0.5 s, 30 s, 31 s, 5 min)', () => {
    expect(p.chunkSeconds).toBe(30);
    for (const [samples, chunks] of [
      [8000, 1],
      [480000, 1],
      [496000, 2],
      [4800000, 10],
    ] as const) {
      expect(p.chunksFor(samples)).toBe(chunks);
      const plan = p.planPrompt([{ role: 'user', content: [{ type: 'audio', audio: null }] }], [chunks], {
        transcription: { language: 'en' },
      });
      expect(Array.from(plan.tokenIds)).toEqual([BOS, INST, ...audioRun(chunks), END_INST, ...LANG_EN, TRANSCRIBE]);
      expect(plan.audios).toHaveLength(1);
      expect(plan.audios[0].chunkRuns).toEqual(Array.from({ length: chunks }, (_, c) => ({ offset: 3 + 375 * c, length: 375 })));
    }
  });

  it('transcription without a language has no lang: part', () => {
    const plan = p.planPrompt([{ role: 'user', content: [{ type: 'audio', audio: null }] }], [1], { transcription: {} });
    expect(Array.from(plan.tokenIds)).toEqual([BOS, INST, ...audioRun(1), END_INST, TRANSCRIBE]);
  });

  it('chat: audio then text, text then audio, in the order given; text is plain tokens', () => {
    const q = p.tokenizer.encodePlain('What can you tell me about this audio?');
    expect(q.length).toBeGreaterThan(5);
    expect(q.every((id) => id >= 1000)).toBe(true); // Tekken text ids are ranks + 1000
    let plan = p.planPrompt(
      [
        {
          role: 'user',
          content: [
            { type: 'audio', audio: null },
            { type: 'text', text: 'What can you tell me about this audio?' },
          ],
        },
      ],
      [2],
    );
    expect(Array.from(plan.tokenIds)).toEqual([BOS, INST, ...audioRun(2), ...q, END_INST]);
    plan = p.planPrompt(
      [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What can you tell me about this audio?' },
            { type: 'audio', audio: null },
          ],
        },
      ],
      [1],
    );
    expect(Array.from(plan.tokenIds)).toEqual([BOS, INST, ...q, ...audioRun(1), END_INST]);
    expect(plan.audios[0].offset).toBe(2 + q.length + 1);
  });

  it('multi-turn: answers end with </s> (trailing spaces dropped), BOS once, adjacent text joined by a blank line', () => {
    const t = (s: string) => p.tokenizer.encodePlain(s);
    const plan = p.planPrompt(
      [
        {
          role: 'user',
          content: [
            { type: 'audio', audio: null },
            { type: 'text', text: 'Summarize.' },
            { type: 'text', text: 'Briefly.' },
          ],
        },
        { role: 'assistant', content: 'A talk about trees.  ' },
        { role: 'user', content: 'Who speaks?' },
        { role: 'user', content: 'And when?' },
      ],
      [1],
    );
    expect(Array.from(plan.tokenIds)).toEqual([
      BOS,
      INST,
      ...audioRun(1),
      ...t('Summarize.\n\nBriefly.'),
      END_INST,
      ...t('A talk about trees.'),
      EOS,
      INST,
      ...t('Who speaks?\n\nAnd when?'),
      END_INST,
    ]);
  });

  it('typed control-token text stays text', () => {
    const plan = p.planPrompt([{ role: 'user', content: '[INST][AUDIO]</s>' }], []);
    const ids = Array.from(plan.tokenIds);
    expect(ids.slice(0, 2)).toEqual([BOS, INST]);
    expect(ids.at(-1)).toBe(END_INST);
    expect(ids.slice(2, -1).every((id) => id >= 1000)).toBe(true);
    expect(plan.audios).toEqual([]);
  });

  it('a system message: [SYSTEM_PROMPT] ... [/SYSTEM_PROMPT] without audio, refused beside audio', () => {
    const plan = p.planPrompt(
      [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
      [],
    );
    expect(Array.from(plan.tokenIds)).toEqual([
      BOS,
      SYS,
      ...p.tokenizer.encodePlain('Be brief.'),
      END_SYS,
      INST,
      ...p.tokenizer.encodePlain('Hi'),
      END_INST,
    ]);
    expect(() =>
      p.planPrompt(
        [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: [{ type: 'audio', audio: null }] },
        ],
        [1],
      ),
    ).toThrow(/no system message in a conversation with audio/);
  });

  it('bad requests are named errors', () => {
    expect(() => p.planPrompt([{ role: 'user', content: [{ type: 'image', image: null }] }], [])).toThrow(ImageNotSupportedError);
    expect(() => p.planPrompt([{ role: 'assistant', content: 'x' }], [])).toThrow(InvalidMessageError);
    expect(() =>
      p.planPrompt(
        [
          {
            role: 'user',
            content: [
              { type: 'audio', audio: null },
              { type: 'text', text: 'x' },
            ],
          },
        ],
        [1],
        { transcription: {} },
      ),
    ).toThrow(/exactly one audio part and nothing else/);
    expect(() =>
      p.planPrompt([{ role: 'user', content: [{ type: 'audio', audio: null }] }], [1], { transcription: { language: 'English' } }),
    ).toThrow(/two-letter ISO 639-1/);
    expect(p.stopTokenIds).toContain(EOS);
  });
});
