// Browser side of bench:cache and bench:overlap (runner: bench/encoder/encoder.ts). The engine uses encoder
// workers and the IndexedDB cache, on the SmolVLM-256M-shaped bench model (random weights, one 512 tile
// per image). Pipelines are compiled by warm-up requests first, so every timed request measures the
// steady state: cold = encode in the worker, memory = memory tier, indexeddb = persistent tier after a
// reload, and the overlap = request A's decode steps while request B's image encodes in a worker.

import { createEngine } from '../../src/engine/create-browser';
import type { Engine } from '../../src/engine/engine';
import type { ChatCompletionRequest, TesseraInfo } from '../../src/engine/types';

declare global {
  interface Window {
    __encoderBenchResult?: unknown;
    __encoderBenchError?: string;
  }
}

const params = new URLSearchParams(location.search);
const model = `/${params.get('model')}/`;
const log = (line: string) => console.log(`[bench] ${line}`);

async function sample(): Promise<Uint8Array> {
  return new Uint8Array(await (await fetch(params.get('sample')!)).arrayBuffer());
}

/** A deterministic drawn image (distinct per seed) for warm-ups. */
async function drawn(seed: number): Promise<Uint8Array> {
  const c = new OffscreenCanvas(480, 360);
  const g = c.getContext('2d')!;
  g.fillStyle = `hsl(${seed * 53}, 60%, 45%)`;
  g.fillRect(0, 0, c.width, c.height);
  g.fillStyle = '#fff';
  g.fillRect(40 + seed * 10, 60, 120, 90);
  return new Uint8Array(await (await c.convertToBlob({ type: 'image/png' })).arrayBuffer());
}

function ask(image: Uint8Array | undefined, maxTokens: number): ChatCompletionRequest & { stream?: false } {
  const content: ChatCompletionRequest['messages'][0]['content'] = image
    ? [
        { type: 'image', image },
        { type: 'text', text: 'Can you describe this image?' },
      ]
    : [{ type: 'text', text: 'Tell me a story about a lighthouse.' }];
  return { messages: [{ role: 'user', content }], max_tokens: maxTokens };
}

async function timed(engine: Engine, req: ChatCompletionRequest & { stream?: false }, label: string): Promise<TesseraInfo> {
  const t0 = performance.now();
  const r = await engine.chat.completions.create(req);
  log(
    `${label}: TTFT ${r.tessera.timings.ttftMs.toFixed(0)} ms (encode ${r.tessera.timings.encodeMs.toFixed(0)} ms, prefill ${r.tessera.timings.prefillMs.toFixed(0)} ms), total ${(performance.now() - t0).toFixed(0)} ms, media ${r.tessera.media.map((m) => m.source).join(',') || '-'}`,
  );
  return r.tessera;
}

async function open(): Promise<Engine> {
  const t0 = performance.now();
  const perSubmit = params.get('perSubmit');
  const engine = await createEngine({
    model,
    device: 'webgpu',
    encoder: { poolSize: 1, ...(perSubmit !== null ? { dispatchesPerSubmit: Number(perSubmit) } : {}) },
  });
  log(`engine ready in ${(performance.now() - t0).toFixed(0)} ms (encoder: ${engine.stats().encoder.mode})`);
  return engine;
}

function summary(info: TesseraInfo) {
  const t = info.timings;
  return {
    ttftMs: t.ttftMs,
    processMs: t.processMs,
    encodeMs: t.encodeMs,
    prefillMs: t.prefillMs,
    source: info.media[0]?.source ?? 'none',
    promptTokens: info.promptTokens,
  };
}

async function cacheCold() {
  await new Promise<void>((resolve) => {
    const r = indexedDB.deleteDatabase('tessera-encoder-cache');
    r.onsuccess = r.onerror = r.onblocked = () => resolve();
  });
  const engine = await open();
  await timed(engine, ask(undefined, 1), 'warm-up (text: language-model pipelines)');
  await timed(engine, ask(await drawn(1), 1), 'warm-up (drawn image: encoder-worker pipelines)');
  const image = await sample();
  const cold = await timed(engine, ask(image, 1), 'cold (encode in the worker)');
  const memory = await timed(engine, ask(image, 1), 'memory hit');
  const stats = engine.stats();
  engine.destroy();
  return { cold: summary(cold), memory: summary(memory), encodes: stats.encoder.encodes, encodeMsP50: stats.encoder.encodeMs.p50 };
}

async function cacheReload() {
  const engine = await open();
  await timed(engine, ask(undefined, 1), 'warm-up after reload (text: language-model pipelines)');
  const idb = await timed(engine, ask(await sample(), 1), 'IndexedDB hit after reload');
  const stats = engine.stats();
  engine.destroy();
  return { indexeddb: summary(idb), encodes: stats.encoder.encodes, persistentHits: stats.encoder.persistentHits };
}

function percentiles(xs: number[]) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (q: number) => (s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : NaN);
  return { p50: at(0.5), p95: at(0.95), n: s.length };
}

async function overlap() {
  const tokensAlone = Number(params.get('alone') ?? 24);
  const tokensA = Number(params.get('tokens') ?? 256);
  const engine = await open();
  await timed(engine, ask(undefined, 2), 'warm-up (text)');
  await timed(engine, ask(await drawn(2), 1), 'warm-up (drawn image)');
  const alone = await timed(engine, ask(undefined, tokensAlone), `A alone, ${tokensAlone} tokens`);
  // A again, and once it decodes, B with a new image: B's encode runs in the worker during A's decode.
  const image = await sample();
  let bSubmit = 0;
  let bResult: Promise<TesseraInfo> | undefined;
  const stream = await engine.chat.completions.create({ ...ask(undefined, tokensA), stream: true });
  let chunks = 0;
  let aInfo: TesseraInfo | undefined;
  for await (const c of stream) {
    if (c.choices[0].delta.content && ++chunks === 3) {
      bSubmit = performance.now();
      bResult = engine.chat.completions.create(ask(image, 1)).then((r) => r.tessera);
      log('B submitted (new image: cold encode in the worker)');
    }
    if (c.tessera) aInfo = c.tessera;
  }
  const b = await bResult!;
  const windowStart = bSubmit + b.timings.processMs;
  const windowEnd = windowStart + b.timings.encodeMs;
  const during: number[] = [];
  aInfo!.timings.decodeStepEnd.forEach((end, i) => {
    const start = end - aInfo!.timings.decodeStepMs[i];
    if (start >= windowStart && end <= windowEnd) during.push(aInfo!.timings.decodeStepMs[i]);
  });
  log(`B encode window ${(windowEnd - windowStart).toFixed(0)} ms; A decode steps inside it: ${during.length}`);
  const stats = engine.stats();
  engine.destroy();
  return {
    alone: percentiles(alone.timings.decodeStepMs),
    duringEncode: percentiles(during),
    bEncodeMs: b.timings.encodeMs,
    aTokens: aInfo!.tokenIds.length,
    bSource: b.media[0]?.source,
    encoderMode: stats.encoder.mode,
  };
}

async function main() {
  const bench = params.get('bench');
  const phase = params.get('phase');
  if (bench === 'cache' && phase === 'cold') return cacheCold();
  if (bench === 'cache' && phase === 'reload') return cacheReload();
  if (bench === 'overlap') return overlap();
  throw new Error(`unknown bench ${bench} / phase ${phase}`);
}

main().then(
  (r) => (window.__encoderBenchResult = r),
  (e: unknown) => (window.__encoderBenchError = e instanceof Error ? `${e.name}: ${e.message}\n${e.stack}` : String(e)),
);
