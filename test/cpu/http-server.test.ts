// tessera serve (src/server/) over real HTTP on loopback, with the official openai client: the same tokens
// as the in-process engine (alone; 32 clients at once as the CPU backend's batching promises), streaming, a client that aborts (its KV freed),
// every error status in OpenAI's shape, /metrics read by a Prometheus text parser, the raw SSE framing as
// curl sees it, and abuse at the HTTP layer (huge and slow bodies, 1,000 dropped connections).

import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine';
import type { ChatCompletion } from '../../src/engine/types';
import { type RunningServer, startServer } from '../../src/server/listen-node';
import { batchAgreement, type ScoredAnswer, scored } from '../helpers/batch-agreement';
import { expectIdle, useCpuEngine } from '../helpers/cpu-engine';
import { openSocket, postHugeBody, readUntilClose } from '../helpers/http-client';

const KEY = 'test-key-123';
const MODEL = 'smolvlm-tiny';
const engineOf = useCpuEngine(8192);

let server: RunningServer;
let client: OpenAI;

beforeAll(async () => {
  server = await startServer({
    engine: engineOf(),
    ownsEngine: false,
    modelName: MODEL,
    port: 0,
    apiKey: KEY,
    maxBodyBytes: 1 << 20,
    headersTimeoutMs: 1000,
    requestTimeoutMs: 3000,
  });
  client = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: KEY, maxRetries: 0 });
});
afterAll(() => server?.close());

function tokenIds(r: unknown): number[] {
  return (r as ChatCompletion).tessera.tokenIds;
}

/** Wait until the engine holds no request and every KV block is free. */
async function idle(engine: Engine, timeoutMs = 5000): Promise<void> {
  const t0 = performance.now();
  for (;;) {
    const s = engine.stats();
    if (
      (s.kv.numFreeBlocks === s.kv.numBlocks && s.scheduler.numRunning === 0 && s.scheduler.numWaiting === 0) ||
      performance.now() - t0 > timeoutMs
    )
      break;
    await new Promise((r) => setTimeout(r, 20));
  }
  expectIdle(engine);
  expect(server.admission.numRunning + server.admission.numWaiting).toBe(0);
}

const question = (i: number): Array<{ role: 'user'; content: string }> => [
  { role: 'user', content: `Question number ${i}: what comes next?` },
];

describe('the openai client against tessera serve', () => {
  it('answers non-streamed and streamed with the tokens of the in-process engine', async () => {
    const solo = await engineOf().chat.completions.create({ messages: question(1), max_tokens: 12 });
    const r = await client.chat.completions.create({ model: MODEL, messages: question(1), max_tokens: 12 });
    expect(tokenIds(r)).toEqual(solo.tessera.tokenIds);
    expect(r.choices[0].message.content).toBe(solo.choices[0].message.content);
    expect(r.usage).toEqual(solo.usage);
    expect(r.model).toBe(MODEL);

    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: question(1),
      max_completion_tokens: 12,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: unknown;
    const finish: string[] = [];
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.choices[0]?.finish_reason) finish.push(chunk.choices[0].finish_reason);
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe(solo.choices[0].message.content);
    expect(finish).toEqual(['length']);
    expect(usage).toEqual(solo.usage);

    // sampling parameters and stop strings travel as they are
    const sampled = { messages: question(2), max_tokens: 10, temperature: 0.9, top_p: 0.8, seed: 7 };
    const soloSampled = await engineOf().chat.completions.create(sampled);
    expect(tokenIds(await client.chat.completions.create({ model: MODEL, ...sampled }))).toEqual(soloSampled.tessera.tokenIds);
    const stop = soloSampled.choices[0].message.content.slice(3, 6);
    const stopped = await client.chat.completions.create({ model: MODEL, ...sampled, stop: [stop] });
    expect(stopped.choices[0].finish_reason).toBe('stop');
    expect(soloSampled.choices[0].message.content.startsWith(stopped.choices[0].message.content ?? '')).toBe(true);
    await idle(engineOf());
  });

  it('32 concurrent clients get what their requests get alone in-process, as the CPU backend promises', async () => {
    const requests = Array.from({ length: 32 }, (_, i) => ({
      messages: question(100 + i),
      max_tokens: 8 + (i % 5),
      logprobs: true,
      top_logprobs: 2,
      ...(i % 2 === 1 ? { temperature: 0.7, seed: i } : {}),
    }));
    const solo: ScoredAnswer[] = [];
    for (const req of requests) solo.push(scored(await engineOf().chat.completions.create(req)));
    const before = engineOf().stats().scheduler.batchSeqs.max;
    const served = await Promise.all(
      requests.map(async (req, i): Promise<ScoredAnswer> => {
        if (i % 4 !== 0) return scored((await client.chat.completions.create({ model: MODEL, ...req })) as unknown as ChatCompletion);
        const stream = await client.chat.completions.create({ model: MODEL, ...req, stream: true });
        const logprobs: ScoredAnswer['logprobs'][number][] = [];
        for await (const chunk of stream) {
          logprobs.push(...(chunk.choices[0]?.logprobs?.content ?? []));
          const info = (chunk as { tessera?: ChatCompletion['tessera'] }).tessera;
          if (info) return { tokenIds: info.tokenIds, logprobs };
        }
        throw new Error('the stream ended without its final chunk');
      }),
    );
    // Batched on the CPU backend, a request's log probabilities stay within the bound of its own, and a
    // greedy answer changes only at a near-tie (test/helpers/batch-agreement.ts).
    const checks = served.map((s, i) => batchAgreement(solo[i]!, s, i % 2 === 1));
    expect(checks.flatMap((c, i) => c.problems.map((p) => `request ${i}: ${p}`))).toEqual([]);
    // they were batched, not served one by one
    expect(Math.max(before, engineOf().stats().scheduler.batchSeqs.max)).toBeGreaterThan(1);
    await idle(engineOf());
  });

  it('a client that aborts mid-stream cancels its request and frees its KV blocks', async () => {
    const abort = new AbortController();
    const stream = await client.chat.completions.create(
      { model: MODEL, messages: question(3), max_tokens: 2000, stream: true },
      { signal: abort.signal },
    );
    let chunks = 0;
    let heldBlocks = 0;
    try {
      for await (const _ of stream) {
        if (++chunks === 4) {
          heldBlocks = engineOf().stats().kv.numBlocks - engineOf().stats().kv.numFreeBlocks;
          abort.abort();
        }
      }
    } catch (e) {
      expect(String(e)).toMatch(/abort/i); // the openai client may end the stream quietly or throw
    }
    expect(heldBlocks).toBeGreaterThan(0);
    expect(chunks).toBeLessThan(100);
    await idle(engineOf());
    const metrics = parsePrometheusTextFormat(await (await fetch(`${server.url}/metrics`)).text());
    const failures = metrics.find((m) => m.name === 'tessera:request_failures_total');
    expect(failures?.metrics.find((m) => m.labels?.code === 'ABORTED')).toBeDefined();
  });

  it('answers each error with its status in OpenAI shape', async () => {
    const error = async (p: Promise<unknown>) => {
      try {
        await p;
      } catch (e) {
        if (e instanceof OpenAI.APIError) return e;
        throw e;
      }
      throw new Error('the request succeeded');
    };
    const bad = await error(client.chat.completions.create({ model: MODEL, messages: question(1), temperature: -1 }));
    expect(bad).toMatchObject({ status: 400, param: 'temperature', type: 'invalid_request_error', code: 'invalid_request' });
    const long = await error(client.chat.completions.create({ model: MODEL, messages: question(1), max_tokens: 100_000 }));
    expect(long).toMatchObject({ status: 400, code: 'context_length_exceeded' });
    const noModel = await error(client.chat.completions.create({ model: 'gpt-4o', messages: question(1) }));
    expect(noModel).toMatchObject({ status: 404, code: 'model_not_found' });
    expect(noModel.message).toContain(MODEL);
    const wrongKey = new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'nope', maxRetries: 0 });
    expect(await error(wrongKey.chat.completions.create({ model: MODEL, messages: question(1) }))).toMatchObject({
      status: 401,
      code: 'invalid_api_key',
    });
    expect(await error(wrongKey.models.list())).toMatchObject({ status: 401 });

    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json', ...headers },
        body,
      });
    const expectError = async (r: Response, status: number, code: string) => {
      expect(r.status).toBe(status);
      const body = (await r.json()) as { error: { code: string; message: string; type: string } };
      expect(body.error.code).toBe(code);
      expect(body.error.message.length).toBeGreaterThan(20);
      return r;
    };
    await expectError(await post('{"messages": ['), 400, 'malformed_body');
    await expectError(await post('[1, 2]'), 400, 'malformed_body');
    await expectError(await post('{}', { 'content-type': 'text/plain' }), 415, 'unsupported_content_type');
    await expectError(await post('{}', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'unsupported_content_type');
    await expectError(await post(JSON.stringify({ messages: question(1), pad: 'x'.repeat(1 << 20) })), 413, 'body_too_large');
    await expectError(await fetch(`${server.url}/v1/nothing`, { headers: { authorization: `Bearer ${KEY}` } }), 404, 'route_not_found');
    await expectError(
      await post(
        JSON.stringify({
          messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }] }],
        }),
      ),
      400,
      'image_decode',
    );

    // the queue: one slot, no waiting place; the second request at once is refused with Retry-After
    const small = await startServer({ engine: engineOf(), ownsEngine: false, modelName: MODEL, port: 0, maxConcurrency: 1, maxQueue: 0 });
    try {
      const smallClient = new OpenAI({ baseURL: `${small.url}/v1`, apiKey: 'unused', maxRetries: 0 });
      const first = smallClient.chat.completions.create({ model: MODEL, messages: question(4), max_tokens: 30 });
      await new Promise((r) => setTimeout(r, 20));
      const full = await error(smallClient.chat.completions.create({ model: MODEL, messages: question(5), max_tokens: 4 }));
      expect(full).toMatchObject({ status: 429, code: 'rate_limit_exceeded' });
      expect(Number(full.headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect((await first).choices[0].finish_reason).toBe('length');
    } finally {
      await small.close();
    }

    // 503 while the model loads, with Retry-After; served once it is ready
    let ready!: (e: Engine) => void;
    const loading = await startServer({ engine: new Promise<Engine>((r) => (ready = r)), ownsEngine: false, modelName: MODEL, port: 0 });
    try {
      const health = await fetch(`${loading.url}/health`);
      await expectError(health, 503, 'engine_unavailable');
      expect(Number(health.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      const loadingClient = new OpenAI({ baseURL: `${loading.url}/v1`, apiKey: 'unused', maxRetries: 0 });
      expect(await error(loadingClient.chat.completions.create({ model: MODEL, messages: question(1) }))).toMatchObject({ status: 503 });
      ready(engineOf());
      await new Promise((r) => setTimeout(r, 0));
      expect((await fetch(`${loading.url}/health`)).status).toBe(200);
      expect(
        (await loadingClient.chat.completions.create({ model: MODEL, messages: question(1), max_tokens: 2 })).usage?.completion_tokens,
      ).toBe(2);
    } finally {
      await loading.close();
    }
    await idle(engineOf());
  });

  it('/v1/models and /health', async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual([MODEL]);
    const health = await fetch(`${server.url}/health`);
    expect(health.status).toBe(200);
  });

  it('/metrics is Prometheus text with vLLM names, counting what was served', async () => {
    const before = parsePrometheusTextFormat(await (await fetch(`${server.url}/metrics`)).text());
    const value = (families: typeof before, name: string) => Number(families.find((m) => m.name === name)?.metrics[0]?.value ?? Number.NaN);
    const r = await client.chat.completions.create({ model: MODEL, messages: question(6), max_tokens: 5 });
    const after = parsePrometheusTextFormat(await (await fetch(`${server.url}/metrics`)).text());
    expect(value(after, 'vllm:prompt_tokens_total') - value(before, 'vllm:prompt_tokens_total')).toBe(r.usage?.prompt_tokens);
    expect(value(after, 'vllm:generation_tokens_total') - value(before, 'vllm:generation_tokens_total')).toBe(5);
    for (const name of [
      'vllm:num_requests_running',
      'vllm:num_requests_waiting',
      'vllm:kv_cache_usage_perc',
      'tessera:kv_blocks_free',
      'tessera:server_queue_length',
      'tessera:encoder_cache_referenced_entries',
      'tessera:gpu_memory_bytes',
      'process_resident_memory_bytes',
      'nodejs_heap_size_used_bytes',
      'nodejs_external_memory_bytes',
      'tessera:encoder_memory_cache_bytes',
    ]) {
      expect(after.find((m) => m.name === name)?.type, name).toBe('GAUGE');
    }
    expect(value(after, 'tessera:kv_blocks_free')).toBe(engineOf().stats().kv.numBlocks);
    expect(value(after, 'tessera:encoder_cache_referenced_entries')).toBe(0);
    expect(value(after, 'tessera:gpu_memory_bytes')).toBe(0); // the CPU backend
    expect(value(after, 'process_resident_memory_bytes')).toBeGreaterThan(50 * 2 ** 20);
    expect(value(after, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(value(after, 'nodejs_heap_size_used_bytes')).toBeLessThan(value(after, 'process_resident_memory_bytes'));
    expect(value(after, 'tessera:encoder_memory_cache_bytes')).toBe(engineOf().stats().encoder.memoryBytes);
    const ttft = after.find((m) => m.name === 'vllm:time_to_first_token_seconds');
    expect(ttft?.type).toBe('HISTOGRAM');
    const count = (f: typeof ttft) => Number(f?.metrics[0]?.buckets?.['+Inf'] ?? 0);
    expect(count(ttft) - count(before.find((m) => m.name === 'vllm:time_to_first_token_seconds'))).toBe(1);
    const itl = after.find((m) => m.name === 'vllm:inter_token_latency_seconds');
    expect(count(itl) - count(before.find((m) => m.name === 'vllm:inter_token_latency_seconds'))).toBe(4);
    const tiers = after.find((m) => m.name === 'tessera:encoder_cache_hits_total')?.metrics.map((m) => m.labels?.tier);
    expect(tiers).toEqual(['memory', 'inflight', 'persistent']);
  });

  it('curl sees server-sent events framed as OpenAI frames them', async () => {
    const { stdout } = await promisify(execFile)('curl', [
      '-sN',
      '-i',
      `${server.url}/v1/chat/completions`,
      '-H',
      `Authorization: Bearer ${KEY}`,
      '-H',
      'Content-Type: application/json',
      '-d',
      JSON.stringify({ model: MODEL, messages: question(7), max_tokens: 4, stream: true, stream_options: { include_usage: true } }),
    ]);
    const [head, body] = stdout.split('\r\n\r\n');
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    expect(head).toMatch(/content-type: text\/event-stream/i);
    const events = body.split('\n\n');
    expect(events.pop()).toBe('');
    expect(events.at(-1)).toBe('data: [DONE]');
    const chunks = events.slice(0, -1).map((e) => {
      expect(e.startsWith('data: ')).toBe(true);
      expect(e.includes('\n')).toBe(false);
      return JSON.parse(e.slice(6)) as { object: string; choices: unknown[]; usage: unknown };
    });
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks.at(-1)?.choices).toEqual([]);
    expect(chunks.at(-1)?.usage).toMatchObject({ completion_tokens: 4 });
  });

  it('survives abuse at the HTTP layer: huge and slow bodies, 1,000 dropped connections', async () => {
    const url = `${server.url}/v1/chat/completions`;
    // a declared 1 GB body is refused from its Content-Length, a chunked one after the limit: little is read
    const declared = await postHugeBody(url, 2 ** 30, { chunked: false, timeoutMs: 10_000, headers: `Authorization: Bearer ${KEY}\r\n` });
    expect(declared.status).toBe(413);
    expect(declared.sentBytes).toBeLessThan(2 ** 30);
    const chunked = await postHugeBody(url, 2 ** 30, { chunked: true, timeoutMs: 10_000, headers: `Authorization: Bearer ${KEY}\r\n` });
    expect(chunked.status).toBe(413);
    expect(chunked.sentBytes).toBeLessThan(2 ** 30);
    // a client that sends half its headers and waits is cut off (headersTimeoutMs 1000)
    const slowHeaders = await openSocket(url);
    slowHeaders.write('POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n');
    const cut = await readUntilClose(slowHeaders, 10_000);
    expect(cut.status).toBe(408);
    expect(cut.ms).toBeLessThan(5000);
    // a body that stops half-way is cut off too (requestTimeoutMs 3000)
    const slowBody = await openSocket(url);
    slowBody.write(
      `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${KEY}\r\nContent-Length: 1000\r\n\r\n{"messages":`,
    );
    const cutBody = await readUntilClose(slowBody, 15_000);
    expect(cutBody.status).toBe(408);
    // 1,000 connections opened and dropped: before a byte, mid-headers, mid-body and mid-answer
    const body = JSON.stringify({ model: MODEL, messages: question(8), max_tokens: 50, stream: true });
    const requestText = `POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nAuthorization: Bearer ${KEY}\r\nContent-Length: ${body.length}\r\n\r\n`;
    for (let round = 0; round < 10; round++) {
      await Promise.all(
        Array.from({ length: 100 }, async (_, i) => {
          const s = await openSocket(url);
          const kind = i % 4;
          if (kind === 1) s.write(requestText.slice(0, 30));
          if (kind === 2) s.write(requestText + body.slice(0, 10));
          if (kind === 3) {
            s.write(requestText + body);
            await new Promise<void>((r) => s.once('data', () => r()));
          }
          s.destroy();
        }),
      );
    }
    // the next request is served, and nothing was left behind
    const r = await client.chat.completions.create({ model: MODEL, messages: question(9), max_tokens: 3 });
    expect(r.usage?.completion_tokens).toBe(3);
    await idle(engineOf());
    const t0 = performance.now();
    let open = Number.POSITIVE_INFINITY;
    while (performance.now() - t0 < 5000) {
      open = await new Promise<number>((res) => server.server.getConnections((_, n) => res(n)));
      if (open <= 1) break; // the client's keep-alive connection
      await new Promise((res) => setTimeout(res, 50));
    }
    expect(open).toBeLessThanOrEqual(1);
  });
});
