// Turns a `bench:model` run into ratios, token agreement and readable tables (Node side). The runner
// prints the JSON line itself.

import { formatProfileReport } from '../../src/engine/profile-report';
import { oneRequestFigures, type BaselineComparison } from './model-baseline';
import {
  isSkipped,
  type CpuFigures,
  type ModelBenchResult,
  type OursFigures,
  type PeerFigures,
  type Skipped,
  type WasmFigures,
  type WasmPageFigures,
} from './model-result';
import { table } from '../harness/table';

const MiB = 2 ** 20;

const get = <T extends object, R>(x: T | Skipped | undefined, f: (v: T) => R): R | undefined =>
  x === undefined || isSkipped(x) ? undefined : f(x);

/** Same tokens over the shorter of the two (the reference has more steps than a run asks for). */
function samePrefix(a: number[] | undefined, b: number[] | undefined): boolean | null {
  if (!a || !b) return null;
  const n = Math.min(a.length, b.length);
  return n > 0 && a.slice(0, n).every((t, i) => t === b[i]);
}

const div = (a: number | undefined, b: number | undefined): number | null =>
  a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0 ? null : a / b;

export function computeRatios(r: Pick<ModelBenchResult, 'node' | 'browser'>): Record<string, number | null> {
  const ours = get(r.browser, (b) => b.ours) as OursFigures | Skipped | undefined;
  const peer = get(r.browser, (b) => b.peer) as PeerFigures | Skipped | undefined;
  const o = <R>(f: (v: OursFigures) => R) => get(ours, f);
  const p = <R>(f: (v: PeerFigures) => R) => get(peer, f);
  return {
    encodePerTile_warm: div(
      p((x) => x.encodeMsPerTile),
      o((x) => x.warm.encodeMsPerTile),
    ),
    encodePerTile_cold: div(
      p((x) => x.encodeMsPerTile),
      o((x) => x.cold.encodeMsPerTile),
    ),
    prefillTokensPerSecond: div(
      o((x) => x.warm.prefillTokensPerSecond),
      p((x) => x.prefillTokensPerSecond),
    ),
    ttft_warm: div(
      p((x) => x.ttftMs),
      o((x) => x.warm.ttftMs),
    ),
    ttft_cold: div(
      p((x) => x.ttftMs),
      o((x) => x.cold.ttftMs),
    ),
    decodeTokensPerSecond: div(
      o((x) => x.warm.decodeTokensPerSecond),
      p((x) => x.decodeTokensPerSecond),
    ),
    peakGpuMemory: div(
      p((x) => x.peakGpuBytes),
      o((x) => x.peakGpuBytes),
    ),
    dispatchesPerDecodeToken: div(
      p((x) => x.decodeStep.numDispatches),
      o((x) => x.decodeStep.numDispatches),
    ),
    load: div(
      p((x) => x.loadMs),
      o((x) => x.loadMs),
    ),
  };
}

function median(values: readonly number[]): number | undefined {
  if (values.length === 0) return undefined;
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

const greedyDecode = (o: OursFigures | undefined) => (o ? median(o.sampling.greedyDecodeTokensPerSecond) : undefined);
const sampledDecode = (o: OursFigures | undefined) => (o ? median(o.sampling.sampledDecodeTokensPerSecond) : undefined);

/** Median sampled decode tokens/s ÷ median greedy (cache-hit requests, identical but for sampling). */
export function sampledOverGreedy(o: OursFigures | Skipped | undefined): number | null {
  return get(o, (x) => div(sampledDecode(x), greedyDecode(x))) ?? null;
}

export function computeAgreement(r: Pick<ModelBenchResult, 'node' | 'browser' | 'referenceTokens'>): Record<string, boolean | null> {
  const node = get(r.node, (x) => x.warm.tokenIds);
  const nodeCold = get(r.node, (x) => x.cold.tokenIds);
  const ours = get(r.browser, (b) => get(b.ours, (x) => x.warm.tokenIds));
  const peer = get(r.browser, (b) => get(b.peer, (x) => x.tokenIds));
  const ref = r.referenceTokens ?? undefined;
  return {
    oursBrowser_vs_peer: samePrefix(ours, peer),
    oursNode_vs_oursBrowser: samePrefix(node, ours),
    oursNode_cold_vs_warm: samePrefix(node, nodeCold),
    oursNode_vs_reference: samePrefix(node, ref),
    oursBrowser_vs_reference: samePrefix(ours, ref),
    peer_vs_reference: samePrefix(peer, ref),
  };
}

const DTYPES = ['f32', 'f16', 'q8', 'q4'];

/** Each dtype's figures divided by f32's (Node): > 1 means more (time, bytes) or faster (rates). */
export function computeDtypeRatios(byDtype: Record<string, OursFigures | Skipped>): Record<string, Record<string, number | null>> {
  const base = byDtype.f32;
  const out: Record<string, Record<string, number | null>> = {};
  for (const [dtype, fig] of Object.entries(byDtype)) {
    const g = <R>(x: OursFigures | Skipped | undefined, fn: (v: OursFigures) => R) => get(x, fn);
    out[dtype] = {
      loadMs: div(
        g(fig, (x) => x.loadMs),
        g(base, (x) => x.loadMs),
      ),
      weightBytes: div(
        g(fig, (x) => x.weightBytes),
        g(base, (x) => x.weightBytes),
      ),
      encodeMsPerTile: div(
        g(fig, (x) => x.warm.encodeMsPerTile),
        g(base, (x) => x.warm.encodeMsPerTile),
      ),
      prefillTokensPerSecond: div(
        g(fig, (x) => x.warm.prefillTokensPerSecond),
        g(base, (x) => x.warm.prefillTokensPerSecond),
      ),
      decodeTokensPerSecond: div(
        g(fig, (x) => x.warm.decodeTokensPerSecond),
        g(base, (x) => x.warm.decodeTokensPerSecond),
      ),
    };
  }
  return out;
}

/** The weight dtypes' goals on this machine (Node figures). */
export function computeGoals(byDtype: Record<string, OursFigures | Skipped>): ModelBenchResult['dtypes']['goals'] {
  const r = computeDtypeRatios(byDtype);
  const goal = (text: string, measured: number | null | undefined, ok: (v: number) => boolean) => ({
    goal: text,
    measured: measured ?? null,
    met: measured === null || measured === undefined ? null : ok(measured),
  });
  return {
    q4Decode: goal('q4 decode tokens/s >= 2x f32', r.q4?.decodeTokensPerSecond, (v) => v >= 2),
    q8Decode: goal('q8 decode tokens/s >= 1.5x f32', r.q8?.decodeTokensPerSecond, (v) => v >= 1.5),
    q4WeightMemory: goal('q4 GPU weight memory <= 35% of f32', r.q4?.weightBytes, (v) => v <= 0.35),
  };
}

type Goal = ModelBenchResult['goals'][string];

const ratioOf = (c: OursFigures['contextCost']) => (c && !isSkipped(c) ? c.ratio : undefined);

function goal(text: string, measured: number | null | undefined, ok: (v: number) => boolean): Goal {
  return { goal: text, measured: measured ?? null, met: measured === null || measured === undefined ? null : ok(measured) };
}

/** The speed and memory goals of one request against the peer and the baseline (browser figures). */
export function computeRunGoals(r: ModelBenchResult): ModelBenchResult['goals'] {
  const ours = oneRequestFigures(r as unknown as Record<string, unknown>);
  const base = r.baseline && !isSkipped(r.baseline) ? r.baseline : undefined;
  const browserOurs = get(r.browser, (b) => get(b.ours, (o) => o));
  return {
    decode: goal(
      `one request's decode tokens/s (${ours?.env ?? 'browser'}, median of its greedy requests) >= 4.5`,
      ours?.decodeTokensPerSecond,
      (v) => v >= 4.5,
    ),
    decodeVsBaseline: goal(
      `decode tokens/s >= 1.15x the baseline tree's${base ? ` (${base.ref})` : ' (--baseline)'}`,
      base?.ratios.decodeTokensPerSecond,
      (v) => v >= 1.15,
    ),
    peakMemoryVsPeer: goal('peak GPU memory <= 1.0x transformers.js (peer bytes / ours >= 1)', r.ratios.peakGpuMemory, (v) => v >= 1),
    visionWarmVsPeer: goal('vision tile >= 12x transformers.js, warm', r.ratios.encodePerTile_warm, (v) => v >= 12),
    visionColdVsPeer: goal(
      'vision tile >= 10x transformers.js, cold (first request: pipeline compiles)',
      r.ratios.encodePerTile_cold,
      (v) => v >= 10,
    ),
    decodeAtLongContext: goal(
      'a decode step at position ~1000 <= 1.1x one at position ~50 (step ms ratio)',
      ratioOf(browserOurs?.contextCost) ?? ratioOf(isSkipped(r.node) ? undefined : r.node.contextCost),
      (v) => v <= 1.1,
    ),
  };
}

function formatGoals(r: ModelBenchResult): string[] {
  const rows = Object.values(r.goals).map((g) => [
    g.goal,
    g.measured === null ? '-' : g.measured.toFixed(2),
    g.met === null ? 'not measured' : g.met ? 'MET' : 'MISSED',
  ]);
  return rows.length === 0 ? [] : ['Goals (measured on this machine in this run):', table(['goal', 'measured', ''], rows), ''];
}

function formatBaseline(c: BaselineComparison | Skipped | undefined): string[] {
  if (!c) return [];
  if (isSkipped(c)) return [`Baseline: ${c.skipped}`, ''];
  const b = c.baseline;
  const o = c.current;
  const row = (label: string, v: (x: NonNullable<typeof b>) => number | null, digits: number, ratio: number | null) => [
    label,
    b ? f(v(b) ?? undefined, digits) : '-',
    o ? f(v(o) ?? undefined, digits) : '-',
    ratio === null ? '' : `${ratio.toFixed(2)}x`,
  ];
  const R = c.ratios;
  return [
    `Baseline ${c.ref} (${c.sha.slice(0, 12)}), run first in this invocation (${c.seconds.toFixed(0)} s), ${o?.env ?? ''}; ratio > 1 = this tree better:`,
    table(
      ['figure', 'baseline', 'this tree', 'ratio'],
      [
        row('load (s)', (x) => (x.loadMs === null ? null : x.loadMs / 1000), 1, R.load),
        row('vision encode, ms per tile (warm)', (x) => x.encodeMsPerTileWarm, 0, R.encodePerTileWarm),
        row('vision encode, ms per tile (cold)', (x) => x.encodeMsPerTileCold, 0, R.encodePerTileCold),
        row('TTFT warm (ms)', (x) => x.ttftWarmMs, 0, R.ttftWarm),
        row('TTFT cold (ms)', (x) => x.ttftColdMs, 0, R.ttftCold),
        row('TTFT, same image again (ms)', (x) => x.ttftCacheHitMs, 0, R.ttftCacheHit),
        row('decode tokens/s (median: cold, warm, cache hit)', (x) => x.decodeTokensPerSecond, 2, R.decodeTokensPerSecond),
        row('peak GPU memory (MiB)', (x) => (x.peakGpuBytes === null ? null : x.peakGpuBytes / MiB), 0, R.peakGpuMemory),
      ],
    ),
    '',
  ];
}

function formatDtypes(r: ModelBenchResult): string[] {
  const out: string[] = [];
  const d = r.dtypes;
  const present = DTYPES.filter((x) => d.node[x] !== undefined);
  if (present.length === 0) return out;
  const fig = (x: string) => (d.node[x] && !isSkipped(d.node[x]) ? (d.node[x] as OursFigures) : undefined);
  const both = (x: string, v: (o: OursFigures) => number, digits: number, ratioKey?: string) => {
    const o = fig(x);
    if (!o) return isSkipped(d.node[x] ?? { skipped: '' }) ? 'failed' : '-';
    const rt = ratioKey && x !== 'f32' ? d.ratiosToF32[x]?.[ratioKey] : null;
    return `${f(v(o), digits)}${rt !== null && rt !== undefined ? ` (${rt.toFixed(2)}x)` : ''}`;
  };
  out.push("Weight dtypes (ours, Node; in brackets: the figure divided by f32's): createEngine({ dtype })");
  out.push(
    table(
      ['figure', ...present],
      [
        ['load incl. quantization (s)', ...present.map((x) => both(x, (o) => o.loadMs / 1000, 1, 'loadMs'))],
        [
          'load from stored copies (s)',
          ...present.map((x) => (fig(x)?.storedLoadMs !== undefined ? f(fig(x)!.storedLoadMs! / 1000, 1) : '-')),
        ],
        ['GPU weight memory, text side (MiB)', ...present.map((x) => both(x, (o) => o.weightBytes / MiB, 0, 'weightBytes'))],
        ['peak GPU memory (MiB)', ...present.map((x) => both(x, (o) => o.peakGpuBytes / MiB, 0))],
        ['vision encode, ms per tile (warm)', ...present.map((x) => both(x, (o) => o.warm.encodeMsPerTile, 0, 'encodeMsPerTile'))],
        ['prefill, prompt tokens/s', ...present.map((x) => both(x, (o) => o.warm.prefillTokensPerSecond, 1, 'prefillTokensPerSecond'))],
        ['decode tokens/s', ...present.map((x) => both(x, (o) => o.warm.decodeTokensPerSecond, 2, 'decodeTokensPerSecond'))],
        ['greedy tokens (warm)', ...present.map((x) => (fig(x) ? fig(x)!.warm.tokenIds.slice(0, 6).join(',') + '…' : '-'))],
      ],
    ),
  );
  for (const x of present) if (isSkipped(d.node[x])) out.push(`  ${x}: ${(d.node[x] as Skipped).skipped}`);
  out.push(
    "  GPU weight memory = engine.stats().weightBytes: the language model's weights (the vision tower is in the encoder, also in the chosen dtype).",
  );
  const browserDtypes = get(r.browser, (b) => b.oursByDtype);
  if (browserDtypes && Object.keys(browserDtypes).length > 1) {
    out.push(
      '  browser: ' +
        Object.entries(browserDtypes)
          .map(([x, o]) =>
            isSkipped(o)
              ? `${x} failed`
              : `${x} decode ${o.warm.decodeTokensPerSecond.toFixed(2)} tok/s, load ${(o.loadMs / 1000).toFixed(1)} s`,
          )
          .join('; '),
    );
  }
  if (isSkipped(d.accuracy)) out.push(`Accuracy against f32: ${d.accuracy.skipped}`);
  else {
    out.push(
      'Accuracy against f32 (whole model, Node; 256 teacher-forced positions: the bench prompt with its image, then a fixed pseudo-random continuation)',
    );
    const acc = d.accuracy;
    out.push(
      table(
        ['dtype', 'first-step max |err|', 'first-step KL', 'mean KL', 'top-1 agreement', 'top-1, decisive positions'],
        Object.entries(acc).map(([x, a]) => [
          x,
          a.firstStepMaxAbsErr.toExponential(2),
          a.firstStepKl.toExponential(2),
          a.meanKl.toExponential(2),
          `${(a.top1Agreement * 100).toFixed(2)}% of ${a.positions}`,
          `${(a.top1AgreementDecisive * 100).toFixed(2)}% of ${a.decisivePositions}`,
        ]),
      ),
    );
    out.push("  decisive: f32's top-1 logit leads the second by >= 0.1 nat (random weights have many near-ties).");
  }
  out.push(
    'Goals on this machine (Node): ' +
      Object.values(d.goals)
        .map(
          (g) =>
            `${g.goal}: ${g.measured === null ? '-' : `${g.measured.toFixed(2)}x`} ${g.met === null ? '(not measured)' : g.met ? 'MET' : 'MISSED'}`,
        )
        .join('; '),
  );
  out.push('');
  return out;
}

/** engine.profile() of ours in Node and in the browser (f32), beside the main table; other dtypes are in the JSON. */
function formatProfiles(node: OursFigures | undefined, browser: OursFigures | undefined): string[] {
  const out: string[] = [];
  for (const [env, o] of [
    ['Node', node],
    ['browser', browser],
  ] as const) {
    if (!o?.profile) continue;
    out.push(`Per-kernel-kind GPU time, ours ${env} (engine.profile() on the bench image and prompt, after the measured requests)`);
    if (isSkipped(o.profile)) out.push(`  ${o.profile.skipped}`);
    else out.push(...formatProfileReport(o.profile).map((l) => (l ? `  ${l}` : l)));
    out.push('');
  }
  return out;
}

const f = (x: number | undefined, digits = 0) => (x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(digits));

const ratio = (x: number | null) => (x === null ? '-' : `${x.toFixed(2)}x`);

export function formatModelReport(r: ModelBenchResult): string {
  const node = isSkipped(r.node) ? undefined : r.node;
  const br = isSkipped(r.browser) ? undefined : r.browser;
  const ours = br && !isSkipped(br.ours) ? br.ours : undefined;
  const peer = br && !isSkipped(br.peer) ? br.peer : undefined;
  const out: string[] = [];
  out.push(`Model: ${r.model.path}`);
  out.push(`  ${r.model.shape}; ${r.model.weights}`);
  out.push(`  NOTE: ${r.model.note}`);
  out.push(
    `Request: "${r.request.prompt}" + ${r.request.image} -> ${r.request.numTiles} tile(s), ${r.request.imageTokens} image tokens, ` +
      `${r.request.promptTokens} prompt tokens; greedy, ${r.request.maxNewTokens} new tokens; ours also sampled ` +
      `(${JSON.stringify(r.sampling.params)}), alternating with greedy cache-hit requests`,
  );
  if (node) out.push(`Node: ${node.adapter} (kernel variant ${node.kernelVariant})`);
  else out.push(`Node: skipped (${(r.node as Skipped).skipped})`);
  if (br) out.push(`Browser: ${br.userAgent}${ours ? `; ${ours.adapter}` : ''}`);
  else out.push(`Browser: skipped (${(r.browser as Skipped).skipped})`);
  if (peer)
    out.push(`Peer: ${peer.library}, ${peer.onnxruntime}, device ${peer.device}, dtype ${peer.dtype}; pixels used: ${peer.pixelsUsed}`);
  else if (br) out.push(`Peer: skipped (${(br.peer as Skipped).skipped})`);
  const engineOptions = (node ?? ours)?.engineOptions;
  if (engineOptions)
    out.push(
      `Ours: ${engineOptions}; each measured request sends a byte-distinct copy of the PNG (same pixels) so the encoder cache misses`,
    );
  if (ours || node)
    out.push(
      'Ours: one cold request right after load (pipeline compilation), then warm request(s); "warm" columns report the median-TTFT warm one.',
    );
  if (peer) out.push('Peer: ONE cold request only (its vision encoder takes minutes here); compare it with both of ours.');
  out.push('');

  const rows: string[][] = [];
  const add = (name: string, n: string, b: string, p: string, rt: string) => rows.push([name, n, b, p, rt]);
  const R = r.ratios;
  add('load (s)', f(node && node.loadMs / 1000, 1), f(ours && ours.loadMs / 1000, 1), f(peer && peer.loadMs / 1000, 1), ratio(R.load));
  add('CPU preprocess (ms)', f(node?.warm.processMs), f(ours?.warm.processMs), f(peer?.processMs), '');
  add(
    'vision encode, ms per 512 tile (warm)',
    f(node?.warm.encodeMsPerTile),
    f(ours?.warm.encodeMsPerTile),
    f(peer?.encodeMsPerTile),
    ratio(R.encodePerTile_warm),
  );
  add(
    'vision encode, ms per 512 tile (cold)',
    f(node?.cold.encodeMsPerTile),
    f(ours?.cold.encodeMsPerTile),
    f(peer?.encodeMsPerTile),
    ratio(R.encodePerTile_cold),
  );
  add(
    'prefill, prompt tokens/s',
    f(node?.warm.prefillTokensPerSecond, 1),
    f(ours?.warm.prefillTokensPerSecond, 1),
    f(peer?.prefillTokensPerSecond, 2),
    ratio(R.prefillTokensPerSecond),
  );
  add('prefill (ms)', f(node?.warm.prefillMs), f(ours?.warm.prefillMs), f(peer?.prefillMs), '');
  add('TTFT warm (ms)', f(node?.warm.ttftMs), f(ours?.warm.ttftMs), f(peer?.ttftMs), ratio(R.ttft_warm));
  add('TTFT cold (ms)', f(node?.cold.ttftMs), f(ours?.cold.ttftMs), f(peer?.ttftMs), ratio(R.ttft_cold));
  add('TTFT, same image again: encoder cache hit (ms)', f(node?.cacheHit.ttftMs), f(ours?.cacheHit.ttftMs), '-', '');
  add(
    'decode tokens/s',
    f(node?.warm.decodeTokensPerSecond, 2),
    f(ours?.warm.decodeTokensPerSecond, 2),
    f(peer?.decodeTokensPerSecond, 3),
    ratio(R.decodeTokensPerSecond),
  );
  if (node || ours) {
    const sampling = r.sampling.params;
    const sampledName = `T ${sampling.temperature}, top_k ${sampling.top_k}, top_p ${sampling.top_p}, seed ${sampling.seed}`;
    const cost = (x: number | null) => (x === null ? '-' : x.toFixed(3));
    const n = (node ?? ours)?.sampling.sampledDecodeTokensPerSecond.length ?? 0;
    // The spread beside each median: on a shared machine one request's decode rate moves by tens of percent.
    const spread = (o: OursFigures | undefined, v: (x: OursFigures) => number[], m: (x: OursFigures) => number | undefined) =>
      o ? `${f(m(o), 3)} (${f(Math.min(...v(o)), 2)}-${f(Math.max(...v(o)), 2)})` : '-';
    const greedyRuns = (x: OursFigures) => x.sampling.greedyDecodeTokensPerSecond;
    const sampledRuns = (x: OursFigures) => x.sampling.sampledDecodeTokensPerSecond;
    add(
      `decode tokens/s, cache hit, greedy (median of ${n}, range)`,
      spread(node, greedyRuns, greedyDecode),
      spread(ours, greedyRuns, greedyDecode),
      '-',
      '',
    );
    add(
      `decode tokens/s, cache hit, sampled (${sampledName}; median of ${n}, range)`,
      spread(node, sampledRuns, sampledDecode),
      spread(ours, sampledRuns, sampledDecode),
      '-',
      '',
    );
    const q = r.sampling.sampledOverGreedyDecode;
    add('  sampled ÷ greedy decode tokens/s (goal >= 0.91: sampling costs <= 10%)', cost(q.node), cost(q.browser), '-', '');
  }
  const ctx = (o: OursFigures | undefined) => {
    const c = o?.contextCost;
    return !c ? '-' : isSkipped(c) ? 'failed' : `${f(c.short.stepMs, 0)} -> ${f(c.long.stepMs, 0)} (${c.ratio.toFixed(2)}x)`;
  };
  add('decode step ms at position 50 -> 1000 (median of 5 whole steps)', ctx(node), ctx(ours), '-', '');
  add('request total (ms)', f(node?.warm.totalMs), f(ours?.warm.totalMs), f(peer?.totalMs), '');
  add(
    'peak GPU memory (MiB)',
    f(node && node.peakGpuBytes / MiB),
    f(ours && ours.peakGpuBytes / MiB),
    f(peer && peer.peakGpuBytes / MiB),
    ratio(R.peakGpuMemory),
  );
  add(
    'dispatches / decode token',
    f(node?.decodeStep.numDispatches),
    f(ours?.decodeStep.numDispatches),
    f(peer?.decodeStep.numDispatches, 1),
    ratio(R.dispatchesPerDecodeToken),
  );
  add(
    'command buffers (ours) / submits (peer) per decode token',
    f(node?.decodeStep.numCommandBuffers),
    f(ours?.decodeStep.numCommandBuffers),
    f(peer?.decodeStep.numSubmits, 1),
    '',
  );
  add(
    'readbacks / decode token',
    f(node?.decodeStep.numReadbacks),
    f(ours?.decodeStep.numReadbacks),
    f(peer?.decodeStep.numReadbacks, 1),
    '',
  );
  add(
    'readback bytes / decode token',
    f(node?.decodeStep.readbackBytes),
    f(ours?.decodeStep.readbackBytes),
    f(peer?.decodeStep.readbackBytes),
    '',
  );
  out.push(...formatDtypes(r));
  out.push(
    'Ratios ours/peer are computed so that > 1 means ours is better (times and bytes: peer ÷ ours; rates: ours ÷ peer), browser vs browser.',
  );
  out.push(table(['figure', 'ours Node', 'ours browser', 'peer browser', 'ours/peer'], rows));
  out.push('');
  out.push(...formatProfiles(node, ours));
  out.push(...formatBaseline(r.baseline));
  out.push(...formatGoals(r));
  for (const o of [node, ours]) {
    if (!o?.peakGpuByArea) continue;
    const areas = Object.entries(o.peakGpuByArea).sort((a, b) => b[1] - a[1]);
    out.push(`ours ${o.env}: GPU memory at the peak by area (MiB): ${areas.map(([k, v]) => `${k} ${(v / MiB).toFixed(1)}`).join(', ')}`);
  }
  if (ours?.probePeakGpuBytes !== undefined) {
    out.push(
      `Cross-check: ours' peak GPU memory seen by the page probe ${(ours.probePeakGpuBytes / MiB).toFixed(0)} MiB (engine.stats() says ${(ours.peakGpuBytes / MiB).toFixed(0)} MiB).`,
    );
  }
  if (peer) {
    out.push(
      `Peer inputs: its processor ${peer.processMs.toFixed(0)} ms; input_ids ${peer.inputIdsEqualOurs ? 'equal to ours' : 'DIFFER from ours'}; ` +
        `its pixel_values vs ours max |diff| ${peer.pixelMaxAbsDiffVsOurs.toFixed(4)} (normalized; 1 uint8 step = 0.0078).`,
    );
    if (peer.logits0MaxAbsDiffVsReference !== null) {
      out.push(`Peer step-0 logits vs float64 PyTorch reference: max |diff| ${peer.logits0MaxAbsDiffVsReference.toExponential(2)}.`);
    }
  }
  out.push('Greedy tokens:');
  if (r.referenceTokens) out.push(`  reference (PyTorch f64) ${JSON.stringify(r.referenceTokens.slice(0, r.request.maxNewTokens))}`);
  if (node) out.push(`  ours Node (warm)        ${JSON.stringify(node.warm.tokenIds)}`);
  if (node) out.push(`  ours Node (sampled)     ${JSON.stringify(node.sampled.tokenIds)}`);
  if (ours) out.push(`  ours browser (sampled)  ${JSON.stringify(ours.sampled.tokenIds)}`);
  if (ours) out.push(`  ours browser (warm)     ${JSON.stringify(ours.warm.tokenIds)}`);
  if (peer) out.push(`  peer                    ${JSON.stringify(peer.tokenIds)}`);
  out.push(
    '  agreement: ' +
      Object.entries(r.tokenAgreement)
        .map(([k, v]) => `${k} ${v === null ? '-' : v ? 'SAME' : 'DIFFERENT'}`)
        .join(', '),
  );
  if (!isSkipped(r.export)) {
    const e = r.export;
    const sizes = Object.entries(e.files)
      .map(([n, x]) => `${n} ${(x.bytes / MiB).toFixed(1)} MiB`)
      .join(', ');
    out.push(`ONNX export (torch ${e.torch}, opset ${e.opset}, fp32): ${sizes}`);
    const c = e.check as Record<string, number | boolean>;
    const oc = e.ortCheck as Record<string, number | boolean | string>;
    out.push(
      `  export modules vs test/reference (f32): image features max|diff| ${Number(c.imageFeaturesMaxAbsDiffModuleVsRef32).toExponential(1)}, ` +
        `step-0 logits ${Number(c.logits0MaxAbsDiffModuleVsRef32).toExponential(1)} (reference f32 vs f64: ${Number(c.logits0MaxAbsDiffRef32VsRef64).toExponential(1)}); ` +
        `min top-2 logit gap ${Number(c.minTop2GapF64).toFixed(3)}`,
    );
    out.push(
      `  .onnx on ${oc.runtime}: image features max|diff| ${Number(oc.imageFeaturesMaxAbsDiff).toExponential(1)}, step-0 logits ` +
        `${Number(oc.logits0MaxAbsDiff).toExponential(1)} vs f64 reference; greedy tokens ${oc.tokensEqual ? 'equal' : 'DIFFERENT'}`,
    );
  } else {
    out.push(`ONNX export: ${r.export.skipped}`);
  }
  if (node) out.push(`Answer text (ours, Node; random weights, so noise): ${JSON.stringify(node.text)}`);
  if (peer) out.push(`Answer text (peer): ${JSON.stringify(peer.text)}`);
  out.push('');
  if (isSkipped(r.cpu)) out.push(`CPU backend: skipped (${r.cpu.skipped})`);
  else out.push(...formatCpu(r.cpu));
  if (isSkipped(r.cpuBrowser)) out.push(`CPU backend in Chromium: skipped (${r.cpuBrowser.skipped})`);
  else out.push(...formatWasm(r.cpuBrowser));
  return out.join('\n');
}

/** The cpu column's lines for the report. */
export function formatCpu(c: CpuFigures): string[] {
  const row = (label: string, ours: string, raw: string, ratio: number) =>
    `  ${label.padEnd(34)}${ours.padStart(14)}${raw.padStart(16)}${ratio.toFixed(2).padStart(10)}x`;
  return [
    `CPU backend (Node: ours on onnxruntime-node vs onnxruntime-node driven directly, same ONNX files; ${c.threads}; ` +
      `medians of ${c.reps} requests each after a dropped first, the two sides alternating; ${c.ours.tokenIds.length} new tokens)`,
    `  ${''.padEnd(34)}${'ours (cpu)'.padStart(14)}${'raw onnxruntime'.padStart(16)}${'ratio'.padStart(11)}`,
    row('vision tile (ms, lower is better)', c.ours.tileMs.toFixed(0), c.raw.tileMs.toFixed(0), c.ratios.tile),
    row('TTFT (ms, lower is better)', c.ours.ttftMs.toFixed(0), c.raw.ttftMs.toFixed(0), c.ratios.ttft),
    row('decode (tok/s)', c.ours.decodeTokensPerSecond.toFixed(1), c.raw.decodeTokensPerSecond.toFixed(1), c.ratios.decode),
    `  16 requests at once: ${c.ours.concurrent.aggregateDecodeTokensPerSecond.toFixed(1)} tok/s aggregate = ${c.ours.concurrent.overOne.toFixed(2)}x one at a time ` +
      `(${c.ours.concurrent.prefixHitTokens} prompt tokens from the prefix cache)`,
    `  greedy tokens equal: ${c.tokensEqual}; goals: tile >= 0.9x ${c.goals.tileAtLeast09}, decode >= 0.9x ${c.goals.decodeAtLeast09}, 16 at once >= 2x ${c.goals.concurrentAtLeast2x}`,
  ];
}

/** Ours on device 'wasm' against transformers.js on 'wasm' (> 1: ours faster), when the peer ran. */
export function compareWasm(page: WasmPageFigures): Pick<WasmFigures, 'ratios' | 'tokensEqual' | 'goals'> {
  if (isSkipped(page.peer)) return { ratios: null, tokensEqual: null, goals: null };
  const ratios = {
    tile: page.peer.encodeMsPerTile / page.ours.tileMs,
    ttft: page.peer.ttftMs / page.ours.ttftMs,
    decode: page.ours.decodeTokensPerSecond / page.peer.decodeTokensPerSecond,
  };
  return {
    ratios,
    tokensEqual: JSON.stringify(page.ours.tokenIds) === JSON.stringify(page.peer.tokenIds),
    goals: { tileAtLeast1: ratios.tile >= 1, ttftAtLeast1: ratios.ttft >= 1, decodeAtLeast1: ratios.decode >= 1 },
  };
}

/** The cpu column's browser lines for the report. */
export function formatWasm(w: WasmFigures): string[] {
  const peer = isSkipped(w.peer) ? undefined : w.peer;
  const row = (label: string, ours: string, theirs: string | undefined, ratio: number | undefined) =>
    `  ${label.padEnd(34)}${ours.padStart(14)}${(theirs ?? '-').padStart(16)}${(ratio === undefined ? '-' : `${ratio.toFixed(2)}x`).padStart(11)}`;
  const c = w.ours.concurrent;
  return [
    `CPU backend in Chromium (ours on onnxruntime-web WebAssembly vs transformers.js device 'wasm', same ONNX files; ` +
      `${w.crossOriginIsolated ? 'cross-origin isolated' : 'not cross-origin isolated: one thread each'}; medians of ` +
      `${peer?.warm?.length ?? '?'} requests each after a dropped first; ${w.ours.tokenIds.length} new tokens)`,
    `  ${''.padEnd(34)}${'ours (wasm)'.padStart(14)}${'transformers.js'.padStart(16)}${'ratio'.padStart(11)}`,
    row('vision tile (ms, lower is better)', w.ours.tileMs.toFixed(0), peer?.encodeMsPerTile.toFixed(0), w.ratios?.tile),
    row('TTFT (ms, lower is better)', w.ours.ttftMs.toFixed(0), peer?.ttftMs.toFixed(0), w.ratios?.ttft),
    row('decode (tok/s)', w.ours.decodeTokensPerSecond.toFixed(1), peer?.decodeTokensPerSecond.toFixed(1), w.ratios?.decode),
    `  ${c.requests} requests at once: ${c.aggregateDecodeTokensPerSecond.toFixed(1)} tok/s aggregate = ${c.overOne.toFixed(2)}x one at a time ` +
      `(${c.prefixHitTokens} prompt tokens from the prefix cache)`,
    peer
      ? `  peer: ${peer.library} on ${peer.onnxruntime}; greedy tokens equal: ${w.tokensEqual}; goals: tile >= 1x ${w.goals?.tileAtLeast1}, ` +
        `TTFT >= 1x ${w.goals?.ttftAtLeast1}, decode >= 1x ${w.goals?.decodeAtLeast1}`
      : `  peer: skipped (${(w.peer as Skipped).skipped})`,
  ];
}
