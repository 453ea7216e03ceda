// The Chromium half of `npm run bench:model -- --family ...`: the images as PNGs beside the checkpoint
// (bench-input/), the peer's ONNX export (qwen-peer-export.ts), then qwen.html on the benchmarks' Vite
// server (ours, then transformers.js, in one page on the same adapter) and its figures.

import { mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { launchBenchPage, runBenchPage } from '../harness/browser';
import { startBenchServer } from '../harness/server';
import { ensureQwenPeerExport, type PeerExport } from './qwen-peer-export';
import type { QwenPageResult, Skipped } from './qwen-result';

export interface QwenBrowserRun {
  family: string;
  /** The bench checkpoint's folder (under .cache/bench-models/, which the server serves at /). */
  dir: string;
  repoRoot: string;
  images: ReadonlyArray<[string, Uint8Array]>;
  tokens: number;
  reps: number;
  ours: boolean;
  peer: boolean;
  timeoutMs: number;
  log: (line: string) => void;
}

export interface QwenBrowserResult {
  chromium: string;
  export: PeerExport | Skipped;
  page: QwenPageResult;
}

const OPTIONAL_404 = (text: string) => text.startsWith('Failed to load resource: the server responded with a status of 404');

export async function runQwenBrowser(run: QwenBrowserRun): Promise<QwenBrowserResult> {
  const input = join(run.dir, 'bench-input');
  mkdirSync(input, { recursive: true });
  for (const [label, png] of run.images) writeFileSync(join(input, `${label}.png`), png);
  let exported: PeerExport | Skipped = { skipped: 'not requested (--no-peer)' };
  if (run.peer) {
    try {
      exported = ensureQwenPeerExport(run.dir, run.repoRoot, run.log);
    } catch (e) {
      exported = { skipped: `the ONNX export failed: ${e instanceof Error ? e.message : String(e)}` };
      run.log(exported.skipped);
    }
  }
  const server = await startBenchServer({ root: join(run.repoRoot, 'bench/model'), repoRoot: run.repoRoot, publicDir: dirname(run.dir) });
  try {
    const b = await launchBenchPage(server, { quiet: OPTIONAL_404 });
    try {
      const q = new URLSearchParams({
        model: basename(run.dir),
        peerModel: `${basename(run.dir)}-peer`,
        family: run.family,
        images: run.images.map(([label]) => label).join(','),
        tokens: String(run.tokens),
        reps: String(run.reps),
        ours: run.ours ? '1' : '0',
        peer: 'dir' in exported ? '1' : '0',
      });
      const url = `${b.url}qwen.html?${q}`;
      run.log(`Chromium ${b.version}, page ${url}`);
      const page = await runBenchPage<QwenPageResult>(
        b.page,
        url,
        { result: '__qwenBenchResult', error: '__qwenBenchError' },
        run.timeoutMs,
      );
      if (!('dir' in exported) && !('skipped' in page.peer)) throw new Error('the page ran a peer that was not exported');
      if (!('dir' in exported)) page.peer = exported;
      return { chromium: b.version, export: exported, page };
    } finally {
      await b.close();
    }
  } finally {
    await server.close();
  }
}
