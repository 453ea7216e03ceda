// Measures our engine on the bench request, the same way in Node and in the browser:
//   cold      the first request after load: pipelines compile here (seconds on SwiftShader);
//   warm      `warmReps` more; the one with the median TTFT is reported;
//   cacheHit  the last warm request's exact bytes again: embeddings from the encoder's memory cache;
//   sampled   the same with BENCH_SAMPLING (temperature, top-k, top-p, seed), alternating with greedy
//             ones, SAMPLING_PAIRS of each (cacheHit is the first greedy): the median sampled decode
//             tokens/s over the median greedy one is what sampling costs (the requests differ in nothing
//             else). The seeded requests must all give the same tokens.
// Tessera's encoder cache keys images by their bytes, so cold and warm requests each send a byte-distinct
// copy of the PNG (png-variant.ts: an extra tEXt chunk, same pixels) and the vision encoder really runs;
// each response's TesseraInfo.media says where its embeddings came from, and this checks it.

import type { Engine } from '../../src/engine/engine';
import type { ProfileReport, TesseraInfo } from '../../src/engine/types';
import { BENCH_PROMPT, BENCH_SAMPLING, benchMessages } from './model-request';
import type { ContextCost, OursFigures, RequestFigures, Skipped } from './model-result';
import { pngVariant } from './png-variant';

export interface OursRun {
  env: OursFigures['env'];
  dtype: string;
  adapter: string;
  kernelVariant: string;
  engineOptions: string;
  loadMs: number;
  image: Uint8Array;
  maxNewTokens: number;
  warmReps: number;
  log: (line: string) => void;
}

/** Sampled and greedy cache-hit requests, alternating: decode tokens/s varies run to run on a shared machine. */
const SAMPLING_PAIRS = 3;

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

export class BenchRequestError extends Error {
  override readonly name = 'BenchRequestError';
}

function figures(info: TesseraInfo, totalMs: number): RequestFigures {
  const t = info.timings;
  return {
    processMs: t.processMs,
    encodeMs: t.encodeMs,
    encodeMsPerTile: info.numTiles > 0 ? t.encodeMs / info.numTiles : 0,
    prefillMs: t.prefillMs,
    prefillTokensPerSecond: (info.promptTokens * 1000) / t.prefillMs,
    ttftMs: t.ttftMs,
    decodeTokensPerSecond: t.decodeTokensPerSecond,
    totalMs,
    tokenIds: info.tokenIds,
    mediaSource: info.media.map((m) => m.source).join(',') || 'none',
  };
}

export function describeRequest(r: RequestFigures): string {
  return (
    `encode ${r.encodeMsPerTile.toFixed(0)} ms/tile (${r.mediaSource}), prefill ${r.prefillTokensPerSecond.toFixed(1)} tok/s, ` +
    `TTFT ${r.ttftMs.toFixed(0)} ms, decode ${r.decodeTokensPerSecond.toFixed(2)} tok/s, total ${r.totalMs.toFixed(0)} ms`
  );
}

export async function measureOurs(engine: Engine, run: OursRun): Promise<OursFigures> {
  const request = async (label: string, image: Uint8Array, expectSource: string, sampling: object = { temperature: 0 }) => {
    const t0 = performance.now();
    const r = await engine.chat.completions.create({ messages: benchMessages(image), max_tokens: run.maxNewTokens, ...sampling });
    const f = figures(r.tessera, performance.now() - t0);
    run.log(`ours (${run.env}) ${label}: ${describeRequest(f)}; tokens ${JSON.stringify(f.tokenIds)}`);
    if (f.mediaSource !== expectSource) {
      throw new BenchRequestError(
        `${label}: embeddings came from '${f.mediaSource}', expected '${expectSource}'; the figures would mislead`,
      );
    }
    return { f, info: r.tessera, text: r.choices[0].message.content };
  };
  const cold = await request('cold request (first after load, includes pipeline compilation)', pngVariant(run.image, 'cold'), 'encoded');
  const warm: Awaited<ReturnType<typeof request>>[] = [];
  let last = run.image;
  for (let i = 0; i < run.warmReps; i++) {
    last = pngVariant(run.image, `warm-${i}`);
    warm.push(await request(`warm request ${i + 1}/${run.warmReps}`, last, 'encoded'));
  }
  const stats = engine.stats(); // decodeStep describes the last warm request's last step
  const hit = await request('same image bytes again (encoder cache hit)', last, 'memory');
  const s = BENCH_SAMPLING;
  const greedyRuns = [hit.f];
  const sampledRuns: RequestFigures[] = [];
  for (let i = 0; i < SAMPLING_PAIRS; i++) {
    const label = `same again, sampled ${i + 1}/${SAMPLING_PAIRS} (temperature ${s.temperature}, top_k ${s.top_k}, top_p ${s.top_p}, seed ${s.seed})`;
    sampledRuns.push((await request(label, last, 'memory', BENCH_SAMPLING)).f);
    if (i + 1 < SAMPLING_PAIRS) greedyRuns.push((await request(`same again, greedy ${i + 2}/${SAMPLING_PAIRS}`, last, 'memory')).f);
  }
  const first = JSON.stringify(sampledRuns[0].tokenIds);
  if (sampledRuns.some((r) => JSON.stringify(r.tokenIds) !== first)) {
    throw new BenchRequestError(`the same seed gave different tokens: ${sampledRuns.map((r) => JSON.stringify(r.tokenIds)).join(' vs ')}`);
  }
  const sampling = {
    greedyDecodeTokensPerSecond: greedyRuns.map((r) => r.decodeTokensPerSecond),
    sampledDecodeTokensPerSecond: sampledRuns.map((r) => r.decodeTokensPerSecond),
  };
  const sampledMedian = median(sampling.sampledDecodeTokensPerSecond);
  const greedyMedian = median(sampling.greedyDecodeTokensPerSecond);
  run.log(
    `ours (${run.env}) decode tokens/s, median of ${SAMPLING_PAIRS}: sampled ${sampledMedian.toFixed(3)} / greedy ${greedyMedian.toFixed(3)} ` +
      `= ${(sampledMedian / greedyMedian).toFixed(3)}`,
  );
  const sampled = [...sampledRuns].sort((a, b) => a.decodeTokensPerSecond - b.decodeTokensPerSecond)[Math.floor((SAMPLING_PAIRS - 1) / 2)];
  warm.sort((a, b) => a.f.ttftMs - b.f.ttftMs);
  const chosen = warm[Math.floor((warm.length - 1) / 2)];
  return {
    env: run.env,
    dtype: run.dtype,
    adapter: run.adapter,
    kernelVariant: run.kernelVariant,
    engineOptions: run.engineOptions,
    loadMs: run.loadMs,
    promptTokens: chosen.info.promptTokens,
    imageTokens: chosen.info.imageTokens,
    numTiles: chosen.info.numTiles,
    cold: cold.f,
    warm: chosen.f,
    warmReps: warm.length,
    cacheHit: hit.f,
    sampled,
    sampling: { ...BENCH_SAMPLING, ...sampling },
    peakGpuBytes: engine.stats().gpuMemory.peakBytes,
    peakGpuByArea: engine.stats().gpuMemory.peakByArea,
    weightBytes: stats.weightBytes,
    kvCacheBytes: stats.kvCacheBytes,
    decodeStep: stats.decodeStep,
    text: chosen.text,
  };
}

/**
 * engine.profile() on the bench image and prompt: per-kind GPU time for one vision tile, one prefill chunk
 * and one decode step. Run after everything else is measured: it loads the vision tower onto the engine's
 * device once more, which would show in the peak-memory figures.
 */
export async function profileOurs(engine: Engine, run: Pick<OursRun, 'env' | 'dtype' | 'image' | 'log'>): Promise<ProfileReport | Skipped> {
  try {
    const t0 = performance.now();
    const report = await engine.profile({ image: run.image, prompt: BENCH_PROMPT });
    const totals = report.phases.map((p) => `${p.name} ${p.totalMs.toFixed(1)} ms`).join(', ');
    run.log(
      `ours (${run.env}, ${run.dtype}) profile (${report.timing}): ${totals}; took ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    return report;
  } catch (e) {
    const skipped = { skipped: `profile failed: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}` };
    run.log(`ours (${run.env}, ${run.dtype}) ${skipped.skipped}`);
    return skipped;
  }
}

/** Positions of the context-cost figure: a decode step early in a chat and one ~1,000 tokens in. */
export const CONTEXT_POSITIONS = [50, 1000] as const;

/**
 * What a decode step costs deeper in the context: engine.profile()'s whole-step wall time (median of 5)
 * at positions 50 and 1000 of a scratch sequence. Run after the memory figures are taken (the scratch
 * sequence's 1,000 tokens grow the KV cache).
 */
export async function measureContextCost(engine: Engine, run: Pick<OursRun, 'env' | 'dtype' | 'log'>): Promise<ContextCost | Skipped> {
  try {
    const report = await engine.profile({ prompt: BENCH_PROMPT, decodePositions: [...CONTEXT_POSITIONS] });
    const [short, long] = report.decodeAtPositions ?? [];
    const attention = (position: number) =>
      report.phases
        .find((p) => p.name === 'decode-step' && p.description.startsWith(`1 token at position ${position} (`))
        ?.rows.find((r) => r.kind === 'paged-attention')?.ms ?? null;
    const cost: ContextCost = {
      short,
      long,
      ratio: long.stepMs / short.stepMs,
      attentionMs: { short: attention(short.position), long: attention(long.position) },
    };
    run.log(
      `ours (${run.env}, ${run.dtype}) decode step at position ${short.position}: ${short.stepMs.toFixed(1)} ms, at ${long.position}: ` +
        `${long.stepMs.toFixed(1)} ms (${cost.ratio.toFixed(3)}x); paged attention ${cost.attentionMs.short?.toFixed(1)} -> ${cost.attentionMs.long?.toFixed(1)} ms`,
    );
    return cost;
  } catch (e) {
    const skipped = { skipped: `context cost failed: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}` };
    run.log(`ours (${run.env}, ${run.dtype}) ${skipped.skipped}`);
    return skipped;
  }
}
