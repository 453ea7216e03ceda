// Qwen-VL prompts (src/processor/qwen-prompt.ts) with the checkpoints' own chat templates (Qwen2.5-VL-3B,
// Qwen3-VL-2B) and the Qwen2 tokenizer: the ids equal HF's procedure (render the template, repeat each
// <|image_pad|> to its image's token count, tokenize the whole text); each image's pad run is found with
// its grid; the M-RoPE positions are those of the runs; "<|image_pad|>" typed by a user stays text.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { InvalidMessageError } from '../../src/errors';
import { NodeDirSource } from '../../src/io/model-source-node';
import { ChatTemplate, type TemplateMessage } from '../../src/processor/chat-template';
import { mropePositions } from '../../src/processor/mrope-positions';
import { buildQwenPrompt } from '../../src/processor/qwen-prompt';
import { TextTokenizer } from '../../src/processor/tokenizer';

const models = resolve(import.meta.dirname, '../fixtures/models');
const templateOf = (name: string) => JSON.parse(readFileSync(`${models}/${name}/chat_template.json`, 'utf8')).chat_template as string;

let tok: TextTokenizer;
beforeAll(async () => {
  // Qwen2.5-VL-3B's BPE files are byte-identical to Qwen3-VL-2B's (test/fixtures/models/README.md).
  tok = await TextTokenizer.load(new NodeDirSource(`${models}/Qwen3-VL-2B-Instruct`));
});

const GRIDS = [
  { t: 1, h: 4, w: 6 },
  { t: 1, h: 2, w: 2 },
];
const MESSAGES: TemplateMessage[] = [
  {
    role: 'user',
    content: [{ type: 'text', text: 'Describe' }, { type: 'image' }, { type: 'text', text: ' and compare with' }, { type: 'image' }],
  },
];

describe.each(['Qwen2.5-VL-3B-Instruct', 'Qwen3-VL-2B-Instruct'])('%s prompt', (name) => {
  it("HF's ids: the template rendered, each <|image_pad|> repeated to its image's tokens, the text tokenized", () => {
    const template = new ChatTemplate(templateOf(name), tok.templateTokens());
    const p = buildQwenPrompt(
      template,
      tok,
      MESSAGES,
      GRIDS.map((grid) => ({ grid })),
      { mergeSize: 2 },
    );
    let k = 0;
    const expanded = template.render(MESSAGES, true).replace(/<\|image_pad\|>/g, () => {
      const { t, h, w } = GRIDS[k++];
      return '<|image_pad|>'.repeat((t * h * w) / 4);
    });
    expect(Array.from(p.ids)).toEqual(tok.encodeSegments([{ text: expanded, trusted: true }]).ids);
    const pad = tok.tokenId('<|image_pad|>')!;
    expect(p.runs.map((r) => r.grid)).toEqual(GRIDS);
    for (const [i, r] of p.runs.entries()) {
      expect(p.ids[r.start - 1]).toBe(tok.tokenId('<|vision_start|>'));
      const n = (GRIDS[i].h * GRIDS[i].w) / 4;
      expect(Array.from(p.ids.subarray(r.start, r.start + n)).every((id) => id === pad)).toBe(true);
      expect(p.ids[r.start + n]).toBe(tok.tokenId('<|vision_end|>'));
    }
    expect(p.positions).toEqual(mropePositions(p.ids.length, p.runs, { mergeSize: 2 }));
    expect(p.positions.delta).toBe(-(6 - 3) - (1 - 1)); // an image of 2 x 3 tokens spans 3 positions
  });

  it('a user who types <|image_pad|> gets text tokens, not an image run', () => {
    const template = new ChatTemplate(templateOf(name), tok.templateTokens());
    const typed: TemplateMessage[] = [{ role: 'user', content: [{ type: 'text', text: 'what is <|image_pad|>?' }, { type: 'image' }] }];
    const p = buildQwenPrompt(template, tok, typed, [{ grid: GRIDS[1] }], { mergeSize: 2 });
    expect(p.runs).toHaveLength(1);
    expect(Array.from(p.ids).filter((id) => id === tok.tokenId('<|image_pad|>'))).toHaveLength(1);
    expect(() => buildQwenPrompt(template, tok, typed, [], { mergeSize: 2 })).toThrow(InvalidMessageError);
  });
});
