// OpenAI's `n`: n answers to one request. Each choice is a request of its own with seed + i (so a seed
// reproduces all n, and greedy choices are equal), and the choices after the first start once the first
// has its first token: by then its prompt's full KV blocks are in the prefix cache, so the others take
// them (refcounted, not copied) and prefill only the prompt's last, partial block. The image embeddings
// come from the encoder cache the first choice filled.
//
//   choice 0   prefill ████████ decode ─────────────►
//   choice 1..         (waits)  ▐ last block, decode ─────────►   blocks 0..k-1 shared with choice 0
//
// Chunks of all choices are merged in the order they come, each with its choice's index; a failing choice
// cancels the others and the stream fails with its error; the caller's abort ends the stream quietly.

import { InternalError } from '../errors';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionRequest,
  CompletionUsage,
  FinishReason,
  TesseraInfo,
  TokenLogprob,
  ToolCall,
} from './types';

/** The request of choice i (n = 1, its own seed, a signal that also stops when the whole request does). */
export function choiceRequest(req: ChatCompletionRequest, i: number, signal: AbortSignal): ChatCompletionRequest {
  const { stream_options: _unused, ...rest } = req;
  return { ...rest, n: 1, seed: (req.seed ?? 0) + i, signal };
}

type Event = { i: number; chunk: ChatCompletionChunk } | { i: number; done: true } | { i: number; error: unknown };

/**
 * Merge n choices' chunk streams (`one(i, signal)` streams choice i). Ends with a usage chunk when
 * `includeUsage`. Cancels every choice when the caller stops reading.
 */
export async function* streamChoices(
  n: number,
  one: (i: number, signal: AbortSignal) => AsyncIterable<ChatCompletionChunk>,
  userSignal: AbortSignal | undefined,
  includeUsage: boolean,
): AsyncGenerator<ChatCompletionChunk> {
  const inner = new AbortController();
  const signal = userSignal ? AbortSignal.any([userSignal, inner.signal]) : inner.signal;
  const events: Event[] = [];
  let wake: (() => void) | undefined;
  const put = (e: Event) => {
    events.push(e);
    wake?.();
    wake = undefined;
  };
  let startOthers!: () => void;
  const leaderReady = new Promise<void>((resolve) => (startOthers = resolve));
  const run = async (i: number) => {
    if (i > 0) await leaderReady;
    if (signal.aborted) return put({ i, done: true });
    try {
      for await (const chunk of one(i, signal)) {
        const c = chunk.choices[0];
        if (i === 0 && (c?.delta.content || c?.delta.tool_calls || c?.finish_reason)) startOthers();
        put({ i, chunk: { ...chunk, choices: chunk.choices.map((x) => ({ ...x, index: i })) } });
      }
      put({ i, done: true });
    } catch (error) {
      put({ i, error });
    } finally {
      if (i === 0) startOthers();
    }
  };
  for (let i = 0; i < n; i++) void run(i);
  const infos: TesseraInfo[] = [];
  let first: ChatCompletionChunk | undefined;
  try {
    for (let open = n; open > 0; ) {
      while (events.length === 0) await new Promise<void>((r) => (wake = r));
      const e = events.shift()!;
      if ('error' in e) throw e.error;
      if ('done' in e) {
        open--;
        continue;
      }
      if (e.chunk.tessera) infos[e.i] = e.chunk.tessera;
      // One id and time for the whole response, as OpenAI streams n choices.
      first ??= e.chunk;
      yield { ...e.chunk, id: first.id, created: first.created, ...(includeUsage ? { usage: null } : {}) };
    }
    if (userSignal?.aborted) return;
    if (includeUsage && first) {
      yield {
        id: first.id,
        object: 'chat.completion.chunk',
        created: first.created,
        model: first.model,
        choices: [],
        usage: usageOfChoices(infos),
      };
    }
  } finally {
    inner.abort(); // a choice still running (the caller stopped reading, or another choice failed) stops
  }
}

function usageOfChoices(infos: readonly TesseraInfo[]): CompletionUsage {
  const prompt = infos[0]?.promptTokens ?? 0;
  const completion = infos.reduce((a, x) => a + (x?.tokenIds.length ?? 0), 0);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** The n choices' streams gathered into one ChatCompletion (its `tessera` is choice 0's, with every choice's in `choices`). */
export async function collectChoices(n: number, chunks: AsyncIterable<ChatCompletionChunk>, withLogprobs = false): Promise<ChatCompletion> {
  const text: string[] = new Array(n).fill('');
  const finish: FinishReason[] = new Array(n).fill('length');
  const calls: ToolCall[][] = Array.from({ length: n }, () => []);
  const infos: TesseraInfo[] = [];
  const logprobs: Array<TokenLogprob[] | undefined> = Array.from({ length: n }, () => (withLogprobs ? [] : undefined));
  let head: ChatCompletionChunk | undefined;
  for await (const c of chunks) {
    head ??= c;
    for (const x of c.choices) {
      text[x.index] += x.delta.content ?? '';
      for (const { index: _, ...call } of x.delta.tool_calls ?? []) calls[x.index]!.push(call);
      if (x.logprobs?.content) (logprobs[x.index] ??= []).push(...x.logprobs.content);
      if (x.finish_reason) finish[x.index] = x.finish_reason;
      if (c.tessera) infos[x.index] = c.tessera;
    }
  }
  if (!head || infos.length < n || infos.some((x) => !x)) {
    throw new InternalError(`${infos.filter(Boolean).length} of ${n} choices finished`);
  }
  return {
    id: head.id,
    object: 'chat.completion',
    created: head.created,
    model: head.model,
    choices: text.map((content, index) => ({
      index,
      message: { role: 'assistant', content, refusal: null, ...(calls[index]!.length ? { tool_calls: calls[index] } : {}) },
      finish_reason: finish[index]!,
      logprobs: logprobs[index] ? { content: logprobs[index], refusal: null } : null,
    })),
    usage: usageOfChoices(infos),
    tessera: { ...infos[0]!, choices: infos },
  };
}
