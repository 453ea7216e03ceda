// Tool calling without a model: the request's tool fields checked by name, OpenAI's tool messages read, the
// answer's text read as content and calls however it is split into deltas, and the structural tag of each
// tool_choice taking exactly the answers it should (XGrammar on a one-character-per-token vocabulary).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidRequestError, UnsupportedSchemaError } from '../../src/errors';
import { fromOpenAiMessage } from '../../src/engine/intake/openai-message';
import { validateTools } from '../../src/engine/intake/validate-tools';
import { readToolCalls, ToolCallReader } from '../../src/engine/tool-calls';
import type { ChatCompletionMessage } from '../../src/engine/types';
import { GrammarCache } from '../../src/grammar/grammar-cache';
import { toolCallGrammar, type ToolCallChoice } from '../../src/grammar/tool-call-grammar';
import type { TemplateTool } from '../../src/processor/chat-template';
import { HERMES_TOOL_CALLS } from '../../src/processor/tool-call-syntax';
import { charVocabulary, walk } from '../helpers/grammar';
import { WEATHER_TOOL } from '../helpers/weather-tool';

const WEATHER: TemplateTool = WEATHER_TOOL;
const NOW: TemplateTool = { type: 'function', function: { name: 'now' } };

function thrown(f: () => unknown): unknown {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
}

const call = (name: string, args: string) => `<tool_call>\n{"name": "${name}", "arguments": ${args}}\n</tool_call>`;
let ids = 0;
const nextId = () => `call_${ids++}`;

describe('validateTools', () => {
  it('reads tools, the four tool_choice forms and parallel_tool_calls', () => {
    const tools = [WEATHER, NOW];
    expect(validateTools({})).toBeUndefined();
    expect(validateTools({ tools: [], tool_choice: 'none' })).toBeUndefined();
    expect(validateTools({ tools })).toEqual({ tools, choice: 'auto', parallel: true });
    expect(validateTools({ tools, tool_choice: 'required', parallel_tool_calls: false })).toEqual({
      tools,
      choice: 'required',
      parallel: false,
    });
    expect(validateTools({ tools, tool_choice: 'none' })?.choice).toBe('none');
    expect(validateTools({ tools, tool_choice: { type: 'function', function: { name: 'now' } } })?.choice).toEqual({ name: 'now' });
    // Unknown members of a tool are not passed to the template.
    expect(validateTools({ tools: [{ ...NOW, function: { ...NOW.function, strict: true, extra: 1 } }] })?.tools).toEqual([NOW]);
  });

  it('refuses each bad field by name', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ tools: {} }, 'tools'],
      [{ tools: [{ type: 'code_interpreter' }] }, 'tools[0].type'],
      [{ tools: [{ type: 'function' }] }, 'tools[0].function'],
      [{ tools: [{ type: 'function', function: { name: 'a b' } }] }, 'tools[0].function.name'],
      [{ tools: [{ type: 'function', function: { name: 'f', parameters: [] } }] }, 'tools[0].function.parameters'],
      [{ tools: [{ type: 'function', function: { name: 'f', description: 3 } }] }, 'tools[0].function.description'],
      [{ tools: [NOW, NOW] }, 'tools'],
      [{ tools: Array.from({ length: 129 }, (_, i) => ({ type: 'function', function: { name: `f${i}` } })) }, 'tools'],
      [{ tool_choice: 'required' }, 'tool_choice'],
      [{ tools: [NOW], tool_choice: 'always' }, 'tool_choice'],
      [{ tools: [NOW], tool_choice: { type: 'function', function: { name: 'get_weather' } } }, 'tool_choice.function.name'],
      [{ tools: [NOW], parallel_tool_calls: 'yes' }, 'parallel_tool_calls'],
      // OpenAI's custom tools and allowed_tools choice: typed for the openai client, not run.
      [{ tools: [{ type: 'custom', custom: { name: 'grep' } }] }, 'tools[0].type'],
      [{ tools: [NOW], tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [] } } }, 'tool_choice'],
    ];
    for (const [r, field] of cases) {
      const e = thrown(() => validateTools(r));
      expect(e, field).toBeInstanceOf(InvalidRequestError);
      expect((e as InvalidRequestError).field, JSON.stringify(r).slice(0, 80)).toBe(field);
    }
  });
});

describe("OpenAI's tool messages", () => {
  it("an assistant turn with tool_calls and a tool turn become the template's messages", () => {
    const assistant: ChatCompletionMessage = {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'now', arguments: '{}' } }],
    };
    expect(fromOpenAiMessage(assistant, 1)).toEqual({
      role: 'assistant',
      content: '',
      toolCalls: [{ id: 'call_1', name: 'now', arguments: '{}' }],
    });
    expect(fromOpenAiMessage({ role: 'tool', tool_call_id: 'call_1', content: '12:00' }, 2)).toEqual({
      role: 'tool',
      content: '12:00',
      toolCallId: 'call_1',
    });
    const bad: Array<[ChatCompletionMessage, string]> = [
      [{ role: 'assistant', content: null, tool_calls: [{ id: 'c' } as never] }, 'messages[0].tool_calls[0]'],
      [
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: {} as never } }] },
        'messages[0].tool_calls[0].function.arguments',
      ],
      [
        { role: 'user', content: 'hi', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        'messages[0].tool_calls',
      ],
      [{ role: 'function', content: '1', name: 'f' }, 'messages[0].role'],
      [
        { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'custom', custom: { name: 'grep', input: 'x' } }] },
        'messages[0].tool_calls[0]',
      ],
    ];
    for (const [m, field] of bad) {
      const e = thrown(() => fromOpenAiMessage(m, 0));
      expect(e, field).toBeInstanceOf(InvalidRequestError);
      expect((e as InvalidRequestError).field).toBe(field);
    }
  });
});

describe('ToolCallReader', () => {
  const answers: Array<[string, string, Array<[string, string]>]> = [
    ['plain text, no call', 'It is sunny.  ', []],
    [
      'text then a call',
      `Let me look.\n${call('get_weather', '{"city": "Oslo", "unit": "c"}')}`,
      [['get_weather', '{"city": "Oslo", "unit": "c"}']],
    ],
    [
      'two calls',
      `${call('now', '{}')}\n${call('get_weather', '{"city": "Lima", "unit": "f"}')}\n`,
      [
        ['now', '{}'],
        ['get_weather', '{"city": "Lima", "unit": "f"}'],
      ],
    ],
    ['a call cut short stays text', `Hm.\n<tool_call>\n{"name": "now", "argu`, []],
    ['a block that does not parse stays text', '<tool_call>\nnot json\n</tool_call> and more', []],
    ['a partial marker that is not one', 'a < b and <tool is text', []],
  ];
  const contents = [
    'It is sunny.  ',
    'Let me look.',
    '',
    'Hm.\n<tool_call>\n{"name": "now", "argu',
    '<tool_call>\nnot json\n</tool_call> and more',
    'a < b and <tool is text',
  ];

  it('reads content and calls, arguments as written, the same at every split of the text', () => {
    for (const [k, [label, text, calls]] of answers.entries()) {
      const whole = readToolCalls(HERMES_TOOL_CALLS, text, nextId);
      expect(whole.content, label).toBe(contents[k]);
      expect(
        whole.calls.map((c) => [c.function.name, c.function.arguments]),
        label,
      ).toEqual(calls);
      for (const c of whole.calls) expect(c.type).toBe('function');
      // Streamed one character at a time, and split at every place into two deltas.
      const splits = [[...text], ...Array.from({ length: text.length + 1 }, (_, i) => [text.slice(0, i), text.slice(i)])];
      for (const pieces of splits) {
        const reader = new ToolCallReader(HERMES_TOOL_CALLS, nextId);
        let content = '';
        const got: Array<[string, string]> = [];
        for (const p of pieces) {
          const read = reader.push(p);
          content += read.content;
          for (const c of read.calls) got.push([c.function.name, c.function.arguments]);
        }
        content += reader.finish();
        expect([content, got], `${label} in ${pieces.length} pieces`).toEqual([contents[k], calls]);
      }
    }
  });

  it('holds back only what may open a call', () => {
    const reader = new ToolCallReader(HERMES_TOOL_CALLS, nextId);
    expect(reader.push('Hello <tool').content).toBe('Hello');
    expect(reader.push('box> there').content).toBe(' <toolbox> there');
    expect(reader.push('\n<tool_call>\n{"name": "now", "arguments": {}}\n</tool_call>').calls.map((c) => c.function.name)).toEqual(['now']);
    expect(reader.finish()).toBe('');
  });

  it('gives each call its own id', () => {
    const read = readToolCalls(HERMES_TOOL_CALLS, `${call('now', '{}')}\n${call('now', '{}')}`);
    expect(read.calls).toHaveLength(2);
    for (const c of read.calls) expect(c.id).toMatch(/^call_[A-Za-z0-9]{24}$/);
    expect(read.calls[0]!.id).not.toBe(read.calls[1]!.id);
  });
});

describe('the tool-call grammar', () => {
  // A character per token, '\n' among them (the call syntax has newlines).
  const vocab = (() => {
    const v = charVocabulary();
    const stop = v.pieces.length - 1;
    v.pieces.splice(stop, 0, '\n');
    return { ...v, vocabSize: v.pieces.length, stopTokenIds: [v.pieces.length - 1] };
  })();
  let cache: GrammarCache;
  beforeAll(async () => {
    cache = await GrammarCache.fromVocabulary(vocab);
  });
  afterAll(() => cache?.dispose());

  const takes = async (choice: ToolCallChoice, text: string, parallel = true): Promise<boolean> => {
    const m = await cache.createMatcher(toolCallGrammar(HERMES_TOOL_CALLS, [WEATHER, NOW], choice, parallel));
    try {
      return (
        walk(
          m,
          [...text].map((ch) => vocab.pieces.indexOf(ch)),
          vocab.stopTokenIds,
        ) === 'complete'
      );
    } finally {
      m.dispose();
    }
  };
  const oslo = call('get_weather', '{"city": "Oslo", "unit": "c"}');

  it("'auto': free text, or text then calls whose arguments match the schema", async () => {
    expect(await takes('auto', 'No tools needed.')).toBe(true);
    expect(await takes('auto', `Checking.\n${oslo}`)).toBe(true);
    expect(await takes('auto', `${call('now', '{}')}\n${oslo}`)).toBe(true);
    expect(await takes('auto', call('get_weather', '{"city": "Rome", "unit": "c"}'))).toBe(false);
    expect(await takes('auto', call('get_weather', '{"city":"Oslo","unit":"c"}'))).toBe(false);
    expect(await takes('auto', call('get_weather', '{"city": "Oslo"}'))).toBe(false);
    expect(await takes('auto', call('delete_all', '{}'))).toBe(false);
  });

  it("'required' and a named tool: calls only; parallel_tool_calls false: one", async () => {
    expect(await takes('required', oslo)).toBe(true);
    expect(await takes('required', `${oslo}\n${call('now', '{}')}`)).toBe(true);
    expect(await takes('required', `${oslo}\n${call('now', '{}')}`, false)).toBe(false);
    expect(await takes('required', 'Sure.')).toBe(false);
    expect(await takes('required', '')).toBe(false);
    expect(await takes({ name: 'now' }, call('now', '{}'))).toBe(true);
    expect(await takes({ name: 'now' }, oslo)).toBe(false);
  });

  it('a tool schema that cannot be enforced is refused by name', () => {
    const bad: TemplateTool = {
      type: 'function',
      function: { name: 'f', parameters: { type: 'object', properties: { a: { type: 'string', format: 'no-such-format' } } } },
    };
    expect(thrown(() => toolCallGrammar(HERMES_TOOL_CALLS, [bad], 'auto', true))).toBeInstanceOf(UnsupportedSchemaError);
  });
});
