// Our engine on the CPU backend, measured the same way in Node (model-cpu.ts: onnxruntime-node) and in the
// browser (model-wasm-page.ts: onnxruntime-web's WebAssembly): requests with byte-distinct copies of the
// image (the first warms onnxruntime's first-run planning and is dropped; the rest are measured, each image
// really encoded, and the figures are medians), then 16 requests at once.
//
//   tile      TesseraInfo.timings.encodeMs per tile of a request whose image misses the encoder cache
//   TTFT      the request's ttftMs (preprocessing and the image encode included)
//   decode    tokens/s after the first token
//   16 at once  16 requests with the same (cached) image and 16 different questions, started together:
//             aggregate decode tokens/s (all tokens after each one's first / the time from the first
//             first-token to the last token) over one request's decode tokens/s. The engine's defaults
//             hold, prefix caching included: the 16 prompts share the image's K/V blocks.

import type { Engine } from '../../src/engine/engine';
import { median } from '../harness/timing';
import { BENCH_PROMPT, benchMessages } from './model-request';
import type { ConcurrentFigures, CpuSide } from './model-result';
import { pngVariant } from './png-variant';

/** Medians of measured requests' figures (tokens: the last one's). */
export function medianSide(runs: readonly CpuSide[]): CpuSide {
  return {
    tileMs: median(runs.map((r) => r.tileMs)),
    ttftMs: median(runs.map((r) => r.ttftMs)),
    decodeTokensPerSecond: median(runs.map((r) => r.decodeTokensPerSecond)),
    tokenIds: runs[runs.length - 1]!.tokenIds,
  };
}

/** Request `i` (its own copy of the image, so it is encoded). */
export async function oursRequest(engine: Engine, png: Uint8Array, i: number, maxNewTokens: number): Promise<CpuSide> {
  const r = await engine.chat.completions.create({ messages: benchMessages(pngVariant(png, `cpu-${i}`)), max_tokens: maxNewTokens });
  const t = r.tessera.timings;
  if (r.tessera.media[0]?.source !== 'encoded') throw new Error(`request ${i}'s image was not encoded (${r.tessera.media[0]?.source})`);
  return {
    tileMs: t.encodeMs / r.tessera.numTiles,
    ttftMs: t.ttftMs,
    decodeTokensPerSecond: t.decodeTokensPerSecond,
    tokenIds: r.tessera.tokenIds,
  };
}

export function describeSide(label: string, s: CpuSide): string {
  return `${label}: tile ${s.tileMs.toFixed(0)} ms, TTFT ${s.ttftMs.toFixed(0)} ms, decode ${s.decodeTokensPerSecond.toFixed(1)} tok/s`;
}

/** 16 requests at once about request 1's image (in the encoder cache by then), over `oneDecode` tok/s. */
export async function oursConcurrent(
  engine: Engine,
  o: { png: Uint8Array; maxNewTokens: number; oneDecode: number; label: string; log: (line: string) => void },
): Promise<ConcurrentFigures> {
  const N = 16;
  const image = pngVariant(o.png, 'cpu-1');
  const hitsBefore = engine.stats().scheduler.prefixHitTokens;
  const t1 = performance.now();
  const done = await Promise.all(
    Array.from({ length: N }, async (_, i) => {
      const messages = benchMessages(image);
      (messages[0]!.content[1] as { text: string }).text = `${BENCH_PROMPT} (${i + 1})`;
      const r = await engine.chat.completions.create({ messages, max_tokens: o.maxNewTokens });
      return { first: t1 + r.tessera.timings.ttftMs, end: performance.now(), after: r.tessera.tokenIds.length - 1 };
    }),
  );
  const tokensAfterFirst = done.reduce((a, d) => a + d.after, 0);
  const end = Math.max(...done.map((d) => d.end));
  const aggregate = (tokensAfterFirst * 1000) / (end - Math.min(...done.map((d) => d.first)));
  const s = engine.stats().scheduler;
  const prefixHitTokens = s.prefixHitTokens - hitsBefore;
  o.log(
    `${o.label}, ${N} at once: ${aggregate.toFixed(1)} tok/s aggregate decode (${((end - t1) / 1000).toFixed(1)} s in all; ` +
      `batches of up to ${s.batchSeqs.max}; ${prefixHitTokens} prompt tokens from the prefix cache)`,
  );
  return { requests: N, aggregateDecodeTokensPerSecond: aggregate, overOne: aggregate / o.oneDecode, prefixHitTokens };
}
