// Browser side of `npm run bench:video` (driver: bench/video/video.ts). On the SmolVLM2-256M-shaped bench
// model (random weights), encoder in a Web Worker, prefix caching OFF (so a repeat prefills its whole prompt:
// the figures isolate what the video caches save, not the KV prefix cache):
//   warm-up  a different 2 s clip (compiles the vision and decoder pipelines)
//   cold     the 10 s clip: demux + decode (in the worker), encode per frame, TTFT, decode tok/s
//   again    the same clip: answered from the whole-clip index (0 decoded, 0 encoded)
//   evs      q = 0.5 and q = 0 on the cached frames: tokens and TTFT
// Phase marks ("[bench] phase <name> start|end <Date.now()>") let the driver relate its memory samples.

import { createEngine } from '../../src/engine/create-browser';
import type { Engine } from '../../src/engine/engine';
import type { ChatCompletion, EngineStats } from '../../src/engine/types';

declare global {
  interface Window {
    __videoBenchResult?: unknown;
    __videoBenchError?: string;
  }
}

const params = new URLSearchParams(location.search);
const log = (line: string) => console.log(`[bench] ${line}`);
const mark = (phase: string, edge: 'start' | 'end') => log(`phase ${phase} ${edge} ${Date.now()}`);

async function clip(name: string): Promise<Uint8Array> {
  return new Uint8Array(await (await fetch(`/bench-video-clips/${name}`)).arrayBuffer());
}

function ask(engine: Engine, video: Uint8Array, maxTokens: number, q = 0): Promise<ChatCompletion> {
  return engine.chat.completions.create({
    messages: [
      {
        role: 'user',
        content: [
          { type: 'video', video },
          { type: 'text', text: 'Describe this video.' },
        ],
      },
    ],
    max_tokens: maxTokens,
    ...(q ? { tessera: { videoPruning: q } } : {}),
  });
}

function summary(r: ChatCompletion, before: EngineStats, after: EngineStats) {
  const t = r.tessera.timings;
  const v = r.tessera.videos[0];
  return {
    promptTokens: r.usage.prompt_tokens,
    videoTokens: v.tokens,
    unprunedVideoTokens: v.unprunedTokens,
    frames: v.frames.length,
    source: v.source,
    framesDecoded: after.encoder.video.framesDecoded - before.encoder.video.framesDecoded,
    framesEncoded: after.encoder.encodes - before.encoder.encodes,
    demuxMs: after.encoder.video.demuxMs - before.encoder.video.demuxMs,
    decodeMs: after.encoder.video.decodeMs - before.encoder.video.decodeMs,
    processMs: t.processMs,
    encodeMs: t.encodeMs,
    prefillMs: t.prefillMs,
    ttftMs: t.ttftMs,
    decodeTokensPerSecond: t.decodeTokensPerSecond,
    completionTokens: r.usage.completion_tokens,
  };
}

async function main() {
  const tokens = Number(params.get('tokens') ?? 32);
  const t0 = performance.now();
  const engine = await createEngine({
    model: `/${params.get('model')}/`,
    device: 'webgpu',
    encoder: { poolSize: 1 },
    prefixCaching: false,
  });
  log(`engine ready in ${(performance.now() - t0).toFixed(0)} ms`);
  const [main10, warm] = await Promise.all([clip('clip-10s.mp4'), clip('warm-2s.mp4')]);
  mark('warmup', 'start');
  await ask(engine, warm, 2);
  mark('warmup', 'end');
  const run = async (phase: string, q: number) => {
    const before = engine.stats();
    mark(phase, 'start');
    const r = await ask(engine, main10, tokens, q);
    mark(phase, 'end');
    const s = summary(r, before, engine.stats());
    log(`${phase}: ${JSON.stringify(s)}`);
    return s;
  };
  const cold = await run('cold', 0);
  const again = await run('again', 0);
  const evs = await run('evs-0.5', 0.5);
  const q0 = await run('evs-0', 0);
  engine.destroy();
  return { tokens, clipBytes: main10.length, cold, again, evs: { q05: evs, q0 } };
}

main().then(
  (r) => (window.__videoBenchResult = r),
  (e: unknown) => {
    console.error(e);
    window.__videoBenchError = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  },
);
