// `npm run soak -- --http`: `tessera serve` (the built command, its own process) under 64 concurrent openai
// clients for 2,000 requests per backend: images, text and (on WebGPU, from a Voxtral server beside it)
// audio; greedy and seeded; streamed and not; and a share that is malformed (not JSON, bad parameters, bad
// media), cancelled mid-stream, or whose connection is dropped without reading. Every good answer is checked
// against the same request alone (sent first, one at a time): equal tokens on WebGPU, and on the CPU backend
// what its batching promises (test/helpers/batch-agreement.ts). Every bad one must get its HTTP status and
// error code. The server's own figures (/metrics: RSS, GPU memory, KV blocks in use, encoder-cache
// references) are read idle before the load and after each of its phases: flat from the first phase's end
// (which grew the KV pool and the caches to this load) to the last's is the goal. Prints the figures and one JSON
// line last; exit code 1 when an outcome or a figure is wrong.
//
//   npm run soak -- --http [--requests 2000] [--concurrency 64] [--devices webgpu,cpu] [--phases 4]
//                          [--model public/models/smolvlm-tiny] [--audio-model public/models/voxtral-tiny]

import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import OpenAI from 'openai';
import { testClip, wavBytes } from '../../test/helpers/audio-clips';
import { batchAgreement, type ScoredAnswer } from '../../test/helpers/batch-agreement';
import { mixImages } from '../../test/helpers/request-mix';
import { startServeProcess, type ServeProcess } from '../../test/helpers/serve-process';

const root = resolve(import.meta.dirname, '../..');
const { values: args } = parseArgs({
  options: {
    http: { type: 'boolean' },
    requests: { type: 'string', default: '2000' },
    concurrency: { type: 'string', default: '64' },
    devices: { type: 'string', default: 'webgpu,cpu' },
    model: { type: 'string', default: resolve(root, 'public/models/smolvlm-tiny') },
    'audio-model': { type: 'string', default: resolve(root, 'public/models/voxtral-tiny') },
    'rss-slack-mb': { type: 'string', default: '96' },
    phases: { type: 'string', default: '4' },
  },
});
const numRequests = Number(args.requests);
const concurrency = Number(args.concurrency);
const devices = args.devices!.split(',') as Array<'webgpu' | 'cpu'>;
const phaseSize = Math.ceil(numRequests / Number(args.phases));
const MODEL = 'tiny';
const TEMPLATES = 8;

/** What a request is, and so what must come back. */
const GOOD = ['image', 'image-sampled', 'image-stream', 'text', 'audio', 'audio-stream'] as const;
const BAD = ['not-json', 'bad-temperature', 'bad-image', 'bad-audio'] as const;
const GONE = ['cancel-mid', 'disconnect'] as const;
type Kind = (typeof GOOD)[number] | (typeof BAD)[number] | (typeof GONE)[number];
/** HTTP status and error code of each bad kind. */
const EXPECTED: Record<(typeof BAD)[number], { status: number; code: string }> = {
  'not-json': { status: 400, code: 'malformed_body' },
  'bad-temperature': { status: 400, code: 'invalid_request' },
  'bad-image': { status: 400, code: 'image_decode' },
  'bad-audio': { status: 400, code: 'audio_decode' },
};

interface Item {
  index: number;
  kind: Kind;
  /** Which of the TEMPLATES variants (image, prompt, seed, clip). */
  variant: number;
}

interface Outcome {
  item: Item;
  ok: boolean;
  problem?: string;
  ms: number;
}

const percentile = (sorted: number[], q: number) =>
  sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] : 0;
const mb = (b: number) => (b / 2 ** 20).toFixed(1);
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

const images = (await mixImages(TEMPLATES)).map((b) => `data:image/png;base64,${b64(b)}`);
const clips = Array.from({ length: TEMPLATES }, (_, i) =>
  b64(
    wavBytes(
      testClip(1 + (i % 3), 16000).map((v) => v * (0.5 + i / 16)),
      16000,
    ),
  ),
);

/** The kinds one server takes: audio kinds go to the Voxtral server, image kinds to the image one. */
const serverKinds = (audio: boolean): Kind[] =>
  audio
    ? ['audio', 'audio-stream', 'text', 'cancel-mid', 'disconnect', 'not-json', 'bad-temperature', 'bad-audio']
    : ['image', 'image-sampled', 'image-stream', 'text', 'image', 'cancel-mid', 'disconnect', 'not-json', 'bad-temperature', 'bad-image'];

function body(item: Item, audio: boolean): Record<string, unknown> {
  const media = audio
    ? { type: 'input_audio', input_audio: { data: clips[item.variant], format: 'wav' } }
    : { type: 'image_url', image_url: { url: images[item.variant] } };
  const ask = (parts: unknown[], extra: Record<string, unknown> = {}) => ({
    model: MODEL,
    messages: [{ role: 'user', content: [...parts, { type: 'text', text: 'What is this?' }] }],
    max_tokens: 4,
    logprobs: true,
    top_logprobs: 2,
    ...extra,
  });
  switch (item.kind) {
    case 'image':
    case 'audio':
      return ask([media]);
    case 'image-sampled':
      return ask([media], { temperature: 0.8, top_p: 0.9, seed: 100 + item.variant });
    case 'image-stream':
    case 'audio-stream':
      return ask([media], { stream: true });
    case 'text':
      return { ...ask([]), messages: [{ role: 'user', content: `Say something about the number ${item.variant}.` }] };
    case 'cancel-mid':
    case 'disconnect':
      return ask([media], { stream: true, max_tokens: 40 });
    case 'bad-temperature':
      return ask([media], { temperature: -1 });
    case 'bad-image':
      return ask([{ type: 'image_url', image_url: { url: `data:image/png;base64,${b64(new TextEncoder().encode('not an image'))}` } }]);
    case 'bad-audio':
      return ask([{ type: 'input_audio', input_audio: { data: b64(new TextEncoder().encode('not audio at all')), format: 'wav' } }]);
    case 'not-json':
      return {};
  }
}

/** A good answer: its tokens and log probabilities (streamed or not). */
async function answer(client: OpenAI, req: Record<string, unknown>): Promise<ScoredAnswer> {
  if (!req.stream) {
    const r = (await client.chat.completions.create(req as never)) as unknown as {
      tessera: { tokenIds: number[] };
      choices: Array<{ logprobs?: { content: ScoredAnswer['logprobs'] | null } | null }>;
    };
    return { tokenIds: r.tessera.tokenIds, logprobs: r.choices[0]?.logprobs?.content ?? [] };
  }
  const stream = await client.chat.completions.create(req as never);
  const logprobs: ScoredAnswer['logprobs'][number][] = [];
  for await (const chunk of stream as unknown as AsyncIterable<{
    choices: Array<{ logprobs?: { content: ScoredAnswer['logprobs'] | null } | null }>;
    tessera?: { tokenIds: number[] };
  }>) {
    logprobs.push(...(chunk.choices[0]?.logprobs?.content ?? []));
    if (chunk.tessera) return { tokenIds: chunk.tessera.tokenIds, logprobs };
  }
  throw new Error('the stream ended without its final chunk');
}

/** POST `text` as the body and drop the connection once the response has begun (a client that went away). */
function disconnect(url: URL, text: string): Promise<void> {
  return new Promise((res, rej) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      socket.write(
        `POST /v1/chat/completions HTTP/1.1\r\nHost: ${url.host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(text)}\r\n\r\n${text}`,
      );
    });
    socket.once('data', () => {
      socket.destroy();
      res();
    });
    socket.once('error', rej);
    socket.setTimeout(120_000, () => {
      socket.destroy();
      rej(new Error('no response within 120 s'));
    });
  });
}

interface Server {
  label: string;
  audio: boolean;
  process: ServeProcess;
  client: OpenAI;
  reference: Map<string, ScoredAnswer>;
  /** The model's vocabulary: a step reads back logits of this many floats per row. */
  vocabSize: number;
}

/** The language model's vocabulary size from a checkpoint's config.json (composite: its text_config's). */
function vocabSizeOf(model: string): number {
  const config = JSON.parse(readFileSync(resolve(model, 'config.json'), 'utf8')) as {
    vocab_size?: number;
    text_config?: { vocab_size?: number };
  };
  const v = config.text_config?.vocab_size ?? config.vocab_size;
  if (!v) throw new Error(`${model}/config.json names no vocab_size`);
  return v;
}

const refKey = (item: Item) => `${item.kind.replace('-stream', '')}:${item.variant}`;

async function runItem(server: Server, item: Item, exact: boolean): Promise<Outcome> {
  const t0 = performance.now();
  const req = body(item, server.audio);
  const done = (problem?: string): Outcome => ({ item, ok: !problem, problem, ms: performance.now() - t0 });
  try {
    switch (item.kind) {
      case 'not-json':
      case 'bad-temperature':
      case 'bad-image':
      case 'bad-audio': {
        const r = await fetch(`${server.process.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
          body: item.kind === 'not-json' ? '{"model": "tiny", "messages": [' : JSON.stringify(req),
        });
        const json = (await r.json()) as { error?: { code?: string } };
        const want = EXPECTED[item.kind];
        return done(
          r.status === want.status && json.error?.code === want.code
            ? undefined
            : `got ${r.status} ${json.error?.code}, want ${want.status} ${want.code}`,
        );
      }
      case 'cancel-mid': {
        const abort = new AbortController();
        const stream = await server.client.chat.completions.create(req as never, { signal: abort.signal });
        try {
          for await (const _ of stream as unknown as AsyncIterable<unknown>) abort.abort();
        } catch (e) {
          if (!abort.signal.aborted) throw e;
        }
        return done();
      }
      case 'disconnect':
        await disconnect(new URL(server.process.url), JSON.stringify(req));
        return done();
      default: {
        const got = await answer(server.client, req);
        const alone = server.reference.get(refKey(item))!;
        if (exact)
          return done(
            got.tokenIds.join() === alone.tokenIds.join() ? undefined : `tokens ${got.tokenIds} differ from alone ${alone.tokenIds}`,
          );
        const a = batchAgreement(alone, got, item.kind === 'image-sampled');
        return done(a.problems.length ? a.problems.join('; ') : undefined);
      }
    }
  } catch (e) {
    return done(`${(e as Error).name}: ${(e as Error).message}`);
  }
}

/** The server's gauges from /metrics. */
async function figures(url: string): Promise<Record<string, number>> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const read = (name: string) => Number(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'm').exec(text)?.[1] ?? Number.NaN);
  const areas = Object.fromEntries(
    [...text.matchAll(/^tessera:gpu_memory_area_bytes\{[^}]*area="([^"]+)"[^}]*\} ([0-9.e+-]+)$/gm)].map((m) => [
      `gpu:${m[1]}`,
      Number(m[2]),
    ]),
  );
  const kvBytes = areas['gpu:kv-cache'] ?? 0;
  return {
    rssBytes: read('process_resident_memory_bytes'),
    heapBytes: read('nodejs_heap_size_used_bytes'),
    externalBytes: read('nodejs_external_memory_bytes'),
    encoderCacheBytes: read('tessera:encoder_memory_cache_bytes'),
    gpuBytes: read('tessera:gpu_memory_bytes'),
    gpuKvCacheBytes: kvBytes,
    kvBlocksUsed: read('tessera:kv_blocks_used'),
    cacheRefs: read('tessera:encoder_cache_referenced_entries'),
    ...areas,
    running: read('vllm:num_requests_running'),
    waiting: read('vllm:num_requests_waiting'),
  };
}

/** The figures once nothing is in flight (a dropped connection is noticed a moment after it closes). */
async function idleFigures(url: string): Promise<Record<string, number>> {
  for (let i = 0; ; i++) {
    const f = await figures(url);
    if ((f.running === 0 && f.waiting === 0 && f.kvBlocksUsed === 0 && f.cacheRefs === 0) || i >= 300) return f;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function soak(device: 'webgpu' | 'cpu') {
  const t0 = performance.now();
  const specs = [{ audio: false, model: args.model! }, ...(device === 'webgpu' ? [{ audio: true, model: args['audio-model']! }] : [])];
  const servers: Server[] = [];
  try {
    for (const s of specs) {
      const process = await startServeProcess(
        ['--model', s.model, '--served-model-name', MODEL, '--port', '0', '--device', device, '--max-concurrency', String(concurrency)],
        300_000,
      );
      servers.push({
        label: `${s.audio ? 'audio' : 'image'} server (${s.model.split('/').at(-1)})`,
        audio: s.audio,
        process,
        client: new OpenAI({ baseURL: `${process.url}/v1`, apiKey: 'none', maxRetries: 0, timeout: 600_000 }),
        reference: new Map(),
        vocabSize: vocabSizeOf(s.model),
      });
    }
    // Items: the image server takes three in four (it has more kinds), the audio server the rest.
    const items: Array<{ server: Server; item: Item }> = [];
    const counters = servers.map(() => 0);
    for (let index = 0; index < numRequests; index++) {
      const s = servers.length > 1 && index % 4 === 3 ? 1 : 0;
      const kinds = serverKinds(servers[s]!.audio);
      const n = counters[s]!++;
      items.push({
        server: servers[s]!,
        item: { index, kind: kinds[n % kinds.length]!, variant: Math.floor(n / kinds.length) % TEMPLATES },
      });
    }
    // Every good request alone first: the answers to compare with.
    for (const { server, item } of items) {
      if (!(GOOD as readonly string[]).includes(item.kind) || server.reference.has(refKey(item))) continue;
      server.reference.set(refKey(item), await answer(server.client, { ...body(item, server.audio), stream: false }));
    }
    const beforeLoad = await Promise.all(servers.map((s) => idleFigures(s.process.url)));
    console.log(
      `[soak:http] ${device}: ${servers.map((s) => `${s.label} at ${s.process.url}, ${s.reference.size} requests alone`).join('; ')}`,
    );
    // In phases, the servers' figures read idle after each: the first phase grows the KV pool and the caches
    // to what this load needs; flat is measured from its end to the last phase's.
    const outcomes: Outcome[] = [];
    const afterPhase: Array<Array<Record<string, number>>> = [];
    for (let from = 0; from < items.length; from += phaseSize) {
      const phase = items.slice(from, from + phaseSize);
      let next = 0;
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (next < phase.length) {
            const { server, item } = phase[next++]!;
            outcomes.push(await runItem(server, item, device === 'webgpu'));
          }
        }),
      );
      afterPhase.push(await Promise.all(servers.map((s) => idleFigures(s.process.url))));
      console.log(`[soak:http] ${device}: ${outcomes.length} of ${items.length} done, ${outcomes.filter((o) => !o.ok).length} wrong`);
    }
    const start = afterPhase[0]!;
    const end = afterPhase.at(-1)!;
    const byKind: Record<string, { ok: number; wrong: number }> = {};
    for (const o of outcomes) {
      byKind[o.item.kind] ??= { ok: 0, wrong: 0 };
      byKind[o.item.kind]![o.ok ? 'ok' : 'wrong']++;
    }
    const wrong = outcomes.filter((o) => !o.ok);
    const good = outcomes
      .filter((o) => (GOOD as readonly string[]).includes(o.item.kind))
      .map((o) => o.ms)
      .sort((a, b) => a - b);
    const rssSlack = Number(args['rss-slack-mb']) * 2 ** 20;
    const withoutHighWater = (f: Record<string, number>) => f.gpuBytes! - f.gpuKvCacheBytes! - (f['gpu:readback'] ?? 0);
    // Two reads of logits for every request the server admits at once, each row the vocabulary's floats.
    const readbackBound = (s: Server) => 2 * concurrency * s.vocabSize * 4;
    const flat = servers.map((_, i) => ({
      kv: start[i]!.kvBlocksUsed === 0 && end[i]!.kvBlocksUsed === 0,
      cacheRefs: end[i]!.cacheRefs === 0,
      // The KV pool grows to the largest load it has met (up to the kv-cache-tokens limit), and so does the
      // readback staging (the largest read of logits, rows x vocabulary, times the reads in flight); every
      // other GPU area (weights, step plans per batch shape, the encoder's) must stay within 1 MiB.
      gpu: withoutHighWater(end[i]!) - withoutHighWater(start[i]!) <= 2 ** 20,
      readback: (end[i]!['gpu:readback'] ?? 0) <= readbackBound(servers[i]!),
      rss: end[i]!.rssBytes - start[i]!.rssBytes <= rssSlack,
    }));
    console.log(`\n${device}: ${outcomes.length} requests in ${((performance.now() - t0) / 1000).toFixed(0)} s, ${concurrency} at once`);
    for (const [k, c] of Object.entries(byKind))
      console.log(`  ${k.padEnd(16)} ${String(c.ok).padStart(5)} as expected ${String(c.wrong).padStart(4)} wrong`);
    for (const w of wrong.slice(0, 10)) console.log(`  #${w.item.index} ${w.item.kind}: ${w.problem}`);
    servers.forEach((s, i) => {
      const row = (f: Record<string, number>) =>
        `RSS ${mb(f.rssBytes!)} MB (JS heap ${mb(f.heapBytes!)}, external ${mb(f.externalBytes!)}, encoder cache ${mb(f.encoderCacheBytes!)}), GPU ${mb(f.gpuBytes!)} MB (KV pool ${mb(f.gpuKvCacheBytes!)}), KV blocks in use ${f.kvBlocksUsed}, cache references ${f.cacheRefs}`;
      console.log(
        `  ${s.label}\n    before the load:    ${row(beforeLoad[i]!)}\n    after phase 1:      ${row(start[i]!)}\n` +
          `    after phase ${afterPhase.length}:      ${row(end[i]!)}\n    flat (phase 1 to ${afterPhase.length}): ${JSON.stringify(flat[i])}\n` +
          `    by phase (MB):      RSS ${afterPhase.map((p) => mb(p[i]!.rssBytes!)).join(' ')}; JS heap ${afterPhase.map((p) => mb(p[i]!.heapBytes!)).join(' ')}; ` +
          `external ${afterPhase.map((p) => mb(p[i]!.externalBytes!)).join(' ')}`,
      );
    });
    servers.forEach((s, i) => {
      const grew = Object.keys(end[i]!)
        .filter((k) => k.startsWith('gpu:') && (end[i]![k] ?? 0) !== (start[i]![k] ?? 0))
        .map((k) => `${k.slice(4)} ${(((end[i]![k] ?? 0) - (start[i]![k] ?? 0)) / 2 ** 20).toFixed(2)} MB`);
      if (grew.length > 0) console.log(`  ${s.label}: GPU areas that changed from phase 1 to ${afterPhase.length}: ${grew.join(', ')}`);
      console.log(
        `  ${s.label}: readback staging by phase (MB) ${afterPhase.map((p) => mb(p[i]!['gpu:readback'] ?? 0)).join(' ')}; ` +
          `bound ${mb(readbackBound(s))} MB (two reads of ${concurrency} rows x ${s.vocabSize} logits)`,
      );
    });
    console.log(`  answered requests: p50 ${percentile(good, 0.5).toFixed(0)} ms, p95 ${percentile(good, 0.95).toFixed(0)} ms`);
    return {
      device,
      requests: outcomes.length,
      concurrency,
      wrong: wrong.length,
      byKind,
      servers: servers.map((s, i) => ({
        server: s.label,
        beforeLoad: beforeLoad[i],
        afterPhases: afterPhase.map((p) => p[i]),
        flat: flat[i],
      })),
      latencyMs: { p50: percentile(good, 0.5), p95: percentile(good, 0.95) },
      seconds: (performance.now() - t0) / 1000,
      ok: wrong.length === 0 && flat.every((f) => Object.values(f).every(Boolean)),
    };
  } finally {
    for (const s of servers) {
      s.process.child.kill('SIGTERM');
      await s.process.exited;
    }
  }
}

const results = [];
for (const device of devices) results.push(await soak(device));
console.log(JSON.stringify({ soak: 'http', results }));
process.exitCode = results.every((r) => r.ok) ? 0 : 1;
