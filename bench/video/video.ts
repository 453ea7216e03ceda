// `npm run bench:video`: a 10-second clip (640x360, 30 fps, H.264) asked about in headless Chromium on the
// SmolVLM2-256M shape (random weights, bench/video/video-model.ts): demux + decode ms (WebCodecs, in the
// encoder worker), encode ms per frame, TTFT and decode tokens/s; the same clip asked again (the whole-clip
// and frame caches); EVS at q = 0.5 against q = 0 (video tokens and TTFT); and the peak memory of the page
// while the clip is decoded and encoded (resident memory of Chromium's processes, sampled every 100 ms,
// above the level just before). Prints a table and ends with ONE JSON line holding every figure.
//
// Flags: --tokens=N (decode tokens, default 32)  --timeout-min=N (default 120)

import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openBenchBrowser, runBenchPage } from '../harness/browser';
import { ensureVideoBenchModel, VIDEO_BENCH_MODEL_DIR } from './video-model';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '../..');
const log = (line: string) => console.log(`[bench] ${line}`);
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];
const tokens = Number(arg('tokens') ?? 32);
const timeoutMs = Number(arg('timeout-min') ?? 120) * 60_000;

/** ffmpeg's test patterns, H.264 (deterministic): the 10 s clip and a different 2 s warm-up clip. */
function makeClips(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const encode = (file: string, source: string, seconds: number) => {
    if (existsSync(join(dir, file))) return;
    execFileSync('ffmpeg', [
      '-hide_banner',
      '-loglevel',
      'error',
      '-f',
      'lavfi',
      '-i',
      `${source}=size=640x360:rate=30`,
      '-t',
      String(seconds),
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-pix_fmt',
      'yuv420p',
      '-threads',
      '1',
      '-y',
      join(dir, file),
    ]);
  };
  encode('clip-10s.mp4', 'testsrc2', 10);
  encode('warm-2s.mp4', 'smptebars', 2);
}

/** Resident memory (bytes) of Chromium (started by this process) and all its processes: renderers, GPU, utility. */
function chromiumRss(): number {
  const children = new Map<number, number[]>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(d)]);
    } catch {
      // exited meanwhile
    }
  }
  const comm = (pid: number) => {
    try {
      return readFileSync(`/proc/${pid}/comm`, 'utf8');
    } catch {
      return '';
    }
  };
  let total = 0;
  const stack = (children.get(process.pid) ?? []).filter((p) => /chrom/i.test(comm(p)));
  while (stack.length) {
    const pid = stack.pop()!;
    try {
      const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      if (m) total += Number(m[1]) * 1024;
    } catch {
      // exited meanwhile
    }
    stack.push(...(children.get(pid) ?? []));
  }
  return total;
}

interface Phase {
  promptTokens: number;
  videoTokens: number;
  unprunedVideoTokens: number;
  frames: number;
  source: string;
  framesDecoded: number;
  framesEncoded: number;
  demuxMs: number;
  decodeMs: number;
  processMs: number;
  encodeMs: number;
  prefillMs: number;
  ttftMs: number;
  decodeTokensPerSecond: number;
}

async function main(): Promise<void> {
  const started = Date.now();
  log(
    'bench model = SmolVLM2-256M-Video shape (= SmolVLM-256M: vision 768 x 12 at 512 px, 64 tokens per frame; text 576 x 30), random weights',
  );
  log(
    'clip = 10 s, 640x360, 30 fps, H.264 (ffmpeg testsrc2); sampling fps 1 -> 10 frames; frames resized 640x360 -> 2048x1152 -> 512x512 as HF does',
  );
  log(
    `machine: ${cpus().length} cores, load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')} at start`,
  );
  await ensureVideoBenchModel(log);
  const clipDir = join(dirname(VIDEO_BENCH_MODEL_DIR), 'bench-video-clips');
  makeClips(clipDir);
  const b = await openBenchBrowser({ root: here, repoRoot, publicDir: dirname(VIDEO_BENCH_MODEL_DIR) });
  const samples: Array<[number, number]> = [];
  const phases = new Map<string, { start?: number; end?: number }>();
  b.page.on('console', (m) => {
    const x = /^\[bench\] phase (\S+) (start|end) (\d+)/.exec(m.text());
    if (x) phases.set(x[1], { ...phases.get(x[1]), [x[2]]: Number(x[3]) });
  });
  const sampler = setInterval(() => samples.push([Date.now(), chromiumRss()]), 100);
  let r: { tokens: number; clipBytes: number; cold: Phase; again: Phase; evs: { q05: Phase; q0: Phase } };
  try {
    const model = relative(dirname(VIDEO_BENCH_MODEL_DIR), VIDEO_BENCH_MODEL_DIR);
    r = await runBenchPage(
      b.page,
      `${b.url}video.html?${new URLSearchParams({ model, tokens: String(tokens) })}`,
      { result: '__videoBenchResult', error: '__videoBenchError' },
      timeoutMs,
    );
  } finally {
    clearInterval(sampler);
    await b.close();
  }
  const cold = phases.get('cold') ?? {};
  const before = samples.filter(([t]) => t <= (cold.start ?? 0)).at(-1)?.[1] ?? 0;
  const during = samples.filter(([t]) => t >= (cold.start ?? 0) && t <= (cold.end ?? 0)).map(([, v]) => v);
  const peak = Math.max(...during);
  const mib = (x: number) => `${(x / 2 ** 20).toFixed(0)} MiB`;
  const c = r.cold;
  const line = (label: string, p: Phase) =>
    `${label.padEnd(26)} ${String(p.videoTokens).padStart(6)} ${String(p.promptTokens).padStart(7)} ${String(p.framesDecoded).padStart(8)} ${String(p.framesEncoded).padStart(8)} ` +
    `${(p.demuxMs + p.decodeMs).toFixed(0).padStart(9)} ${p.encodeMs.toFixed(0).padStart(9)} ${p.ttftMs.toFixed(0).padStart(9)} ${p.decodeTokensPerSecond.toFixed(1).padStart(8)}`;
  console.log(
    `\nVideo: 10 s clip (${(r.clipBytes / 1024).toFixed(0)} KB), ${c.frames} sampled frames, ${tokens} decode tokens; prefix caching off (see the page header)`,
  );
  console.log('request                    video  prompt  decoded  encoded  demux+dec    encode      TTFT   tok/s');
  console.log('                          tokens  tokens   frames   frames       (ms)      (ms)      (ms)');
  console.log(line('cold (q = 0)', c));
  console.log(line('same clip again', r.again));
  console.log(line('EVS q = 0.5 (frames cached)', r.evs.q05));
  console.log(line('EVS q = 0   (frames cached)', r.evs.q0));
  console.log(
    `\ncold: demux ${c.demuxMs.toFixed(0)} ms + decode/resize ${c.decodeMs.toFixed(0)} ms for ${c.frames} frames; encode ${(c.encodeMs / c.frames).toFixed(0)} ms per frame (${c.encodeMs.toFixed(0)} ms for all, in batches)`,
  );
  console.log(
    `again: TTFT ${((r.again.ttftMs / c.ttftMs) * 100).toFixed(1)}% of cold (${r.again.framesDecoded} frames decoded, ${r.again.framesEncoded} encoded)`,
  );
  console.log(
    `EVS q = 0.5: ${r.evs.q05.videoTokens} of ${r.evs.q05.unprunedVideoTokens} video tokens (${r.evs.q05.unprunedVideoTokens - r.evs.q05.videoTokens} saved); TTFT ${r.evs.q05.ttftMs.toFixed(0)} ms vs ${r.evs.q0.ttftMs.toFixed(0)} ms at q = 0 (${((r.evs.q05.ttftMs / r.evs.q0.ttftMs) * 100).toFixed(1)}%)`,
  );
  console.log(
    `page memory while the clip decodes and encodes: peak ${mib(peak)} resident (Chromium processes), ${mib(peak - before)} above the ${mib(before)} before`,
  );
  console.log(
    JSON.stringify({
      bench: 'video',
      adapter: 'headless Chromium, WebGPU',
      model: 'SmolVLM2-256M-Video shape, random weights',
      cores: cpus().length,
      ...r,
      memory: { beforeBytes: before, peakBytes: peak, peakAboveBeforeBytes: peak - before, samples: during.length },
      totalSeconds: (Date.now() - started) / 1000,
      loadAverageEnd: loadavg(),
    }),
  );
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
