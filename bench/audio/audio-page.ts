// Browser side of `npm run bench:audio` (driver: bench/audio/audio.ts). On the Voxtral-layout bench model
// (random weights), encoder in a Web Worker, prefix caching OFF (a repeat prefills its whole prompt: the
// figures isolate what the chunk cache saves, not the KV prefix cache):
//   warm-up  a different 2 s clip (compiles the audio encoder's and the decoder's pipelines)
//   cold     a 30 s MP3 (44.1 kHz stereo): decode + resample (WebCodecs, in the worker), log-mel, encode per
//            chunk, TTFT, decode tok/s
//   again    the same file: its chunk from the cache (0 encoded)
//   grown    a 45 s recording (WAV, 16 kHz), then the same recording grown to 60 s: 1 chunk encoded, not 2

import { createEngine } from '../../src/engine/create-browser';
import type { Engine } from '../../src/engine/engine';
import type { ChatCompletion, EngineStats } from '../../src/engine/types';

declare global {
  interface Window {
    __audioBenchResult?: unknown;
    __audioBenchError?: string;
  }
}

const params = new URLSearchParams(location.search);
const log = (line: string) => console.log(`[bench] ${line}`);

async function clip(name: string): Promise<Uint8Array> {
  return new Uint8Array(await (await fetch(`/bench-audio-clips/${name}`)).arrayBuffer());
}

function ask(engine: Engine, audio: Uint8Array, maxTokens: number): Promise<ChatCompletion> {
  return engine.chat.completions.create({
    messages: [
      {
        role: 'user',
        content: [
          { type: 'audio', audio },
          { type: 'text', text: 'What is said in this recording?' },
        ],
      },
    ],
    max_tokens: maxTokens,
  });
}

function summary(r: ChatCompletion, before: EngineStats, after: EngineStats) {
  const t = r.tessera.timings;
  const a = r.tessera.audios[0];
  const encoded = after.encoder.encodes - before.encoder.encodes;
  return {
    promptTokens: r.usage.prompt_tokens,
    audioTokens: a.tokens,
    seconds: a.duration,
    format: a.format,
    decoder: a.decoder,
    sampleRate: a.sampleRate,
    channels: a.channels,
    chunks: a.chunks.length,
    chunksEncoded: encoded,
    chunkSources: a.chunks.map((c) => c.source),
    decodeMs: a.decodeMs,
    featuresMs: a.featuresMs,
    processMs: t.processMs,
    encodeMs: t.encodeMs,
    encodeMsPerChunk: encoded > 0 ? t.encodeMs / encoded : 0,
    prefillMs: t.prefillMs,
    ttftMs: t.ttftMs,
    decodeTokensPerSecond: t.decodeTokensPerSecond,
    completionTokens: r.usage.completion_tokens,
    /** Generated token ids (greedy), compared with transformers.js's by the driver. */
    tokenIds: r.tessera.tokenIds,
  };
}

async function main() {
  const tokens = Number(params.get('tokens') ?? 32);
  const t0 = performance.now();
  const engine = await createEngine({
    model: `/${params.get('model')}/`,
    device: 'webgpu',
    encoder: { poolSize: 1 },
    // Off by default, so a repeat prefills its whole prompt and the figures isolate the chunk cache;
    // ?prefix=1 measures the engine's default (the repeat's prompt comes from the KV prefix cache too).
    prefixCaching: params.get('prefix') === '1',
    kvCacheTokens: 2048,
  });
  log(`engine ready in ${(performance.now() - t0).toFixed(0)} ms`);
  const [mp3, warm, first30, first45, grown60] = await Promise.all([
    clip('clip-30s.mp3'),
    clip('warm-2s.wav'),
    clip('rec-30s.wav'),
    clip('rec-quiet-45s.wav'),
    clip('rec-quiet-60s.wav'),
  ]);
  await ask(engine, warm, 2);
  log('warm-up done');
  const run = async (phase: string, audio: Uint8Array) => {
    const before = engine.stats();
    const r = await ask(engine, audio, tokens);
    const s = summary(r, before, engine.stats());
    log(`${phase}: ${JSON.stringify(s)}`);
    return s;
  };
  const cold = await run('cold', mp3);
  const again = await run('again', mp3);
  const first = await run('recording-30s', first30);
  await run('recording-45s', first45);
  const grown = await run('recording-grown-60s', grown60);
  engine.destroy();
  return { tokens, clipBytes: mp3.length, cold, again, recording: { first, grown } };
}

main().then(
  (r) => (window.__audioBenchResult = r),
  (e: unknown) => {
    console.error(e);
    window.__audioBenchError = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  },
);
