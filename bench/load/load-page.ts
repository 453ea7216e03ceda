// The page of `npm run bench:load` in Chromium: one createEngine of a checkpoint the bench server serves,
// timed, with its phases (the language model's weights until the first 'compile' progress event; the
// pipelines and the media encoder after), its GPU memory and weight bytes. Host memory is measured from
// outside, per Chromium process (load-chromium.ts). Nothing is stored: no Cache API copy of safetensors
// weights (weightCache: false, useCache: false); a GGUF pair by URL is downloaded into browser storage by the
// load itself (that is how a browser reads one), which the time includes.

import { createEngine } from '../../src/engine/create-browser';
import { UrlSource } from '../../src/io/model-source';
import type { DtypeOption } from '../../src/model/weights/dtype';

export interface PageLoadFigures {
  loadMs: number;
  weightsMs: number;
  /** The engine's device and the encoder worker's own (the tower), their high-water marks summed. */
  gpuPeakBytes: number;
  weightBytes: number;
}

interface LoadRequest {
  /** A checkpoint folder under the server root ('/voxtral-3b-random/'), or a model .gguf there. */
  model: string;
  mmproj?: string;
  dtype: string;
}

async function runLoad(request: LoadRequest): Promise<PageLoadFigures> {
  const url = new URL(request.model, location.href).href;
  const model = url.endsWith('.gguf') ? url : new UrlSource(url, { useCache: false });
  const t0 = performance.now();
  let weightsMs: number | undefined;
  const engine = await createEngine({
    model,
    mmproj: request.mmproj,
    device: 'webgpu',
    dtype: request.dtype as DtypeOption,
    kvCacheTokens: 1024,
    weightCache: false,
    // A load that stops progressing fails in minutes, naming what it waits on, instead of holding the bench.
    stallTimeoutMs: 240_000,
    onProgress: (p) => {
      if (p.phase === 'compile' && weightsMs === undefined) weightsMs = performance.now() - t0;
    },
  });
  const loadMs = performance.now() - t0;
  const stats = engine.stats();
  engine.destroy();
  return {
    loadMs,
    weightsMs: weightsMs ?? loadMs,
    gpuPeakBytes: stats.gpuMemory.peakBytes + (stats.encoder.gpuMemory?.peakBytes ?? 0),
    weightBytes: stats.weightBytes,
  };
}

(window as unknown as { runLoad: typeof runLoad }).runLoad = runLoad;
