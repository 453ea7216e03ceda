// OpenAI's chat completion parameters and shapes on the engine, on the CPU backend (the same
// engine code as WebGPU, faster here): stop strings across token boundaries, max_completion_tokens,
// stream_options.include_usage, the response fields openai's types have, OpenAI's message shapes, the
// fields Tessera refuses by name, and cancellation as the openai client does it.

import { batchAgreement, scored } from '../helpers/batch-agreement';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ChatCompletionChunk, ChatCompletionRequest } from '../../src/engine/types';
import { InvalidMessageError, InvalidRequestError, RequestAbortedError, ToolsNotSupportedError } from '../../src/errors';
import { goldenManifest } from '../helpers/goldens';
import { expectIdle, useCpuEngine } from '../helpers/cpu-engine';

const SAMPLE = new Uint8Array(readFileSync(resolve(import.meta.dirname, '../../public/sample.png')));
const TOKENS = goldenManifest().greedy['smolvlm-tiny'].tokens;
const DATA_URL = `data:image/png;base64,${Buffer.from(SAMPLE).toString('base64')}`;

const golden = (extra: Partial<ChatCompletionRequest> = {}): ChatCompletionRequest & { stream?: false } => ({
  messages: [
    {
      role: 'user',
      content: [
        { type: 'image_url', image_url: { url: DATA_URL } },
        { type: 'text', text: 'Can you describe this image?' },
      ],
    },
  ],
  max_tokens: 20,
  ...extra,
  stream: false,
});

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const out: ChatCompletionChunk[] = [];
  for await (const c of stream) out.push(c);
  return out;
}

const engine = useCpuEngine(4096);

describe('OpenAI parameters', () => {
  it('the response has what openai types have: usage, logprobs null, refusal null; max_completion_tokens is max_tokens', async () => {
    const r = await engine().chat.completions.create(golden({ max_tokens: undefined, max_completion_tokens: 20, model: 'any-name' }));
    expect(r.tessera.tokenIds).toEqual(TOKENS);
    expect(r.choices).toEqual([
      {
        index: 0,
        message: { role: 'assistant', content: r.choices[0]!.message.content, refusal: null },
        finish_reason: 'length',
        logprobs: null,
      },
    ]);
    expect(r.usage).toEqual({ prompt_tokens: r.tessera.promptTokens, completion_tokens: 20, total_tokens: r.tessera.promptTokens + 20 });
    const three = await engine().chat.completions.create(golden({ max_tokens: 3, max_completion_tokens: 3 }));
    expect(three.tessera.tokenIds).toEqual(TOKENS.slice(0, 3));
    await expect(engine().chat.completions.create(golden({ max_tokens: 3, max_completion_tokens: 4 }))).rejects.toMatchObject({
      name: 'InvalidRequestError',
      field: 'max_completion_tokens',
    });
  });

  it('stop strings end the answer before them, across token boundaries, streamed or not; the KV is freed at once', async () => {
    const deltas = (await collect(await engine().chat.completions.create({ ...golden(), stream: true })))
      .map((c) => c.choices[0]?.delta.content ?? '')
      .filter((d) => d.length > 0);
    const full = deltas.join('');
    // A stop string made of the end of one token's text and the start of the next one's.
    const k = deltas.findIndex((d, i) => i > 0 && d.length >= 2 && (deltas[i + 1]?.length ?? 0) >= 2);
    expect(k, `no two neighbouring deltas of 2+ characters in ${JSON.stringify(deltas)}`).toBeGreaterThan(0);
    const stop = deltas[k]!.slice(-2) + deltas[k + 1]!.slice(0, 2);
    const expected = full.slice(0, full.indexOf(stop));
    const r = await engine().chat.completions.create(golden({ stop: ['never appears', stop] }));
    expect(r.choices[0]!.message.content).toBe(expected);
    expect(r.choices[0]!.finish_reason).toBe('stop');
    expect(r.tessera.tokenIds.length).toBeLessThan(20);
    expectIdle(engine());
    const chunks = await collect(await engine().chat.completions.create({ ...golden({ stop }), stream: true }));
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe(expected);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
    // A stop string that never appears changes nothing.
    const none = await engine().chat.completions.create(golden({ stop: 'never appears' }));
    expect(none.choices[0]!.message.content).toBe(full);
    expect(none.choices[0]!.finish_reason).toBe('length');
  });

  it('stream_options.include_usage: usage null on every chunk, then a last chunk with no choices and the usage', async () => {
    const chunks = await collect(
      await engine().chat.completions.create({ ...golden(), stream: true, stream_options: { include_usage: true } }),
    );
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({ prompt_tokens: expect.any(Number), completion_tokens: 20, total_tokens: expect.any(Number) });
    expect(chunks.slice(0, -1).every((c) => c.usage === null && c.choices.length === 1)).toBe(true);
    expect(chunks.at(-2)!.tessera!.tokenIds).toEqual(TOKENS);
    const plain = await collect(await engine().chat.completions.create({ ...golden({ max_tokens: 2 }), stream: true }));
    expect(plain.every((c) => !('usage' in c))).toBe(true);
  });

  it("OpenAI's message shapes: developer is system, an assistant turn may be null or a refusal", async () => {
    const convo = (system: ChatCompletionRequest['messages'][number], assistant: ChatCompletionRequest['messages'][number]) =>
      engine().chat.completions.create({
        messages: [system, { role: 'user', content: 'Hi' }, assistant, { role: 'user', content: 'And now?' }],
        max_tokens: 4,
      });
    const asSystem = await convo({ role: 'system', content: 'Be brief.' }, { role: 'assistant', content: 'No.' });
    const asDeveloper = await convo({ role: 'developer', content: 'Be brief.' }, { role: 'assistant', content: null, refusal: 'No.' });
    const asParts = await convo(
      { role: 'developer', content: [{ type: 'text', text: 'Be brief.' }] },
      { role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] },
    );
    expect(asDeveloper.tessera.tokenIds).toEqual(asSystem.tessera.tokenIds);
    expect(asParts.tessera.tokenIds).toEqual(asSystem.tessera.tokenIds);
    const empty = await convo({ role: 'system', content: 'Be brief.' }, { role: 'assistant' });
    expect(empty.usage.prompt_tokens).toBeLessThan(asSystem.usage.prompt_tokens);
  });

  it('what Tessera cannot honour is refused by name, never ignored; what does not change the answer is accepted', async () => {
    const refused: Array<[Partial<ChatCompletionRequest>, string]> = [
      [{ n: 17 }, 'n'],
      [{ n: 0 }, 'n'],
      [{ frequency_penalty: 2.5 }, 'frequency_penalty'],
      [{ presence_penalty: -3 }, 'presence_penalty'],
      [{ logprobs: 1 as unknown as boolean }, 'logprobs'],
      [{ top_logprobs: 3 }, 'top_logprobs'],
      [{ logprobs: true, top_logprobs: 21 }, 'top_logprobs'],
      [{ response_format: { type: 'xml' } as unknown as ChatCompletionRequest['response_format'] }, 'response_format.type'],
      [{ response_format: { type: 'json_schema' } as unknown as ChatCompletionRequest['response_format'] }, 'response_format.json_schema'],
      [{ response_format: { type: 'json_schema', json_schema: { name: 'a b', schema: {} } } }, 'response_format.json_schema.name'],
      [{ tool_choice: 'required' }, 'tool_choice'],
      [{ functions: [{ name: 'f' }] }, 'functions'],
      [{ logit_bias: { '5': 10 } }, 'logit_bias'],
      [{ modalities: ['text', 'audio'] }, 'modalities'],
      [{ audio: { voice: 'alloy', format: 'wav' } }, 'audio'],
      [{ reasoning_effort: 'high' }, 'reasoning_effort'],
      [{ stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop'],
      [{ stop: '' }, 'stop'],
      [{ stream_options: { include_usage: true } }, 'stream_options'],
      [{ messages: [{ role: 'user', content: 'Hi', name: 'ann' }] }, 'messages[0].name'],
      [{ messages: [{ role: 'function', content: '42', name: 'f' }] }, 'messages[0].role'],
      [
        { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: DATA_URL, detail: 'low' } }] }] },
        'messages[0].content[0].image_url.detail',
      ],
    ];
    for (const [extra, field] of refused) {
      const e = await engine()
        .chat.completions.create(golden(extra))
        .catch((x: unknown) => x);
      expect(e, field).toBeInstanceOf(InvalidRequestError);
      expect((e as InvalidRequestError).field).toBe(field);
    }
    // SmolVLM's chat template offers no tools: tools, tool turns and tool calls are refused by name.
    const call = { id: 'c1', type: 'function' as const, function: { name: 'f', arguments: '{}' } };
    const toolAsks: Array<[Partial<ChatCompletionRequest>, string]> = [
      [{ tools: [{ type: 'function', function: { name: 'f' } }] }, 'tools'],
      [{ messages: [{ role: 'tool', content: '42', tool_call_id: 'c1' }] }, 'messages[0]'],
      [
        {
          messages: [
            { role: 'user', content: 'Hi' },
            { role: 'assistant', content: null, tool_calls: [call] },
          ],
        },
        'messages[1]',
      ],
    ];
    for (const [extra, field] of toolAsks) {
      const e = await engine()
        .chat.completions.create(golden(extra))
        .catch((x: unknown) => x);
      expect(e, field).toBeInstanceOf(ToolsNotSupportedError);
      expect((e as ToolsNotSupportedError).field).toBe(field);
    }
    const file = await engine()
      .chat.completions.create(golden({ messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'f' } }] }] }))
      .catch((x: unknown) => x);
    expect(file).toBeInstanceOf(InvalidMessageError);
    const accepted = await engine().chat.completions.create(
      golden({
        model: 'gpt-4o-mini',
        user: 'u1',
        metadata: { app: 'test' },
        store: false,
        n: 1,
        frequency_penalty: 0,
        presence_penalty: null,
        logprobs: false,
        top_logprobs: null,
        response_format: { type: 'text' },
        tools: [],
        tool_choice: 'none',
        max_tokens: 3,
        messages: golden().messages.map((m) => ({ ...m, content: m.content })),
      }),
    );
    expect(accepted.tessera.tokenIds).toEqual(TOKENS.slice(0, 3));
    expectIdle(engine());
  });
});

describe('penalties and log probabilities', () => {
  it('logprobs: each token with its top alternatives from one distribution, the greedy token the most likely; streamed the same', async () => {
    const r = await engine().chat.completions.create(golden({ logprobs: true, top_logprobs: 5 }));
    const content = r.choices[0]!.logprobs!.content!;
    // The tokens' bytes, back to back, are the answer (a token alone may be part of a character).
    expect(Buffer.from(content.flatMap((t) => t.bytes ?? [])).toString('utf8')).toBe(r.choices[0]!.message.content);
    expect(content).toHaveLength(r.tessera.tokenIds.length);
    for (const t of content) {
      expect(t.top_logprobs).toHaveLength(5);
      expect(t.top_logprobs[0]!.token).toBe(t.token);
      expect(t.top_logprobs[0]!.logprob).toBe(t.logprob);
      expect(t.logprob).toBeLessThanOrEqual(0);
      for (let k = 1; k < 5; k++) expect(t.top_logprobs[k]!.logprob).toBeLessThanOrEqual(t.top_logprobs[k - 1]!.logprob);
      expect(t.top_logprobs.reduce((a, x) => a + Math.exp(x.logprob), 0)).toBeLessThanOrEqual(1 + 1e-9);
      const alone = Buffer.from(t.bytes ?? []).toString('utf8');
      if (!alone.includes('\uFFFD')) expect(t.token).toBe(alone);
    }
    const chunks = await collect(await engine().chat.completions.create({ ...golden({ logprobs: true, top_logprobs: 5 }), stream: true }));
    const streamed = chunks.flatMap((c) => c.choices[0]?.logprobs?.content ?? []);
    expect(streamed).toEqual(content);
    const plain = await engine().chat.completions.create(golden({ logprobs: true }));
    expect(plain.choices[0]!.logprobs!.content!.every((t) => t.top_logprobs.length === 0)).toBe(true);
    expect(plain.choices[0]!.logprobs!.content!.map((t) => t.logprob)).toEqual(content.map((t) => t.logprob));
    expectIdle(engine());
  });

  it('logprobs at a temperature are of the distribution the sampler drew from (logits / T); the draw is unchanged by asking', async () => {
    const sampled = { temperature: 0.7, seed: 5, max_tokens: 12 };
    const a = await engine().chat.completions.create(golden({ ...sampled, logprobs: true, top_logprobs: 2 }));
    const b = await engine().chat.completions.create(golden(sampled));
    expect(a.tessera.tokenIds).toEqual(b.tessera.tokenIds);
    const cold = await engine().chat.completions.create(golden({ ...sampled, temperature: 0.35, logprobs: true, top_logprobs: 2 }));
    // A lower temperature sharpens the same first distribution: the top token's log probability rises.
    const first = (x: typeof a) => x.choices[0]!.logprobs!.content![0]!;
    expect(first(cold).top_logprobs[0]!.token).toBe(first(a).top_logprobs[0]!.token);
    expect(first(cold).top_logprobs[0]!.logprob).toBeGreaterThan(first(a).top_logprobs[0]!.logprob);
  });

  it('a presence penalty keeps a greedy answer from repeating a token while other tokens are close; a frequency penalty changes it too', async () => {
    const long = { max_tokens: 40 };
    const free = await engine().chat.completions.create(golden(long));
    const repeats = (ids: number[]) => ids.length - new Set(ids).size;
    expect(repeats(free.tessera.tokenIds)).toBeGreaterThan(0);
    const present = await engine().chat.completions.create(golden({ ...long, presence_penalty: 2 }));
    expect(repeats(present.tessera.tokenIds)).toBeLessThan(repeats(free.tessera.tokenIds));
    const frequent = await engine().chat.completions.create(golden({ ...long, frequency_penalty: 2 }));
    expect(frequent.tessera.tokenIds).not.toEqual(free.tessera.tokenIds);
    // The first token has nothing before it to penalize.
    expect(present.tessera.tokenIds[0]).toBe(free.tessera.tokenIds[0]);
    expectIdle(engine());
  });
});

describe('n choices', () => {
  it("n = 3: one prefill (the others start on the first one's KV blocks), greedy choices equal, usage counts the prompt once", async () => {
    const bs = engine().stats().kv.blockSize;
    const hits = () => engine().stats().scheduler.prefixHitTokens;
    // A question no earlier request asked, long enough to fill blocks of its own after the image's (which
    // earlier requests cached): the blocks only the choices share.
    const question = 'Give three different short answers, each about the colours, the shapes and the mood of this picture.';
    const req = golden({
      n: 3,
      logprobs: true,
      top_logprobs: 2,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: DATA_URL } },
            { type: 'text', text: question },
          ],
        },
      ],
    });
    const before = hits();
    const r = await engine().chat.completions.create(req);
    const prompt = r.usage.prompt_tokens;
    expect(r.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    // The choices decode together, and choice 0 prefilled the tail the others prefill on its blocks in another
    // chunk shape: on the CPU backend they agree as a batch does with a request alone (batch-agreement.ts).
    for (const i of [1, 2]) expect(batchAgreement(scored(r, 0), scored(r, i), false).problems).toEqual([]);
    expect(r.usage).toEqual({ prompt_tokens: prompt, completion_tokens: 60, total_tokens: prompt + 60 });
    const shared = Math.floor((prompt - 1) / bs) * bs;
    const [first, ...others] = r.tessera.choices!.map((c) => c.cachedTokens);
    expect(first).toBeLessThan(shared);
    expect(others).toEqual([shared, shared]);
    expect(hits() - before).toBe(first! + 2 * shared);
    expectIdle(engine());
  });

  it('n = 3 sampled: choice i is the same request alone with seed + i, and the seed reproduces all three', async () => {
    const sampled = golden({ n: 3, temperature: 0.9, top_p: 0.95, seed: 11, max_tokens: 8, logprobs: true, top_logprobs: 2 });
    const a = await engine().chat.completions.create(sampled);
    const b = await engine().chat.completions.create(sampled);
    expect(b.tessera.choices!.map((c) => c.tokenIds)).toEqual(a.tessera.choices!.map((c) => c.tokenIds));
    for (let i = 0; i < 3; i++) {
      const alone = await engine().chat.completions.create({ ...sampled, n: 1, seed: 11 + i });
      // A batch of three against one request alone: as the CPU backend promises (batch-agreement.ts).
      expect(batchAgreement(scored(alone), scored(a, i), true).problems).toEqual([]);
    }
    expect(new Set(a.tessera.choices!.map((c) => c.tokenIds.join())).size).toBeGreaterThan(1);
  });

  it('n = 2 streamed: chunks of both choices under one id, each finished, then the usage of both', async () => {
    const chunks = await collect(
      await engine().chat.completions.create({ ...golden({ n: 2, max_tokens: 5 }), stream: true, stream_options: { include_usage: true } }),
    );
    expect(new Set(chunks.map((c) => c.id)).size).toBe(1);
    const finished = chunks.flatMap((c) => c.choices.filter((x) => x.finish_reason).map((x) => x.index));
    expect(finished.sort()).toEqual([0, 1]);
    expect(chunks.at(-1)!.choices).toEqual([]);
    expect(chunks.at(-1)!.usage!.completion_tokens).toBe(10);
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
    expectIdle(engine());
  });
});

describe('cancellation, as the openai client does it', () => {
  it("a stream aborted mid-way ends quietly; a request aborted before it starts rejects; create()'s second argument carries the signal", async () => {
    const abort = new AbortController();
    const stream = await engine().chat.completions.create({ ...golden({ max_tokens: 40 }), stream: true }, { signal: abort.signal });
    let n = 0;
    for await (const c of stream) if (c.choices[0]?.delta.content && ++n === 2) abort.abort(new Error('user pressed stop'));
    expect(n).toBeGreaterThanOrEqual(2);
    expect(n).toBeLessThan(40);
    expectIdle(engine());
    const before = new AbortController();
    before.abort();
    await expect(engine().chat.completions.create(golden(), { signal: before.signal })).rejects.toBeInstanceOf(RequestAbortedError);
    await expect(engine().chat.completions.create({ ...golden(), stream: true }, { signal: before.signal })).rejects.toBeInstanceOf(
      RequestAbortedError,
    );
    // Non-streamed and aborted while it runs: rejects.
    const during = new AbortController();
    const pending = engine().chat.completions.create(golden({ max_tokens: 200 }), { signal: during.signal });
    while (engine().stats().scheduler.numRunning === 0) await new Promise((r) => setTimeout(r, 2));
    during.abort();
    await expect(pending).rejects.toBeInstanceOf(RequestAbortedError);
    expectIdle(engine());
  });
});
