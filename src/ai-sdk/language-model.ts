// A Tessera engine (or remote engine) as an AI SDK language model: the LanguageModelV4 interface of
// @ai-sdk/provider 4, the one `ai` 7's generateText, streamText, generateObject and streamObject call.
//
//   doGenerate: one non-streamed request -> text and tool-call content, finish reason, usage
//   doStream:   one streamed request     -> stream-start, response-metadata, text-start/-delta/-end,
//                                           tool-input-start/-delta/-end + tool-call (a call arrives whole),
//                                           finish (usage from the engine's own numbers)
//
// The prompt and options are translated by prompt.ts and call-options.ts. An engine error fails the call
// (doGenerate rejects; doStream puts an 'error' part in the stream), with the engine's named error.

import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4Content,
  LanguageModelV4FinishReason,
  LanguageModelV4GenerateResult,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4Usage,
  SharedV4Warning,
} from '@ai-sdk/provider';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionsCreate, FinishReason, TesseraInfo } from '../engine/types';
import { toEngineRequest } from './call-options';

/** What the model needs of an engine: its chat completions (an Engine and a RemoteEngine both have them). */
export interface ChatEngine {
  chat: { completions: { create: ChatCompletionsCreate } };
}

export interface TesseraModelOptions {
  /** The model id the AI SDK reports (default 'tessera'). */
  modelId?: string;
}

function finishReason(raw: FinishReason | null | undefined): LanguageModelV4FinishReason {
  const unified = raw === 'stop' ? 'stop' : raw === 'length' ? 'length' : raw === 'tool_calls' ? 'tool-calls' : 'other';
  return { unified, raw: raw ?? undefined };
}

function usageOf(promptTokens: number, completionTokens: number, cachedTokens: number | undefined): LanguageModelV4Usage {
  return {
    inputTokens: {
      total: promptTokens,
      noCache: cachedTokens === undefined ? undefined : promptTokens - cachedTokens,
      cacheRead: cachedTokens,
      cacheWrite: undefined,
    },
    outputTokens: { total: completionTokens, text: completionTokens, reasoning: undefined },
  };
}

const infoUsage = (info: TesseraInfo | undefined, fallback: ChatCompletion['usage'] | null | undefined): LanguageModelV4Usage =>
  info
    ? usageOf(info.promptTokens, info.tokenIds.length, info.cachedTokens)
    : usageOf(fallback?.prompt_tokens ?? 0, fallback?.completion_tokens ?? 0, undefined);

export class TesseraLanguageModel implements LanguageModelV4 {
  readonly specificationVersion = 'v4';
  readonly provider = 'tessera';
  readonly modelId: string;
  /** None: the AI SDK downloads URL parts and hands their bytes over. */
  readonly supportedUrls: Record<string, RegExp[]> = {};

  constructor(
    private readonly engine: ChatEngine,
    options: TesseraModelOptions = {},
  ) {
    this.modelId = options.modelId ?? 'tessera';
  }

  async doGenerate(options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
    const { request, warnings } = toEngineRequest(options);
    const r = await this.engine.chat.completions.create({ ...request, stream: false });
    const choice = r.choices[0]!;
    const content: LanguageModelV4Content[] = [];
    if (choice.message.content) content.push({ type: 'text', text: choice.message.content });
    for (const c of choice.message.tool_calls ?? []) {
      content.push({ type: 'tool-call', toolCallId: c.id, toolName: c.function.name, input: c.function.arguments });
    }
    return {
      content,
      finishReason: finishReason(choice.finish_reason),
      usage: infoUsage(r.tessera, r.usage),
      request: { body: { ...request, signal: undefined } },
      response: { id: r.id, modelId: r.model, timestamp: new Date(r.created * 1000) },
      warnings,
    };
  }

  async doStream(options: LanguageModelV4CallOptions): Promise<LanguageModelV4StreamResult> {
    const { request, warnings } = toEngineRequest(options);
    const chunks = await this.engine.chat.completions.create({ ...request, stream: true, stream_options: { include_usage: true } });
    return { stream: streamParts(chunks, warnings), request: { body: { ...request, signal: undefined } } };
  }
}

/** The engine's chunks as the AI SDK's stream parts (see the file header). */
function streamParts(chunks: AsyncIterable<ChatCompletionChunk>, warnings: SharedV4Warning[]): ReadableStream<LanguageModelV4StreamPart> {
  const it = chunks[Symbol.asyncIterator]();
  let started = false;
  let textOpen = false;
  let finish: FinishReason | null = null;
  let info: TesseraInfo | undefined;
  let usage: ChatCompletion['usage'] | null | undefined;
  return new ReadableStream<LanguageModelV4StreamPart>({
    async pull(controller) {
      if (!started) {
        started = true;
        controller.enqueue({ type: 'stream-start', warnings });
      }
      try {
        // Each pull enqueues at least one part (a pull that enqueues nothing is not called again).
        for (;;) {
          const n = await it.next();
          if (n.done) {
            if (textOpen) controller.enqueue({ type: 'text-end', id: 'text' });
            controller.enqueue({ type: 'finish', finishReason: finishReason(finish), usage: infoUsage(info, usage) });
            controller.close();
            return;
          }
          const c = n.value;
          if (c.usage) usage = c.usage;
          if (c.tessera) info = c.tessera;
          if (c.choices[0]?.finish_reason) finish = c.choices[0].finish_reason;
          const x = c.choices[0];
          if (!x || (!x.delta.role && !x.delta.content && !x.delta.tool_calls?.length)) continue;
          if (x.delta.role)
            controller.enqueue({ type: 'response-metadata', id: c.id, modelId: c.model, timestamp: new Date(c.created * 1000) });
          if (x.delta.content) {
            if (!textOpen) controller.enqueue({ type: 'text-start', id: 'text' });
            textOpen = true;
            controller.enqueue({ type: 'text-delta', id: 'text', delta: x.delta.content });
          }
          for (const call of x.delta.tool_calls ?? []) {
            controller.enqueue({ type: 'tool-input-start', id: call.id, toolName: call.function.name });
            controller.enqueue({ type: 'tool-input-delta', id: call.id, delta: call.function.arguments });
            controller.enqueue({ type: 'tool-input-end', id: call.id });
            controller.enqueue({ type: 'tool-call', toolCallId: call.id, toolName: call.function.name, input: call.function.arguments });
          }
          return;
        }
      } catch (error) {
        controller.enqueue({ type: 'error', error });
        controller.close();
      }
    },
    async cancel() {
      await it.return?.();
    },
  });
}

/** An engine (or remote engine) as an AI SDK language model: `generateText({ model: tesseraModel(engine), prompt })`. */
export function tesseraModel(engine: ChatEngine, options?: TesseraModelOptions): TesseraLanguageModel {
  return new TesseraLanguageModel(engine, options);
}
