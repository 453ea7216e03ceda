// The Chromium section of the Qwen-VL benchmark's report: ours beside transformers.js per image, the
// ratios, and the issue's goals (vision encode >= 8x, decode >= 10x, peak GPU memory <= 1.0x the peer's).

import { table } from '../harness/table';
import type { QwenBrowserResult } from './qwen-browser';
import { isSkipped, type QwenPageResult, type QwenRequestFigures, type Skipped } from './qwen-result';

const GOALS = { encode: 8, decode: 10, memory: 1.0 };

export interface QwenImageRatios {
  image: string;
  /** Warm requests: the peer's time over ours (encode, TTFT), ours' rate over the peer's (decode). */
  encode: number;
  ttft: number;
  decode: number;
  /** Cold requests, the same ratios. */
  coldEncode: number;
  coldTtft: number;
  /** Leading generated tokens equal on both sides (meaningful for Qwen2.5-VL, whose peer runs the same model). */
  sameLeadingTokens: number;
}

export interface QwenRatios {
  images: QwenImageRatios[];
  /** Ours' peak GPU bytes over the peer's. */
  memory: number;
  goals: { encode: boolean; decode: boolean; memory: boolean };
}

function leadingEqual(a: readonly number[], b: readonly number[]): number {
  let n = 0;
  while (n < a.length && n < b.length && a[n] === b[n]) n++;
  return n;
}

/** The ratios of a page where both sides ran, else undefined. */
export function qwenRatios(page: QwenPageResult): QwenRatios | undefined {
  const { ours, peer } = page;
  if (isSkipped(ours) || isSkipped(peer)) return undefined;
  const images = ours.rows.map((o) => {
    const p = peer.rows.find((r) => r.image === o.image)!;
    return {
      image: o.image,
      encode: p.warm.encodeMs / o.warm.encodeMs,
      ttft: p.warm.ttftMs / o.warm.ttftMs,
      decode: o.warm.decodeTokensPerSecond / p.warm.decodeTokensPerSecond,
      coldEncode: p.cold.encodeMs / o.cold.encodeMs,
      coldTtft: p.cold.ttftMs / o.cold.ttftMs,
      sameLeadingTokens: leadingEqual(o.warm.tokenIds, p.warm.tokenIds),
    };
  });
  const memory = ours.peakGpuBytes / peer.peakGpuBytes;
  return {
    images,
    memory,
    goals: {
      encode: images.every((i) => i.encode >= GOALS.encode),
      decode: images.every((i) => i.decode >= GOALS.decode),
      memory: memory <= GOALS.memory,
    },
  };
}

const cell = (o: QwenRequestFigures, p: QwenRequestFigures | undefined, pick: (f: QwenRequestFigures) => number, digits: number) =>
  `${pick(o).toFixed(digits)} / ${p ? pick(p).toFixed(digits) : '-'}`;

export function formatQwenBrowser(family: string, result: QwenBrowserResult | Skipped, reps: number): string {
  if (isSkipped(result)) return `not run: ${result.skipped}`;
  const { page } = result;
  const lines = [`Chromium ${result.chromium}, adapter ${page.adapter} (our kernel variant ${page.kernelVariant})`];
  if (isSkipped(page.ours)) return [...lines, `ours: ${page.ours.skipped}`].join('\n');
  const ours = page.ours;
  const peer = isSkipped(page.peer) ? undefined : page.peer;
  const ratios = qwenRatios(page);
  lines.push(
    table(
      [
        'image',
        'grid',
        'image tokens',
        'encode ms ours / peer',
        'x',
        'TTFT ms ours / peer',
        'x',
        'decode tok/s ours / peer',
        'x',
        'cold encode x',
        'cold TTFT x',
      ],
      ours.rows.map((o) => {
        const p = peer?.rows.find((r) => r.image === o.image);
        const r = ratios?.images.find((i) => i.image === o.image);
        const x = (v: number | undefined) => (v === undefined ? '-' : v.toFixed(1));
        return [
          o.image,
          o.warm.grid,
          String(o.warm.imageTokens),
          cell(o.warm, p?.warm, (f) => f.encodeMs, 0),
          x(r?.encode),
          cell(o.warm, p?.warm, (f) => f.ttftMs, 0),
          x(r?.ttft),
          `${o.warm.decodeTokensPerSecond.toPrecision(3)} / ${p ? p.warm.decodeTokensPerSecond.toPrecision(3) : '-'}`,
          x(r?.decode),
          x(r?.coldEncode),
          x(r?.coldTtft),
        ];
      }),
    ),
  );
  const mib = (b: number) => (b / 2 ** 20).toFixed(0);
  lines.push(
    `peak GPU memory: ours ${mib(ours.peakGpuBytes)} MiB (engine.stats(); the page's probe saw ${mib(ours.probePeakGpuBytes)} MiB)` +
      (peer ? `, peer ${mib(peer.peakGpuBytes)} MiB (the page's createBuffer/destroy probe): ${ratios!.memory.toFixed(2)}x` : ''),
  );
  lines.push(`load: ours ${(ours.loadMs / 1000).toFixed(1)} s${peer ? `, peer ${(peer.loadMs / 1000).toFixed(1)} s` : ''}`);
  if (!peer) {
    lines.push(`peer: ${(page.peer as Skipped).skipped}`);
    return lines.join('\n');
  }
  lines.push(
    `peer: ${peer.library}; TTFT includes its own image processor (${peer.rows.map((r) => `${r.image} ${r.warm.processorError ? 'failed' : `${r.warm.processMs?.toFixed(0)} ms`}`).join(', ')}), generate() gets our ids and pixels`,
  );
  for (const r of peer.rows) {
    if (r.warm.processorError)
      lines.push(`  ${r.image}: its image processor failed, so its TTFT is generate()'s alone: ${r.warm.processorError}`);
  }
  for (const r of peer.rows) {
    const o = ours.rows.find((x) => x.image === r.image)!;
    lines.push(
      `  ${r.image}: its grid ${r.warm.grid} (ours ${o.warm.grid}), its pixels within ${r.warm.pixelMaxAbsDiffVsOurs?.toFixed(4)} of ours; ` +
        `greedy tokens equal for the first ${ratios!.images.find((i) => i.image === r.image)!.sameLeadingTokens} of ${o.warm.tokenIds.length}`,
    );
  }
  if (family === 'qwen3_vl')
    lines.push('  (transformers.js 4.3.1 has no DeepStack: its Qwen3-VL answers differ from the model; speed only)');
  const met = (ok: boolean) => (ok ? 'met' : 'NOT met');
  lines.push(
    `goals: encode >= ${GOALS.encode}x ${met(ratios!.goals.encode)}, decode >= ${GOALS.decode}x ${met(ratios!.goals.decode)}, ` +
      `peak memory <= ${GOALS.memory}x ${met(ratios!.goals.memory)} (${reps > 0 ? `the median of ${reps} warm requests` : 'cold requests only: --reps 0'})`,
  );
  return lines.join('\n');
}
