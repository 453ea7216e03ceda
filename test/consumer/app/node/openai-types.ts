// Compiled, never run: Tessera's engine is typed to stand where the official `openai` client's chat
// completions were. A request typed with openai's own ChatCompletionCreateParams (or written as openai's
// docs write it) goes into engine.chat.completions.create, and what comes back is openai's ChatCompletion
// and ChatCompletionChunk. Each line fails to compile if that stops being true.

import type OpenAI from 'openai';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, Engine } from 'tessera/node';

/** What app code written for the openai client calls: both the client and the engine are one. */
interface ChatClient {
  chat: {
    completions: {
      create(body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming, options?: { signal?: AbortSignal }): Promise<OpenAI.Chat.ChatCompletion>;
    };
  };
}

export async function openaiTypes(engine: Engine, client: OpenAI, signal: AbortSignal): Promise<void> {
  const clients: ChatClient[] = [client, engine];
  const params: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming = {
    model: 'gpt-4o-mini',
    messages: [
      { role: 'developer', content: 'Answer briefly.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is on this receipt?' },
          { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=', detail: 'auto' } },
        ],
      },
      { role: 'assistant', content: null, refusal: 'I cannot read it.' },
      { role: 'user', content: 'Try again.' },
    ],
    max_completion_tokens: 64,
    stop: ['\n\n'],
    temperature: 0.7,
    top_p: 0.9,
    seed: 7,
  };
  const asTessera: ChatCompletionRequest & { stream?: false | null } = params;
  const completion: OpenAI.Chat.ChatCompletion = await engine.chat.completions.create(params, { signal });
  const ours: ChatCompletion = await engine.chat.completions.create(asTessera);
  const theirs: OpenAI.Chat.ChatCompletion = ours;
  const streaming: OpenAI.Chat.ChatCompletionCreateParamsStreaming = { ...params, stream: true, stream_options: { include_usage: true } };
  for await (const chunk of await engine.chat.completions.create(streaming)) {
    const c: OpenAI.Chat.ChatCompletionChunk = chunk;
    const mine: ChatCompletionChunk = chunk;
    void [c, mine];
  }
  // Written inline as openai's documentation writes it.
  const inline = await engine.chat.completions.create({
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'Hello' }],
    max_tokens: 16,
    n: 2,
    logprobs: true,
    top_logprobs: 3,
    frequency_penalty: 0.5,
    presence_penalty: 0.25,
    response_format: {
      type: 'json_schema',
      json_schema: { name: 'receipt', strict: true, schema: { type: 'object', properties: { total: { type: 'number' } }, required: ['total'] } },
    },
  });
  const text: string | null = inline.choices[0]!.message.content;
  const logprobs: OpenAI.Chat.ChatCompletionTokenLogprob[] | null | undefined = inline.choices[0]!.logprobs?.content;
  const jsonMode: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming = { model: 'm', messages: [], response_format: { type: 'json_object' } };
  await engine.chat.completions.create(jsonMode);
  // Tool calling as openai's documentation writes it: tools, a forced choice, the call sent back, its result.
  const tools: OpenAI.Chat.ChatCompletionTool[] = [
    { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
  ];
  const asked = await engine.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'Oslo?' }], tools, tool_choice: 'required' });
  const message: OpenAI.Chat.ChatCompletionMessage = asked.choices[0]!.message;
  const call = asked.choices[0]!.message.tool_calls?.[0];
  const finish: OpenAI.Chat.ChatCompletion.Choice['finish_reason'] = asked.choices[0]!.finish_reason;
  const followUp: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming = {
    model: 'm',
    tools,
    tool_choice: { type: 'function', function: { name: 'get_weather' } },
    parallel_tool_calls: false,
    messages: [{ role: 'user', content: 'Oslo?' }, message, { role: 'tool', tool_call_id: call?.id ?? '', content: '12 C' }],
  };
  await engine.chat.completions.create(followUp);
  void [clients, completion, theirs, text, logprobs, call?.function.arguments, finish];
}
