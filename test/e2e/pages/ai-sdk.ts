// AI SDK harness (used by test/e2e/ai-sdk.spec.ts): the `ai` package in the page, as an app bundles it (through
// Vite), calling an engine through tessera/ai-sdk: generateText and streamText beside the engine's own answer to
// the same request, generateObject, and a required tool call; the spec checks what comes back.

import { generateObject, generateText, jsonSchema, streamText, tool } from 'ai';
import { tesseraModel } from '../../../src/ai-sdk';
import { createEngine } from '../../../src/engine/create-browser';

export interface AiSdkResult {
  backend: string;
  direct: { text: string; promptTokens: number };
  generated: { text: string; inputTokens: number | undefined; finishReason: string };
  streamed: { text: string; finishReason: string };
  object: unknown;
  toolCall: { toolName: string; input: unknown; finishReason: string };
}

declare global {
  interface Window {
    tesseraAiSdk?: (model: string, schema: Record<string, unknown>) => Promise<AiSdkResult>;
  }
}

window.tesseraAiSdk = async (modelUrl, schema) => {
  // WebGPU, as the spec says: 'auto' would take the CPU backend here (the checkpoint has ONNX graphs and the
  // only adapter is a software one).
  const engine = await createEngine({ model: modelUrl, kvCacheTokens: 2048, device: 'webgpu' });
  try {
    const model = tesseraModel(engine);
    const direct = await engine.chat.completions.create({ messages: [{ role: 'user', content: 'Hello there' }], max_tokens: 6 });
    const generated = await generateText({ model, prompt: 'Hello there', maxOutputTokens: 6 });
    const s = streamText({ model, prompt: 'Hello there', maxOutputTokens: 6 });
    let streamed = '';
    for await (const t of s.textStream) streamed += t;
    const { object } = await generateObject({ model, schema: jsonSchema(schema), prompt: 'Weather?', maxOutputTokens: 64 });
    const tools = { get_weather: tool({ description: 'The weather in a city', inputSchema: jsonSchema(schema) }) };
    const called = await generateText({
      model,
      tools,
      toolChoice: 'required',
      prompt: 'Weather in Oslo?',
      maxOutputTokens: 128,
      providerOptions: { tessera: { parallelToolCalls: false } },
    });
    return {
      backend: engine.stats().device.backend,
      direct: { text: direct.choices[0]!.message.content, promptTokens: direct.usage.prompt_tokens },
      generated: { text: generated.text, inputTokens: generated.usage.inputTokens, finishReason: generated.finishReason },
      streamed: { text: streamed, finishReason: await s.finishReason },
      object,
      toolCall: { toolName: called.toolCalls[0]?.toolName ?? '', input: called.toolCalls[0]?.input, finishReason: called.finishReason },
    };
  } finally {
    engine.destroy();
  }
};

document.body.dataset.ready = 'yes';
