// Browser half of `npm run bench:model`'s cpu column: our engine on the CPU backend (createEngine({ device:
// 'wasm' }): onnxruntime-web's WebAssembly build over the bench checkpoint's ONNX export; measured by
// model-cpu-ours.ts as in Node: a first request dropped, then `reps` measured, medians), then transformers.js
// on its 'wasm' device with the same three files (model-peer.ts: the same count of requests on the same
// sessions, medians), one after the other in this page. The page is not cross-origin isolated, so both run
// onnxruntime-web on one thread.
// Query: model=<folder served at /> tokens=N reps=N peer=0|1

import sampleUrl from '../../public/sample.png?url';
import { createEngine } from '../../src/engine/create-browser';
import { UrlSource } from '../../src/io/model-source';
import { GpuProbe } from './gpu-probe';
import { describeSide, medianSide, oursConcurrent, oursRequest } from './model-cpu-ours';
import { runPeer } from './model-peer';
import type { BenchInput } from './model-request';
import type { CpuSide, OursCpuFigures, PeerFigures, Skipped, WasmPageFigures } from './model-result';

declare global {
  interface Window {
    __wasmBenchResult?: WasmPageFigures;
    __wasmBenchError?: string;
  }
}

class WasmPageError extends Error {
  override readonly name = 'WasmPageError';
}

const log = (message: string) => console.log(`[bench] ${message}`);
const errorText = (e: unknown) => (e instanceof Error ? `${e.name}: ${e.message}` : String(e));

async function fetchBytes(url: string): Promise<Uint8Array> {
  const r = await fetch(url);
  if (!r.ok) throw new WasmPageError(`${url}: HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

async function runOurs(modelUrl: string, png: Uint8Array, maxNewTokens: number, reps: number): Promise<OursCpuFigures> {
  const t0 = performance.now();
  const model = new UrlSource(new URL(modelUrl, location.href).href, { useCache: false });
  const engine = await createEngine({
    model,
    device: 'wasm',
    encoder: { mode: 'in-process', persistentCacheBytes: 0 },
    kvCacheTokens: 16384,
  });
  const loadMs = performance.now() - t0;
  log(`wasm ours: loaded in ${(loadMs / 1000).toFixed(1)} s (${engine.stats().device.reason})`);
  try {
    const runs: CpuSide[] = [];
    for (let i = 0; i <= reps; i++) {
      const r = await oursRequest(engine, png, i, maxNewTokens);
      log(describeSide(`wasm ours ${i === 0 ? 'cold' : `warm ${i}`}`, r));
      if (i > 0) runs.push(r);
    }
    const side = medianSide(runs);
    const concurrent = await oursConcurrent(engine, { png, maxNewTokens, oneDecode: side.decodeTokensPerSecond, label: 'wasm ours', log });
    return { ...side, loadMs, concurrent };
  } finally {
    engine.destroy();
  }
}

async function main(): Promise<WasmPageFigures> {
  const q = new URLSearchParams(location.search);
  const modelId = q.get('model') ?? 'smolvlm-256m-random';
  const tokens = Number(q.get('tokens') ?? 64);
  const reps = Number(q.get('reps') ?? 5);
  const modelUrl = `/${modelId}/`;
  const png = await fetchBytes(sampleUrl);
  const ours = await runOurs(modelUrl, png, tokens, reps);
  let peer: PeerFigures | Skipped = { skipped: 'not run (peer=0: --no-peer)' };
  if (q.get('peer') === '1') {
    try {
      const input = (await (await fetch(`${modelUrl}bench-input/input.json`)).json()) as BenchInput;
      const pixels = await fetchBytes(`${modelUrl}bench-input/pixel_values.f32`);
      peer = await runPeer({
        modelId,
        imageUrl: new URL(sampleUrl, location.href).href,
        maxNewTokens: tokens,
        ourInputIds: input.inputIds,
        ourPixels: new Float32Array(pixels.buffer, pixels.byteOffset, pixels.byteLength / 4),
        ownPixels: false,
        device: 'wasm',
        warmRuns: reps,
        probe: new GpuProbe(),
        log,
      });
      log(
        `wasm peer: tile ${peer.encodeMsPerTile.toFixed(0)} ms, TTFT ${peer.ttftMs.toFixed(0)} ms, decode ${peer.decodeTokensPerSecond.toFixed(1)} tok/s; ` +
          `tokens ${JSON.stringify(peer.tokenIds)}`,
      );
    } catch (e) {
      peer = { skipped: `transformers.js (wasm) failed: ${errorText(e)}` };
      log(peer.skipped);
    }
  }
  return { userAgent: navigator.userAgent, crossOriginIsolated: globalThis.crossOriginIsolated === true, ours, peer };
}

main().then(
  (result) => {
    window.__wasmBenchResult = result;
  },
  (e: unknown) => {
    window.__wasmBenchError = e instanceof Error ? `${e.name}: ${e.message}\n${e.stack ?? ''}` : String(e);
  },
);
