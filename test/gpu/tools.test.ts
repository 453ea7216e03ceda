// Tool calling on qwen3_vl-tiny, whose chat template (Qwen3-VL's own) offers tools: the template shows the
// tools to the model; 'required' and a named tool constrain the answer to calls whose arguments validate
// against the tool's schema; 'none' never calls (the token that opens a call never comes); a tool turn
// continues the chat, its prefix from the cache; streamed, with n = 2, and through the OpenAI server and the
// openai client. The weights are random, so what is asserted is what holds for any weights: the form of
// the answer, never which tool a random model picks.

import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine';
import type { ChatCompletionChunk, ChatCompletionRequest, ChatCompletionTool, ToolCall } from '../../src/engine/types';
import { InvalidRequestError } from '../../src/errors';
import type { QwenProcessor } from '../../src/processor/qwen-processor';
import { type RunningServer, startServer } from '../../src/server/listen-node';
import { mediaPolicy } from '../../src/engine/intake/media-options';
import { toProcessorMessages } from '../../src/engine/intake/message-images';
import { testEngine } from '../helpers/engine';
import { validate } from '../helpers/json-schema-subset';
import { ensureTinyModels } from '../helpers/tiny-models';
import { WEATHER_TOOL } from '../helpers/weather-tool';
import { useGpu } from './gpu';

const gpu = useGpu();
let engine: Engine;
const TOOLS: ChatCompletionTool[] = [WEATHER_TOOL, { type: 'function', function: { name: 'now', description: 'The time' } }];
const ASK: ChatCompletionRequest['messages'] = [{ role: 'user', content: 'What is the weather in Oslo?' }];
const request = (extra: Partial<ChatCompletionRequest> & { stream?: false }): ChatCompletionRequest & { stream?: false } => ({
  messages: ASK,
  tools: TOOLS,
  max_tokens: 128,
  ...extra,
});

/** Problems of a call: a tool offered, arguments that parse and validate against that tool's schema. */
function callProblems(c: ToolCall): string[] {
  const tool = TOOLS.find((t) => t.function.name === c.function.name);
  if (!tool) return [`${c.function.name} is not an offered tool`];
  let args: unknown;
  try {
    args = JSON.parse(c.function.arguments);
  } catch (e) {
    return [`arguments ${c.function.arguments} do not parse: ${(e as Error).message}`];
  }
  const schema = tool.function.parameters ?? { type: 'object', properties: {}, additionalProperties: false };
  return [...validate(args, schema), ...(c.id.startsWith('call_') ? [] : [`id ${c.id}`])];
}

const processor = () => engine.processor as QwenProcessor;
/** The prompt the engine plans for `r` (its messages read as the engine reads them), as text. */
async function promptText(r: ChatCompletionRequest): Promise<string> {
  const messages = await toProcessorMessages(r.messages, mediaPolicy());
  return processor().tokenizer.decode(
    Array.from(processor().planToolPrompt(messages, [], [], (r.tools ?? []) as ChatCompletionTool[]).tokenIds),
    false,
  );
}

beforeAll(async () => {
  engine = await testEngine(gpu(), `${ensureTinyModels()}/qwen3_vl-tiny`, { kvCacheTokens: 2048, maxTokensPerStep: 128 });
});
afterAll(() => engine?.destroy());

describe('tools on qwen3_vl-tiny', () => {
  it('the template shows the tools as Qwen3-VL writes them', async () => {
    const text = await promptText(request({}));
    expect(text).toContain('# Tools\n\nYou may call one or more functions to assist with the user query.');
    expect(text).toContain(
      '<tools>\n{"type": "function", "function": {"name": "get_weather", "description": "The weather in a city", "parameters": ' +
        '{"type": "object", "properties": {"city": {"type": "string", "enum": ["Oslo", "Lima"]}, "unit": {"type": "string", "enum": ["c", "f"]}}, ' +
        '"required": ["city", "unit"], "additionalProperties": false}}}\n{"type": "function", "function": {"name": "now", "description": "The time"}}\n</tools>',
    );
    expect(text.endsWith('<|im_start|>user\nWhat is the weather in Oslo?<|im_end|>\n<|im_start|>assistant\n')).toBe(true);
  });

  it("'required' (one call) and a named tool: a call that validates, finish_reason tool_calls, no text", async () => {
    for (const tool_choice of ['required', { type: 'function', function: { name: 'get_weather' } }] as const) {
      const r = await engine.chat.completions.create(request({ tool_choice, parallel_tool_calls: false }));
      const choice = r.choices[0]!;
      expect(choice.finish_reason, JSON.stringify(choice)).toBe('tool_calls');
      expect(choice.message.content).toBe('');
      expect(choice.message.tool_calls).toHaveLength(1);
      expect(callProblems(choice.message.tool_calls![0]!)).toEqual([]);
      if (typeof tool_choice === 'object') expect(choice.message.tool_calls![0]!.function.name).toBe('get_weather');
    }
  });

  it("'none': no call is read, and the token that opens one never comes", async () => {
    const open = processor().tokenizer.tokenId('<tool_call>')!;
    const r = await engine.chat.completions.create(request({ tool_choice: 'none', max_tokens: 24 }));
    expect(r.choices[0]!.message.tool_calls).toBeUndefined();
    expect(r.choices[0]!.finish_reason).not.toBe('tool_calls');
    expect(r.tessera.tokenIds).not.toContain(open);
  });

  it("'auto': whatever the model writes, each call it makes validates and the rest is content", async () => {
    const r = await engine.chat.completions.create(request({ max_tokens: 24 }));
    for (const c of r.choices[0]!.message.tool_calls ?? []) expect(callProblems(c)).toEqual([]);
    const calls = r.choices[0]!.message.tool_calls?.length ?? 0;
    expect(r.choices[0]!.finish_reason).toBe(calls > 0 ? 'tool_calls' : r.tessera.tokenIds.length === 24 ? 'length' : 'stop');
  });

  it('streamed: the same tokens and calls, each call whole in one delta; with n = 2 every choice calls', async () => {
    const req = request({ tool_choice: 'required', parallel_tool_calls: false });
    const whole = await engine.chat.completions.create(req);
    const chunks: ChatCompletionChunk[] = [];
    for await (const c of await engine.chat.completions.create({ ...req, stream: true })) chunks.push(c);
    const deltas = chunks.flatMap((c) => c.choices.flatMap((x) => x.delta.tool_calls ?? []));
    expect(deltas.map((d) => [d.index, d.function.name, d.function.arguments])).toEqual(
      whole.choices[0]!.message.tool_calls!.map((c, i) => [i, c.function.name, c.function.arguments]),
    );
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('tool_calls');
    expect(chunks.at(-1)!.tessera!.tokenIds).toEqual(whole.tessera.tokenIds);
    const two = await engine.chat.completions.create({ ...req, n: 2, temperature: 1, seed: 5 });
    expect(two.choices).toHaveLength(2);
    for (const c of two.choices) {
      expect(c.finish_reason).toBe('tool_calls');
      expect(c.message.tool_calls!.flatMap(callProblems)).toEqual([]);
    }
  });

  it('a tool turn continues the chat: the call as the model wrote it and the result in the prompt, the first turn from the prefix cache', async () => {
    const first = await engine.chat.completions.create(
      request({ tool_choice: { type: 'function', function: { name: 'now' } }, parallel_tool_calls: false }),
    );
    const call = first.choices[0]!.message.tool_calls![0]!;
    const turn = request({
      messages: [
        ...ASK,
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: call.id, content: '12:00' },
      ],
      max_tokens: 8,
    });
    const text = await promptText(turn);
    expect(text).toContain(
      `<|im_start|>assistant\n<tool_call>\n{"name": "now", "arguments": ${call.function.arguments}}\n</tool_call><|im_end|>`,
    );
    expect(text).toContain('<|im_start|>user\n<tool_response>\n12:00\n</tool_response><|im_end|>\n<|im_start|>assistant\n');
    const second = await engine.chat.completions.create(turn);
    expect(second.tessera.cachedTokens).toBeGreaterThan(0);
    expect(second.tessera.tokenIds.length).toBeGreaterThan(0);
  });

  it('a tool whose description holds a special token is refused by name, and the next request answers', async () => {
    const bad = [{ type: 'function' as const, function: { name: 'f', description: 'end<|im_end|>' } }];
    const e = await engine.chat.completions.create(request({ tools: bad })).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(InvalidRequestError);
    expect((e as InvalidRequestError).field).toBe('tools[0]');
    const r = await engine.chat.completions.create(request({ tool_choice: 'required', parallel_tool_calls: false }));
    expect(r.choices[0]!.finish_reason).toBe('tool_calls');
  });
});

describe('tools through the OpenAI server and the openai client', () => {
  let server: RunningServer;
  let client: OpenAI;
  beforeAll(async () => {
    server = await startServer({ engine, ownsEngine: false, modelName: 'qwen3_vl-tiny', port: 0 });
    client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'unused', maxRetries: 0 });
  });
  afterAll(() => server?.close());

  it('a required call, streamed and not, then the tool turn', async () => {
    const body = {
      model: 'qwen3_vl-tiny',
      messages: ASK as OpenAI.ChatCompletionMessageParam[],
      tools: TOOLS as OpenAI.ChatCompletionTool[],
      tool_choice: 'required' as const,
      parallel_tool_calls: false,
      max_tokens: 128,
    };
    const r = await client.chat.completions.create(body);
    const call = r.choices[0]!.message.tool_calls![0]! as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(r.choices[0]!.finish_reason).toBe('tool_calls');
    expect(callProblems(call as ToolCall)).toEqual([]);
    const stream = await client.chat.completions.create({ ...body, stream: true });
    const streamed: Array<[string | undefined, string | undefined]> = [];
    let finish: string | null = null;
    for await (const c of stream) {
      for (const d of c.choices[0]?.delta.tool_calls ?? []) streamed.push([d.function?.name, d.function?.arguments]);
      finish = c.choices[0]?.finish_reason ?? finish;
    }
    expect(streamed).toEqual([[call.function.name, call.function.arguments]]);
    expect(finish).toBe('tool_calls');
    const next = await client.chat.completions.create({
      ...body,
      tool_choice: 'none',
      max_tokens: 4,
      messages: [...body.messages, r.choices[0]!.message, { role: 'tool', tool_call_id: call.id, content: '12:00' }],
    });
    expect(next.choices[0]!.message.tool_calls ?? []).toEqual([]);
    const refused = await client.chat.completions
      .create({ ...body, tool_choice: { type: 'function', function: { name: 'nope' } } })
      .catch((x: unknown) => x);
    expect(refused).toBeInstanceOf(OpenAI.BadRequestError);
    expect((refused as InstanceType<typeof OpenAI.BadRequestError>).param).toBe('tool_choice.function.name');
  });
});
