// Compiled, never run: tessera/ai-sdk from the installed package is a language model the `ai` package's own
// functions take, and a tool call's parts keep their types. Each line fails to compile if that stops being true.

import { generateText, jsonSchema, streamText, tool } from 'ai';
import type { Engine } from 'tessera/node';
import { tesseraModel } from 'tessera/ai-sdk';

export async function aiSdkTypes(engine: Engine): Promise<void> {
  const model = tesseraModel(engine, { modelId: 'qwen3_vl-tiny' });
  const tools = { get_weather: tool({ inputSchema: jsonSchema<{ city: string }>({ type: 'object', properties: { city: { type: 'string' } } }) }) };
  const r = await generateText({ model, tools, toolChoice: 'required', prompt: 'Oslo?', providerOptions: { tessera: { parallelToolCalls: false } } });
  const call: { toolName: string; input: unknown } | undefined = r.toolCalls[0];
  const s = streamText({ model, prompt: 'Hello', maxOutputTokens: 8 });
  for await (const t of s.textStream) void t;
  // @ts-expect-error a model id is a string, not a number
  tesseraModel(engine, { modelId: 3 });
  void [call, r.usage.inputTokens];
}
