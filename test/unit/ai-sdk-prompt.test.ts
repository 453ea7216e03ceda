// tessera/ai-sdk's translation of the AI SDK's prompt and call options into an engine request: every part
// kind, the options, and the refusals and warnings, without a model (test/gpu/ai-sdk.test.ts runs them).

import type { LanguageModelV4CallOptions, LanguageModelV4Prompt } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { toEngineRequest } from '../../src/ai-sdk/call-options';
import { toEngineMessages } from '../../src/ai-sdk/prompt';
import { InvalidMessageError } from '../../src/errors';

const BYTES = new Uint8Array([1, 2, 3, 250]);
const BASE64 = btoa(String.fromCharCode(...BYTES));

describe('toEngineMessages', () => {
  it('reads every part the engine takes', () => {
    const prompt: LanguageModelV4Prompt = [
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look:' },
          { type: 'file', mediaType: 'image/png', data: { type: 'data', data: BYTES } },
          { type: 'file', mediaType: 'audio/wav', data: { type: 'data', data: BASE64 } },
          { type: 'file', mediaType: 'video/mp4', data: { type: 'url', url: new URL('https://example.com/a.mp4') } },
          { type: 'file', mediaType: 'text/plain', data: { type: 'text', text: 'notes' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'hmm' },
          { type: 'text', text: 'Checking.' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'f', input: { x: 1 } },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c1', toolName: 'f', output: { type: 'json', value: { ok: true } } },
          { type: 'tool-result', toolCallId: 'c2', toolName: 'g', output: { type: 'error-text', value: 'no' } },
        ],
      },
    ];
    const { messages, warnings } = toEngineMessages(prompt);
    expect(messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look:' },
          { type: 'image', image: BYTES },
          { type: 'audio', audio: BYTES },
          { type: 'video_url', video_url: { url: 'https://example.com/a.mp4' } },
          { type: 'text', text: 'notes' },
        ],
      },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: '{"ok":true}' },
      { role: 'tool', tool_call_id: 'c2', content: 'no' },
    ]);
    expect(warnings.map((w) => w.type)).toEqual(['compatibility']);
  });

  it('refuses by name what a local prompt cannot hold', () => {
    const bad: LanguageModelV4Prompt[] = [
      [{ role: 'user', content: [{ type: 'file', mediaType: 'application/pdf', data: { type: 'data', data: BYTES } }] }],
      [{ role: 'user', content: [{ type: 'file', mediaType: 'image/png', data: { type: 'reference', reference: { openai: 'file-1' } } }] }],
      [{ role: 'assistant', content: [{ type: 'tool-result', toolCallId: 'c', toolName: 'f', output: { type: 'text', value: 'x' } }] }],
    ];
    for (const p of bad) expect(() => toEngineMessages(p)).toThrow(InvalidMessageError);
  });
});

describe('toEngineRequest', () => {
  it('maps the options, the tools and the tool choice; warns for what it leaves out', () => {
    const o: LanguageModelV4CallOptions = {
      prompt: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      maxOutputTokens: 9,
      temperature: 0.5,
      topP: 0.9,
      topK: 4,
      seed: 3,
      presencePenalty: 0.1,
      frequencyPenalty: 0.2,
      stopSequences: ['\n'],
      responseFormat: { type: 'json', schema: { type: 'object' }, name: 'thing' },
      tools: [
        { type: 'function', name: 'f', description: 'does f', inputSchema: { type: 'object', properties: {} } },
        { type: 'provider', id: 'openai.web_search', name: 'search', args: {} },
      ],
      toolChoice: { type: 'tool', toolName: 'f' },
      providerOptions: { tessera: { parallelToolCalls: false } },
      headers: { 'x-a': 'b' },
    };
    const { request, warnings } = toEngineRequest(o);
    expect(request).toEqual({
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
      max_tokens: 9,
      temperature: 0.5,
      top_p: 0.9,
      top_k: 4,
      seed: 3,
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      stop: ['\n'],
      response_format: { type: 'json_schema', json_schema: { name: 'thing', schema: { type: 'object' } } },
      tools: [{ type: 'function', function: { name: 'f', description: 'does f', parameters: { type: 'object', properties: {} } } }],
      tool_choice: { type: 'function', function: { name: 'f' } },
      parallel_tool_calls: false,
    });
    expect(warnings.map((w) => ('feature' in w ? w.feature : w.type))).toEqual(['provider tool search', 'headers']);
    expect(toEngineRequest({ prompt: o.prompt, responseFormat: { type: 'json' } }).request.response_format).toEqual({
      type: 'json_object',
    });
  });
});
