// tessera/ai-sdk with the real `ai` package (7.x) on qwen3_vl-tiny in Node: generateText and streamText give
// the engine's own greedy answer (text, and an image file part), generateObject an object that validates,
// tools a call that validates and a tool result that continues the chat, an abort that ends the stream and
// leaves the engine idle, and warnings for what a device engine does not do.

import { generateObject, generateText, jsonSchema, streamText, tool } from 'ai';
import type { JSONSchema7 } from 'json-schema';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tesseraModel } from '../../src/ai-sdk';
import type { Engine } from '../../src/engine/engine';
import { testEngine } from '../helpers/engine';
import { validate } from '../helpers/json-schema-subset';
import { ensureTinyModels } from '../helpers/tiny-models';
import { WEATHER_SCHEMA } from '../helpers/weather-tool';
import { useGpu } from './gpu';

const gpu = useGpu();
let engine: Engine;
const IMAGE = new Uint8Array(readFileSync(resolve('public/sample.png')));
const WEATHER: JSONSchema7 = WEATHER_SCHEMA;

beforeAll(async () => {
  engine = await testEngine(gpu(), `${ensureTinyModels()}/qwen3_vl-tiny`, { kvCacheTokens: 2048, maxTokensPerStep: 128 });
});
afterAll(() => engine?.destroy());

/** Until every request is done and every KV block free (a cancelled request leaves at its next step). */
async function idle(): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const s = engine.stats();
    if (s.scheduler.numRunning === 0 && s.scheduler.numWaiting === 0 && s.kv.numFreeBlocks === s.kv.numBlocks) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`the engine did not go idle: ${JSON.stringify(engine.stats().scheduler)}`);
}

describe('tessera/ai-sdk with the ai package', () => {
  it("generateText and streamText answer as the engine does (text, then an image part), with the engine's usage", async () => {
    const model = tesseraModel(engine, { modelId: 'qwen3_vl-tiny' });
    const direct = await engine.chat.completions.create({ messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 8 });
    const r = await generateText({ model, prompt: 'Hello there', maxOutputTokens: 8 });
    expect(r.text).toBe(direct.choices[0]!.message.content);
    expect(r.usage.inputTokens).toBe(direct.usage.prompt_tokens);
    expect(r.usage.outputTokens).toBe(direct.usage.completion_tokens);
    expect(r.response.modelId).toBe(direct.model);
    const s = streamText({ model, prompt: 'Hello there', maxOutputTokens: 8 });
    let streamed = '';
    for await (const t of s.textStream) streamed += t;
    expect(streamed).toBe(r.text);
    expect(await s.finishReason).toBe(r.finishReason);
    expect((await s.usage).outputTokens).toBe(8);

    const withImage = await engine.chat.completions.create({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', image: IMAGE },
            { type: 'text', text: 'What is this?' },
          ],
        },
      ],
      max_tokens: 6,
    });
    const sdk = await generateText({
      model,
      maxOutputTokens: 6,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image', image: IMAGE, mediaType: 'image/png' },
            { type: 'text', text: 'What is this?' },
          ],
        },
      ],
    });
    expect(sdk.text).toBe(withImage.choices[0]!.message.content);
    expect(sdk.usage.inputTokens).toBe(withImage.usage.prompt_tokens);
  });

  it('generateObject: an object that validates against the schema', async () => {
    const r = await generateObject({ model: tesseraModel(engine), schema: jsonSchema(WEATHER), prompt: 'Weather?', maxOutputTokens: 64 });
    expect(validate(r.object, WEATHER)).toEqual([]);
  });

  it('tools: a required call whose input validates, then its result continues the chat', async () => {
    const model = tesseraModel(engine);
    const tools = { get_weather: tool({ description: 'The weather in a city', inputSchema: jsonSchema(WEATHER) }) };
    const one = { tessera: { parallelToolCalls: false } };
    const first = await generateText({
      model,
      tools,
      toolChoice: 'required',
      prompt: 'Weather in Oslo?',
      maxOutputTokens: 128,
      providerOptions: one,
    });
    expect(first.finishReason).toBe('tool-calls');
    expect(first.toolCalls).toHaveLength(1);
    const call = first.toolCalls[0]!;
    expect(call.toolName).toBe('get_weather');
    expect(validate(call.input, WEATHER)).toEqual([]);
    const second = await generateText({
      model,
      tools,
      toolChoice: 'none',
      maxOutputTokens: 4,
      messages: [
        { role: 'user', content: 'Weather in Oslo?' },
        ...first.response.messages,
        {
          role: 'tool',
          content: [
            { type: 'tool-result', toolCallId: call.toolCallId, toolName: call.toolName, output: { type: 'json', value: { celsius: 12 } } },
          ],
        },
      ],
    });
    expect(second.toolCalls).toHaveLength(0);
    expect(second.usage.inputTokens).toBeGreaterThan(first.usage.inputTokens!);
    expect(second.usage.inputTokenDetails.cacheReadTokens).toBeGreaterThan(0);
    // streamed: the call arrives as one tool-call part
    const s = streamText({ model, tools, toolChoice: 'required', prompt: 'Weather in Oslo?', maxOutputTokens: 128, providerOptions: one });
    const calls = await s.toolCalls;
    expect(calls.map((c) => [c.toolName, c.input])).toEqual([[call.toolName, call.input]]);
  });

  it('an abort ends the stream and the engine goes idle; a provider tool is a warning', async () => {
    const controller = new AbortController();
    const s = streamText({ model: tesseraModel(engine), prompt: 'Count', maxOutputTokens: 64, abortSignal: controller.signal });
    let parts = 0;
    try {
      for await (const _ of s.textStream) if (++parts === 2) controller.abort();
    } catch (e) {
      expect((e as Error).name).toMatch(/Abort/);
    }
    expect(parts).toBeLessThan(64);
    await idle();
    const warned = await generateText({
      model: tesseraModel(engine),
      prompt: 'Hi',
      maxOutputTokens: 2,
      tools: { search: { type: 'provider', id: 'openai.web_search', args: {} } as never },
    });
    expect(warned.warnings?.map((w) => w.type)).toContain('unsupported');
  });
});
