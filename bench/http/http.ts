// `npm run bench:http`: tessera serve (the built command, in its own process) on the SmolVLM-256M shape
// (real config, random weights) under 1, 4, 16 and 64 concurrent openai clients, each streaming one answer,
// against the in-process engine (the built package, in its own process) under the same load: aggregate
// tokens/s, TTFT p50/p95 and inter-token p50/p95 side by side, the ratio HTTP / in-process (goal >= 0.9x).
// Ends with ONE JSON line holding every figure.
//
// Flags: --levels=1,4,16,64  --tokens=N (max_tokens per request, default 32)  --device=auto|webgpu|cpu
//        (default auto: what tessera serve picks here)  --order=in-process,http (which side runs first)
//        --model=<dir> (another checkpoint instead of the bench model, e.g. public/models/smolvlm-tiny)
//        --no-remote (skip the remote engine's embeds-vs-raw figures)

import { type ChildProcess, spawn } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import OpenAI from 'openai';
import { build } from 'vite';
import { BENCH_MODEL_DIR, ensureBenchModel } from '../../scripts/make-bench-model';
import { BENCH_IMAGE } from '../model/model-request';
import { startServeProcess } from '../../test/helpers/serve-process';
import { table } from '../harness/table';
import { ensureOnnxExport } from '../model/model-export';
import { writeBenchInput } from '../model/model-inputs';
import { type LoadFigures, loadPrompt, runLoad } from './load';

const repoRoot = join(import.meta.dirname, '../..');
const log = (line: string) => console.log(`[bench] ${line}`);
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const levels = (arg('levels') ?? '1,4,16,64').split(',').map(Number);
const tokens = Number(arg('tokens') ?? 32);
const device = arg('device') ?? 'auto';
const order = (arg('order') ?? 'in-process,http').split(',');
const model = arg('model') ?? BENCH_MODEL_DIR;
const withRemote = !process.argv.includes('--no-remote');

class BenchHttpError extends Error {
  override readonly name = 'BenchHttpError';
}

/** Run a child to its end, its stdout's JSON lines as values; stderr passes through with a prefix. */
function jsonLines(child: ChildProcess, label: string): Promise<unknown[]> {
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr?.setEncoding('utf8').on('data', (d: string) => process.stderr.write(d.replace(/^/gm, `[${label}] `)));
    child.once('exit', (code) => {
      if (code !== 0) reject(new BenchHttpError(`${label} exited with ${code}`));
      else
        resolve(
          out
            .split('\n')
            .filter((l) => l.startsWith('{'))
            .map((l) => JSON.parse(l)),
        );
    });
  });
}

async function inProcess(): Promise<{ device: unknown; levels: LoadFigures[] }> {
  log(`in-process: the built engine under ${levels.join(', ')} concurrent requests`);
  const child = spawn('npx', ['tsx', join(repoRoot, 'bench/http/in-process.ts'), model, device, String(tokens), levels.join(',')], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const [first, ...rest] = (await jsonLines(child, 'in-process')) as [{ device: unknown }, ...LoadFigures[]];
  return { device: first.device, levels: rest };
}

interface RemoteFigures {
  media: 'embeds' | 'raw';
  mode: string;
  fallback: string | null;
  imageBytesSent: number;
  asks: Array<{ ask: string; requestBytes: number; ttftMs: number; totalMs: number }>;
}

async function overHttp(): Promise<{ device: string; levels: LoadFigures[]; remote: RemoteFigures[] | null }> {
  log(`http: tessera serve under ${levels.join(', ')} concurrent openai clients`);
  const server = await startServeProcess(
    ['--model', model, '--served-model-name', 'bench', '--port', '0', '--device', device, '--enable-mm-embeds'],
    600_000,
  );
  try {
    const ready = server.events.find((e) => e.event === 'ready')!;
    const client = new OpenAI({ baseURL: `${ready.url}/v1`, apiKey: 'none', maxRetries: 0 });
    const ask = (prompt: string, maxTokens: number) =>
      client.chat.completions.create({
        model: 'bench',
        messages: [{ role: 'user', content: prompt }],
        max_tokens: maxTokens,
        stream: true,
        stream_options: { include_usage: true },
      });
    for await (const _ of await ask('warm up', 4));
    const out: LoadFigures[] = [];
    for (const level of levels) out.push(await runLoad(level, (i) => ask(loadPrompt(level, i), tokens)));
    let remote: RemoteFigures[] | null = null;
    if (withRemote) {
      log('remote engine: the bench image asked about twice, embeds and raw, from another process');
      const client = spawn('npx', ['tsx', join(repoRoot, 'bench/http/remote.ts'), ready.url, model, device, join(repoRoot, BENCH_IMAGE)], {
        cwd: repoRoot,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      remote = (await jsonLines(client, 'remote')) as RemoteFigures[];
    }
    return { device: ready.device ?? '', levels: out, remote };
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
  }
}

if (model === BENCH_MODEL_DIR) {
  await ensureBenchModel(log);
  if (device !== 'webgpu') {
    await writeBenchInput(BENCH_MODEL_DIR, repoRoot); // what the export checks its graphs against
    await ensureOnnxExport(BENCH_MODEL_DIR, repoRoot, log);
  }
}
log('building the package (vite build --mode lib)');
await build({ mode: 'lib', logLevel: 'warn', configFile: join(repoRoot, 'vite.config.ts') });
log(`machine: ${cpus().length} cores, load average ${loadavg()[0].toFixed(2)}; ${tokens} tokens per request`);

const results: { inProcess?: Awaited<ReturnType<typeof inProcess>>; http?: Awaited<ReturnType<typeof overHttp>> } = {};
for (const side of order) {
  if (side === 'in-process') results.inProcess = await inProcess();
  else if (side === 'http') results.http = await overHttp();
  else throw new BenchHttpError(`--order takes in-process and http, got '${side}'`);
}

const f1 = (v: number | undefined) => (v === undefined ? '-' : v.toFixed(1));
const rows = levels.map((level) => {
  const a = results.inProcess?.levels.find((l) => l.concurrency === level);
  const b = results.http?.levels.find((l) => l.concurrency === level);
  const ratio = a && b ? b.tokensPerSecond / a.tokensPerSecond : undefined;
  return {
    level,
    a,
    b,
    ratio,
    cells: [
      String(level),
      f1(a?.tokensPerSecond),
      f1(b?.tokensPerSecond),
      ratio === undefined ? '-' : `${ratio.toFixed(2)}x`,
      `${f1(a?.ttftMs.p50)} / ${f1(a?.ttftMs.p95)}`,
      `${f1(b?.ttftMs.p50)} / ${f1(b?.ttftMs.p95)}`,
      `${f1(a?.interTokenMs.p50)} / ${f1(a?.interTokenMs.p95)}`,
      `${f1(b?.interTokenMs.p50)} / ${f1(b?.interTokenMs.p95)}`,
    ],
  };
});
console.log(
  `\nmodel: ${model === BENCH_MODEL_DIR ? 'SmolVLM-256M-Instruct shape, random weights' : model}; text prompts, ${tokens} tokens each, streamed; ` +
    `device: ${results.http?.device ?? JSON.stringify(results.inProcess?.device)}\n`,
);
console.log(
  table(
    [
      'concurrent',
      'in-process tok/s',
      'http tok/s',
      'http / in-process',
      'TTFT ms p50/p95 (in-process)',
      'TTFT ms p50/p95 (http)',
      'ITL ms p50/p95 (in-process)',
      'ITL ms p50/p95 (http)',
    ],
    rows.map((r) => r.cells),
  ),
);
const goals = rows.map((r) => ({
  goal: `http >= 0.9x in-process tokens/s at ${r.level} concurrent`,
  measured: r.ratio ?? null,
  met: r.ratio === undefined ? null : r.ratio >= 0.9,
}));
console.log(
  `\ngoals: ${goals.map((g) => `${g.goal}: ${g.measured === null ? 'not measured' : `${g.measured.toFixed(2)}x ${g.met ? 'met' : 'NOT met'}`}`).join('; ')}`,
);
const remote = results.http?.remote ?? null;
if (remote) {
  console.log('\nremote engine (createRemoteEngine in another process, images encoded there; 8 tokens per ask, streamed):\n');
  console.log(
    table(
      ['media', 'ask', 'request bytes', 'TTFT ms', 'total ms'],
      remote.flatMap((m) => m.asks.map((a) => [m.media, a.ask, String(a.requestBytes), a.ttftMs.toFixed(0), a.totalMs.toFixed(0)])),
    ),
  );
  const e = remote.find((m) => m.media === 'embeds');
  const r = remote.find((m) => m.media === 'raw');
  if (e && r) {
    console.log(
      `\nembeds / raw: first ask ${(e.asks[0].requestBytes / r.asks[0].requestBytes).toFixed(2)}x the bytes, ` +
        `second ask ${(e.asks[1].requestBytes / r.asks[1].requestBytes).toFixed(3)}x; image bytes sent in embeds mode: ${e.imageBytesSent}`,
    );
  }
} else {
  console.log('remote engine: not measured (--no-remote)');
}
console.log(
  JSON.stringify({
    bench: 'http',
    model: model === BENCH_MODEL_DIR ? 'SmolVLM-256M shape, random weights' : model,
    tokensPerRequest: tokens,
    device: results.http?.device ?? results.inProcess?.device,
    machine: { cores: cpus().length, loadAverage: loadavg()[0] },
    levels: rows.map((r) => ({ concurrency: r.level, inProcess: r.a ?? null, http: r.b ?? null, ratio: r.ratio ?? null })),
    remote,
    goals,
  }),
);
