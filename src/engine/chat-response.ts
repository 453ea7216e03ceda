// One request's run (engine.ts's `run`: text deltas, then the finish reason and the request's numbers) as
// OpenAI's answer: a whole ChatCompletion, or the chunks of a stream. With tools offered, the text is read
// into content and tool calls on the way (tool-calls.ts).

import { RequestAbortedError } from '../errors';
import type { Delta, RunResult } from './engine-request';
import { finishedAnswer } from './request-tools';
import type { ToolCallReader } from './tool-calls';
import type { ChatCompletion, ChatCompletionChunk, ChatCompletionRequest, FinishReason, TesseraInfo, TokenLogprob } from './types';
import { usageOf } from './usage';

/** The run, to its end, as one ChatCompletion. */
export async function completionOf(
  run: AsyncGenerator<Delta, RunResult>,
  model: string,
  reader: ToolCallReader | undefined,
): Promise<ChatCompletion> {
  let n = await run.next();
  while (!n.done) n = await run.next();
  const { info, text, logprobs } = n.value;
  const { message, finishReason } = finishedAnswer(reader, text, n.value.finishReason);
  return {
    id: `tessera-${Date.now().toString(36)}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message,
        finish_reason: finishReason,
        logprobs: logprobs ? { content: logprobs, refusal: null } : null,
      },
    ],
    usage: usageOf(info),
    tessera: info,
  };
}

/**
 * Chunks as OpenAI streams them: the role, the text deltas (and each tool call, whole), the finish reason
 * (with `tessera`), and with stream_options.include_usage a last chunk with no choices and the usage (every
 * other chunk usage: null). The caller's own abort ends the stream quietly, as the openai client's streams end.
 */
export async function* chunksOf(
  req: ChatCompletionRequest,
  run: AsyncGenerator<Delta, RunResult>,
  model: string,
  reader: ToolCallReader | undefined,
): AsyncGenerator<ChatCompletionChunk> {
  const id = `tessera-${Date.now().toString(36)}`;
  const created = Math.floor(Date.now() / 1000);
  const includeUsage = req.stream_options?.include_usage === true;
  const base = () => ({
    id,
    object: 'chat.completion.chunk' as const,
    created,
    model,
    ...(includeUsage ? { usage: null } : {}),
  });
  const chunk = (
    delta: ChatCompletionChunk['choices'][0]['delta'],
    finish: FinishReason | null,
    info?: TesseraInfo,
    logprobs?: TokenLogprob[],
  ): ChatCompletionChunk => ({
    ...base(),
    choices: [{ index: 0, delta, finish_reason: finish, ...(logprobs ? { logprobs: { content: logprobs, refusal: null } } : {}) }],
    ...(info ? { tessera: info } : {}),
  });
  yield chunk({ role: 'assistant' }, null);
  let numCalls = 0;
  try {
    for (;;) {
      const n = await run.next();
      if (n.done) {
        const rest = reader?.finish();
        if (rest) yield chunk({ content: rest }, null);
        const finish = numCalls > 0 && n.value.finishReason === 'stop' ? 'tool_calls' : n.value.finishReason;
        yield chunk({}, finish, n.value.info);
        if (includeUsage) yield { ...base(), choices: [], usage: usageOf(n.value.info) };
        return;
      }
      if (!reader) {
        yield chunk({ content: n.value.text }, null, undefined, n.value.logprobs);
        continue;
      }
      // With tools: text that may open a call waits for the next; each call comes whole once closed.
      const read = reader.push(n.value.text);
      if (read.content || n.value.logprobs) yield chunk({ content: read.content }, null, undefined, n.value.logprobs);
      if (read.calls.length) yield chunk({ tool_calls: read.calls.map((c) => ({ index: numCalls++, ...c })) }, null);
    }
  } catch (e) {
    if (e instanceof RequestAbortedError && req.signal?.aborted) return;
    throw e;
  } finally {
    await run.return(undefined as never); // an abandoned stream releases its request at once
  }
}
