// transformers.js alone, without our engine: the peer page of `npm run bench:audio` (audio-peer.ts) on the same
// server and Chromium set-up, after the same on-demand export. For measuring the peer apart from ours (ours'
// figures come from `npm run bench:audio -- --no-peer`). Prints the peer's JSON figures.
//
//   nice -n 19 npx tsx bench/audio/audio-peer-run.ts [--tokens=N] [--no-recording] [--timeout-min=N]

import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openBenchBrowser, runBenchPage } from '../harness/browser';
import { ensureAudioOnnxExport } from './audio-export';
import { AUDIO_BENCH_MODEL_DIR, ensureAudioBenchModel } from './audio-model';
import type { AudioPeerFigures } from './audio-peer';
import { makePeerPcm } from './audio-peer-input';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(here, '../..');
const log = (line: string) => console.log(`[bench] ${line}`);
const arg = (name: string) => process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1];

async function main(): Promise<void> {
  ensureAudioBenchModel(log);
  const exported = await ensureAudioOnnxExport(AUDIO_BENCH_MODEL_DIR, repoRoot, log);
  const clipDir = join(dirname(AUDIO_BENCH_MODEL_DIR), 'bench-audio-clips');
  makePeerPcm(clipDir);
  const b = await openBenchBrowser({ root: here, repoRoot, publicDir: dirname(AUDIO_BENCH_MODEL_DIR) });
  try {
    const query = new URLSearchParams({
      model: relative(dirname(AUDIO_BENCH_MODEL_DIR), AUDIO_BENCH_MODEL_DIR),
      tokens: arg('tokens') ?? '32',
      recording: process.argv.includes('--no-recording') ? '0' : '1',
    });
    const p = await runBenchPage<AudioPeerFigures>(
      b.page,
      `${b.url}audio-peer.html?${query}`,
      { result: '__audioPeerResult', error: '__audioPeerError' },
      Number(arg('timeout-min') ?? 60) * 60_000,
    );
    console.log(JSON.stringify({ bench: 'audio-peer', ...p, ortCheck: exported.ortCheck }));
  } finally {
    await b.close();
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? `${e.name}: ${e.message}` : e);
  process.exitCode = 1;
});
