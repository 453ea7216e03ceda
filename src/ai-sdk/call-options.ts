// The AI SDK's call options (LanguageModelV4CallOptions) as an engine request, and the AI SDK's warnings for
// what the engine does not do:
//
//   maxOutputTokens, temperature, topP, topK, seed    -> max_tokens, temperature, top_p, top_k, seed
//   presencePenalty, frequencyPenalty, stopSequences  -> presence_penalty, frequency_penalty, stop
//   responseFormat { type: 'json', schema? }          -> response_format json_schema (json_object without one)
//   tools (function), toolChoice                      -> tools, tool_choice (checkpoints whose template has tools)
//   abortSignal                                       -> signal
//   providerOptions.tessera.parallelToolCalls         -> parallel_tool_calls
//   provider tools, reasoning, headers                -> warnings: not used
//
// A value the engine refuses (five stop sequences, a temperature below 0, ...) fails the call with the
// engine's named error, as the engine's own requests do.

import type { LanguageModelV4CallOptions, SharedV4Warning } from '@ai-sdk/provider';
import type { ChatCompletionRequest, ChatCompletionTool } from '../engine/types';
import { toEngineMessages } from './prompt';

function toolChoice(c: LanguageModelV4CallOptions['toolChoice']): ChatCompletionRequest['tool_choice'] {
  if (!c) return undefined;
  return c.type === 'tool' ? { type: 'function', function: { name: c.toolName } } : c.type;
}

/** The engine request for `o` (not yet streamed or not), and the warnings for what it leaves out. */
export function toEngineRequest(o: LanguageModelV4CallOptions): { request: ChatCompletionRequest; warnings: SharedV4Warning[] } {
  const { messages, warnings } = toEngineMessages(o.prompt);
  const tools: ChatCompletionTool[] = [];
  for (const t of o.tools ?? []) {
    if (t.type !== 'function') {
      warnings.push({ type: 'unsupported', feature: `provider tool ${t.name}`, details: 'only function tools run on the device.' });
      continue;
    }
    tools.push({
      type: 'function',
      function: {
        name: t.name,
        ...(t.description ? { description: t.description } : {}),
        parameters: t.inputSchema as Record<string, unknown>,
      },
    });
  }
  if (o.reasoning && o.reasoning !== 'provider-default' && o.reasoning !== 'none') {
    warnings.push({ type: 'unsupported', feature: 'reasoning', details: 'the checkpoints Tessera runs have no reasoning setting.' });
  }
  if (o.headers && Object.keys(o.headers).length > 0) {
    warnings.push({ type: 'unsupported', feature: 'headers', details: 'an engine on the device takes no HTTP headers.' });
  }
  const parallel = (o.providerOptions?.tessera as { parallelToolCalls?: unknown } | undefined)?.parallelToolCalls;
  const format = o.responseFormat;
  const response_format: ChatCompletionRequest['response_format'] =
    format?.type !== 'json'
      ? undefined
      : format.schema
        ? {
            type: 'json_schema',
            json_schema: {
              name: format.name ?? 'response',
              schema: format.schema as Record<string, unknown>,
              ...(format.description ? { description: format.description } : {}),
            },
          }
        : { type: 'json_object' };
  const request: ChatCompletionRequest = {
    messages,
    ...(o.maxOutputTokens !== undefined ? { max_tokens: o.maxOutputTokens } : {}),
    ...(o.temperature !== undefined ? { temperature: o.temperature } : {}),
    ...(o.topP !== undefined ? { top_p: o.topP } : {}),
    ...(o.topK !== undefined ? { top_k: o.topK } : {}),
    ...(o.seed !== undefined ? { seed: o.seed } : {}),
    ...(o.presencePenalty !== undefined ? { presence_penalty: o.presencePenalty } : {}),
    ...(o.frequencyPenalty !== undefined ? { frequency_penalty: o.frequencyPenalty } : {}),
    ...(o.stopSequences?.length ? { stop: o.stopSequences } : {}),
    ...(response_format ? { response_format } : {}),
    ...(tools.length ? { tools } : {}),
    ...(tools.length && o.toolChoice ? { tool_choice: toolChoice(o.toolChoice) } : {}),
    ...(tools.length && typeof parallel === 'boolean' ? { parallel_tool_calls: parallel } : {}),
    ...(o.abortSignal ? { signal: o.abortSignal } : {}),
  };
  return { request, warnings };
}
