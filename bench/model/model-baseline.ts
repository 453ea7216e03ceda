// bench:model --baseline=<git-ref>: the figures a user feels on one request (load, vision tile, TTFT, decode,
// peak GPU memory), this tree beside the baseline tree's, from the JSON line each run printed. Older trees
// print fewer fields; what a tree did not measure is null. Ratios are this tree over the baseline, oriented
// so that > 1 is better (times and bytes: baseline ÷ this; rates: this ÷ baseline).

/** One side's figures (browser when it ran, else Node). */
export interface OneRequestFigures {
  env: string;
  loadMs: number | null;
  encodeMsPerTileWarm: number | null;
  encodeMsPerTileCold: number | null;
  ttftWarmMs: number | null;
  ttftColdMs: number | null;
  ttftCacheHitMs: number | null;
  /** Median over the greedy requests of the run (cold, warm, cache hit): one request's 16 tokens vary by ~10%. */
  decodeTokensPerSecond: number | null;
  peakGpuBytes: number | null;
}

export interface BaselineComparison {
  ref: string;
  sha: string;
  seconds: number;
  baseline: OneRequestFigures | null;
  current: OneRequestFigures | null;
  ratios: Record<string, number | null>;
}

type Loose = Record<string, any>; // an older tree's JSON: read defensively

const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** The one-request figures of a bench:model JSON line (this tree's or an older one's). */
export function oneRequestFigures(r: Loose): OneRequestFigures | null {
  const browserOurs = r.browser && !r.browser.skipped && r.browser.ours && !r.browser.ours.skipped ? r.browser.ours : undefined;
  const node = r.node && !r.node.skipped ? r.node : undefined;
  const o: Loose | undefined = browserOurs ?? node;
  if (!o) return null;
  const decodes = [o.cold, o.warm, o.cacheHit]
    .map((x: Loose | undefined) => num(x?.decodeTokensPerSecond))
    .filter((v): v is number => v !== null);
  return {
    env: browserOurs ? 'browser' : 'node',
    loadMs: num(o.loadMs),
    encodeMsPerTileWarm: num(o.warm?.encodeMsPerTile),
    encodeMsPerTileCold: num(o.cold?.encodeMsPerTile),
    ttftWarmMs: num(o.warm?.ttftMs),
    ttftColdMs: num(o.cold?.ttftMs),
    ttftCacheHitMs: num(o.cacheHit?.ttftMs),
    decodeTokensPerSecond: median(decodes),
    peakGpuBytes: num(o.peakGpuBytes),
  };
}

const div = (a: number | null | undefined, b: number | null | undefined) => (a == null || b == null || b === 0 ? null : a / b);

export function compareWithBaseline(
  current: Loose,
  base: { ref: string; sha: string; seconds: number; result: Loose },
): BaselineComparison {
  const c = oneRequestFigures(current as unknown as Loose);
  const b = oneRequestFigures(base.result);
  return {
    ref: base.ref,
    sha: base.sha,
    seconds: base.seconds,
    baseline: b,
    current: c,
    ratios: {
      load: div(b?.loadMs, c?.loadMs),
      encodePerTileWarm: div(b?.encodeMsPerTileWarm, c?.encodeMsPerTileWarm),
      encodePerTileCold: div(b?.encodeMsPerTileCold, c?.encodeMsPerTileCold),
      ttftWarm: div(b?.ttftWarmMs, c?.ttftWarmMs),
      ttftCold: div(b?.ttftColdMs, c?.ttftColdMs),
      ttftCacheHit: div(b?.ttftCacheHitMs, c?.ttftCacheHitMs),
      decodeTokensPerSecond: div(c?.decodeTokensPerSecond, b?.decodeTokensPerSecond),
      peakGpuMemory: div(b?.peakGpuBytes, c?.peakGpuBytes),
    },
  };
}
