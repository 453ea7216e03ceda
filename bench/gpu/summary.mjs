// bench/gpu/summary.mjs <dir>: the table bench/gpu/on-device.sh prints last, from the JSON files it wrote
// (tessera doctor / run / profile --json). Plain JavaScript: the device machine runs it with bare Node.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2];
const read = (name) => {
  const path = join(dir, `${name}.json`);
  if (!existsSync(path)) return undefined;
  try {
    const text = readFileSync(path, 'utf8').trim();
    return text ? JSON.parse(text.split('\n').pop()) : undefined;
  } catch (e) {
    return { error: String(e) };
  }
};
const f = (x, d = 1) => (typeof x === 'number' && Number.isFinite(x) ? x.toFixed(d) : '-');
const median = (xs) => {
  if (!xs?.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

for (const v of ['auto', 'register']) {
  const d = read(`doctor-${v}`);
  if (!d?.results) {
    console.log(`doctor ${v}: no result`);
    continue;
  }
  const failed = d.results.filter((r) => !r.pass);
  console.log(
    `doctor ${v}: adapter ${d.adapter.vendor} / ${d.adapter.architecture} / ${d.adapter.description}, variant ${d.adapter.kernelVariant}, ` +
      `shader-f16 ${d.adapter.features.includes('shader-f16')}, subgroups ${d.adapter.features.includes('subgroups')}: ` +
      `${d.results.length - failed.length}/${d.results.length} pass`,
  );
  for (const r of failed) console.log(`  FAIL ${r.ranAs || r.kernel}: ${r.message}`);
  for (const r of d.results.filter((r) => r.label.includes('f16-math'))) console.log(`  ${r.ranAs}: ${r.message}`);
  // The ViT attention plans on the same inputs (the self-check's cases: one run each, so a rough comparison).
  for (const r of d.results.filter((r) => r.kernel === 'vit-attention')) console.log(`  ${r.label}: ${f(r.gpuMs, 2)} ms`);
}

console.log('\nrun (bench model, 64 tokens)   load s  encode ms  prefill ms  TTFT ms  decode tok/s  step p50 ms  weights MiB  peak MiB');
const runs = {};
/** One row of the run table: `name` read from <name>.json (tessera run --json). */
function runRow(label, name) {
  const r = (runs[label] = read(name));
  const t = r?.timings;
  if (!t) {
    console.log(`${label.padEnd(30)} no result`);
    return;
  }
  console.log(
    `${label.padEnd(30)} ${f(t.loadMs / 1000).padStart(6)} ${f(t.encodeMs, 0).padStart(10)} ${f(t.prefillMs, 0).padStart(11)} ` +
      `${f(t.ttftMs, 0).padStart(8)} ${f(t.decodeTokensPerSecond).padStart(13)} ${f(median(t.decodeStepMs), 2).padStart(12)} ${f(r.weights.gpuBytes / 2 ** 20, 0).padStart(12)} ${f(r.gpu_peak_bytes / 2 ** 20, 0).padStart(9)}`,
  );
}
for (const v of ['workgroup', 'separate', 'fused', 'register', 'f16-math', 'q4']) runRow(v, `run-${v}`);
const compared = readdirSync(dir)
  .filter((n) => /^(base|head)-.*\.json$/.test(n))
  .map((n) => n.replace(/\.json$/, ''))
  .sort();
if (compared.length) console.log('previous tree (base) against this one (head):');
for (const v of compared) runRow(v, v);
const ids = (v) => runs[v]?.token_ids ?? [];
const agree = (a, b) => {
  const x = ids(a),
    y = ids(b);
  let n = 0;
  while (n < Math.min(x.length, y.length) && x[n] === y[n]) n++;
  return `${n}/${Math.max(x.length, y.length)}`;
};
console.log(
  `greedy tokens equal before the first difference: workgroup vs register ${agree('workgroup', 'register')}, ` +
    `f16-math vs workgroup ${agree('f16-math', 'workgroup')}, q4 vs workgroup ${agree('q4', 'workgroup')}` +
    compared
      .filter((v) => v.startsWith('base-512'))
      .map((v) => `, ${v} vs head-${v.slice(5)} ${agree(v, `head-${v.slice(5)}`)}`)
      .join(''),
);
// Each tree's mean over its requests of one length, and head / base.
for (const n of ['64', '512']) {
  const mean = (tree, key) => {
    const xs = compared
      .filter((v) => v.startsWith(`${tree}-${n}-`))
      .map((v) => runs[v]?.timings?.[key])
      .filter((x) => typeof x === 'number');
    return xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN;
  };
  const [bd, hd, bt, ht] = [
    mean('base', 'decodeTokensPerSecond'),
    mean('head', 'decodeTokensPerSecond'),
    mean('base', 'ttftMs'),
    mean('head', 'ttftMs'),
  ];
  if (Number.isFinite(bd) && Number.isFinite(hd)) {
    console.log(
      `${n} tokens, mean of each tree: decode ${f(bd)} -> ${f(hd)} tok/s (${f(hd / bd, 2)}x), TTFT ${f(bt, 0)} -> ${f(ht, 0)} ms (${f(ht / bt, 2)}x)`,
    );
  }
}

for (const v of ['workgroup', 'register']) {
  const p = read(`profile-${v}`);
  if (!p?.phases) {
    console.log(`\nprofile ${v}: no result`);
    continue;
  }
  console.log(`\nprofile ${v} (${p.timing}, ${p.adapter}):`);
  for (const ph of p.phases) {
    const top = ph.rows
      .slice(0, 4)
      .map((r) => `${r.kind} ${f(r.ms, 3)}${r.gflops ? ` (${f(r.gflops, 0)} GFLOP/s)` : ''}`)
      .join(', ');
    console.log(`  ${ph.name.padEnd(14)} ${f(ph.totalMs, 3).padStart(9)} ms in ${ph.dispatches} dispatches: ${top}`);
  }
}
// The tiny Qwen-VL checkpoints against the float64 reference (bench/gpu/qwen-cases.mjs chose the requests).
const goldenPath = 'test/fixtures/goldens/qwen-pipeline.json';
const qwenRuns = readdirSync(dir).filter((n) => /^qwen-.*\.json$/.test(n));
if (qwenRuns.length && existsSync(goldenPath)) {
  const golden = JSON.parse(readFileSync(goldenPath, 'utf8'));
  console.log('\ntiny Qwen-VL checkpoints against the reference (greedy tokens equal before the first difference):');
  for (const m of golden.models) {
    const cells = m.cases.flatMap((c) => {
      const r = read(`qwen-${m.checkpoint}-${c.id}`);
      if (!r) return [];
      const got = r.token_ids ?? [];
      let n = 0;
      while (n < Math.min(got.length, c.tokens.length) && got[n] === c.tokens[n]) n++;
      return [`${c.id} ${n}/${c.tokens.length}${r.error ? ` (${r.error})` : ''}`];
    });
    if (cells.length) console.log(`  ${m.checkpoint}: ${cells.join(', ')}`);
  }
}
for (const bq of [read('bench-qwen'), read('bench-qwen-binding')]) {
  for (const r of bq?.results ?? []) {
    console.log(
      `\nbench:model --family ${r.family} (${bq.tokens} new tokens; load ${f(r.loadMs / 1000)} s; peak GPU ${f(r.peakGpuBytes / 2 ** 20, 0)} MiB` +
        `${r.maxBinding ? `; bindings of ${f(r.maxBinding / 2 ** 20, 0)} MiB, the embedding in ${r.embedParts} parts` : ''}):`,
    );
    for (const x of r.rows)
      console.log(
        `  ${x.image.padEnd(9)} grid ${x.warm.grid.padEnd(9)} ${String(x.warm.imageTokens).padStart(5)} image tokens: encode ${f(x.cold.encodeMs, 0)} / ${f(x.warm.encodeMs, 0)} ms, ` +
          `TTFT ${f(x.cold.ttftMs, 0)} / ${f(x.warm.ttftMs, 0)} ms (cold / warm), prefill ${f(x.warm.prefillTokensPerSecond, 0)} tok/s, decode ${f(x.warm.decodeTokensPerSecond)} tok/s`,
      );
  }
  if (bq && !bq.results) console.log(`\nbench:model --family: ${JSON.stringify(bq).slice(0, 300)}`);
}
// The GGUF load step: the Qwen2.5-VL bench model as a Q4_K_M pair against bf16 -> q4 (the goal: >= 3x).
const loads = (kind) => [1, 2].map((i) => read(`load-${kind}-${i}`)?.timings?.loadMs).filter((x) => typeof x === 'number');
const [gguf, q4] = [loads('gguf'), loads('q4')];
if (gguf.length || q4.length) {
  console.log(
    `\nload of the Qwen2.5-VL bench model: GGUF Q4_K_M ${gguf.map((x) => f(x / 1000)).join(' / ')} s, bf16 -> q4 ` +
      `${q4.map((x) => f(x / 1000)).join(' / ')} s: GGUF ${f(median(q4) / median(gguf), 2)}x as fast (goal >= 3x)`,
  );
}
console.log(
  '\n' +
    JSON.stringify({
      runs: Object.fromEntries(
        Object.entries(runs).map(([k, r]) => [k, r?.timings ? { ...r.timings, decodeStepMs: undefined, decodeStepEnd: undefined } : null]),
      ),
    }),
);
