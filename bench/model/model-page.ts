// Browser side of `npm run bench:model`: our engine, then transformers.js (bench/model/model-peer.ts), one after
// the other in this page on the same WebGPU adapter, with the same image and prompt, greedy. Progress goes
// to the console (the runner streams it); the figures to window.__modelBenchResult (or a message in
// window.__modelBenchError).
// Query: model=<folder served at /> tokens=N reps=N ours=0|1 peer=0|1 ownPixels=0|1 dtypes=f32,q4 (ours per weight dtype)
//        profile=0|1 (engine.profile() after ours' requests)

import sampleUrl from '../../public/sample.png?url';
import { createEngine } from '../../src/engine/create-browser';
import { adapterName } from '../../src/gpu/adapter-info';
import { createBrowserGpuContext } from '../../src/gpu/browser';
import { UrlSource } from '../../src/io/model-source';
import type { WeightDtype } from '../../src/model/weights/dtype';
import { GpuProbe } from './gpu-probe';
import { BENCH_ENCODER_OPTIONS, describeEncoderOptions } from './model-engine-options';
import { measureContextCost, measureOurs, profileOurs } from './model-ours';
import { runPeer } from './model-peer';
import type { BenchInput } from './model-request';
import type { BrowserFigures, OursFigures, PeerFigures, Skipped } from './model-result';

declare global {
  interface Window {
    __modelBenchResult?: BrowserFigures;
    __modelBenchError?: string;
  }
}

class BenchPageError extends Error {
  override readonly name = 'BenchPageError';
}

function log(message: string): void {
  console.log(`[bench] ${message}`);
}

function errorText(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

async function fetchBytes(url: string): Promise<Uint8Array | undefined> {
  const r = await fetch(url);
  if (!r.ok) return undefined;
  return new Uint8Array(await r.arrayBuffer());
}

async function fetchF32(url: string): Promise<Float32Array | undefined> {
  const b = await fetchBytes(url);
  return b ? new Float32Array(b.buffer, b.byteOffset, b.byteLength / 4) : undefined;
}

/** The adapter createEngine will get (same request), for the report. */
async function describeAdapter(): Promise<{ adapter: string; kernelVariant: string }> {
  const gpu = await createBrowserGpuContext();
  try {
    return { adapter: adapterName(gpu.adapter), kernelVariant: gpu.kernelVariant };
  } finally {
    gpu.destroy();
  }
}

async function runOurs(
  modelUrl: string,
  image: Uint8Array,
  tokens: number,
  reps: number,
  probe: GpuProbe,
  dtype: WeightDtype,
  profile: boolean,
): Promise<OursFigures> {
  const { adapter, kernelVariant } = await describeAdapter();
  log(`ours (browser, ${dtype}): adapter ${adapter}, kernel variant ${kernelVariant}; loading ${modelUrl}`);
  probe.reset();
  const t0 = performance.now();
  // No Cache API copy of the weights: they come from the local dev server, and a 0.5 GB cache write is not
  // load. No stored quantized copy either: every load here quantizes (Node measures the stored-copy load).
  const model = new UrlSource(new URL(modelUrl, location.href).href, { useCache: false });
  const engine = await createEngine({ model, device: 'webgpu', encoder: BENCH_ENCODER_OPTIONS, dtype, weightCache: false });
  const loadMs = performance.now() - t0;
  log(`ours (browser): loaded in ${(loadMs / 1000).toFixed(1)} s`);
  try {
    const figures = await measureOurs(engine, {
      env: 'browser',
      dtype,
      adapter,
      kernelVariant,
      engineOptions: `${describeEncoderOptions()}; dtype '${dtype}'`,
      loadMs,
      image,
      maxNewTokens: tokens,
      warmReps: reps,
      log,
    });
    figures.probePeakGpuBytes = probe.snapshot().peakBytes;
    figures.contextCost = await measureContextCost(engine, { env: 'browser', dtype, log });
    if (profile) figures.profile = await profileOurs(engine, { env: 'browser', dtype, image, log });
    return figures;
  } finally {
    engine.destroy();
  }
}

async function main(): Promise<BrowserFigures> {
  const started = performance.now();
  const q = new URLSearchParams(location.search);
  const modelId = q.get('model') ?? 'smolvlm-256m-random';
  const tokens = Number(q.get('tokens') ?? 16);
  const reps = Number(q.get('reps') ?? 1);
  const modelUrl = `/${modelId}/`;
  const image = await fetchBytes(sampleUrl);
  if (!image) throw new BenchPageError(`could not fetch the sample image at ${sampleUrl}`);
  const probe = new GpuProbe();
  probe.install();
  try {
    const oursByDtype: Record<string, OursFigures | Skipped> = {};
    const dtypes = (q.get('dtypes') ?? 'f32').split(',') as WeightDtype[];
    for (const dtype of q.get('ours') === '0' ? [] : dtypes) {
      try {
        oursByDtype[dtype] = await runOurs(modelUrl, image, tokens, reps, probe, dtype, q.get('profile') !== '0');
      } catch (e) {
        oursByDtype[dtype] = { skipped: `ours (${dtype}) failed: ${errorText(e)}` };
        log((oursByDtype[dtype] as Skipped).skipped);
      }
    }
    const ours: OursFigures | Skipped = oursByDtype.f32 ?? {
      skipped: q.get('ours') === '0' ? 'not requested (ours=0)' : 'f32 not requested',
    };
    let peer: PeerFigures | Skipped = { skipped: 'not run (peer=0: --no-peer or --quick, or the ONNX export failed; see its line)' };
    if (q.get('peer') === '1') {
      try {
        const input = (await (await fetch(`${modelUrl}bench-input/input.json`)).json()) as BenchInput;
        const ourPixels = await fetchF32(`${modelUrl}bench-input/pixel_values.f32`);
        if (!ourPixels) throw new BenchPageError(`${modelUrl}bench-input/pixel_values.f32 is missing`);
        peer = await runPeer({
          modelId,
          imageUrl: new URL(sampleUrl, location.href).href,
          maxNewTokens: tokens,
          ourInputIds: input.inputIds,
          ourPixels,
          ownPixels: q.get('ownPixels') === '1',
          referenceLogits0: await fetchF32(`${modelUrl}onnx/verify/logits0.f32`),
          probe,
          log,
        });
        log(
          `peer: encode ${peer.encodeMsPerTile.toFixed(0)} ms/tile, prefill ${peer.prefillTokensPerSecond.toFixed(2)} tok/s, ` +
            `TTFT ${peer.ttftMs.toFixed(0)} ms, decode ${peer.decodeTokensPerSecond.toFixed(3)} tok/s; tokens ${JSON.stringify(peer.tokenIds)}`,
        );
      } catch (e) {
        peer = { skipped: `transformers.js failed: ${errorText(e)}` };
        log(peer.skipped);
      }
    }
    return { userAgent: navigator.userAgent, ours, oursByDtype, peer, pageSeconds: (performance.now() - started) / 1000 };
  } finally {
    probe.uninstall();
  }
}

main().then(
  (result) => {
    window.__modelBenchResult = result;
  },
  (e: unknown) => {
    window.__modelBenchError = e instanceof Error ? `${e.name}: ${e.message}\n${e.stack ?? ''}` : String(e);
  },
);
