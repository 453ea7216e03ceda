// Browser side of `npm run bench:model -- --decode-plans-only`: both decode plans (model-decode-plans.ts) on
// Chromium's WebGPU, whose JavaScript cost per dispatch differs from Node's Dawn. The page is served cross-origin
// isolated, so performance.now() resolves microseconds rather than Chromium's coarse default.
// Query: model=<folder served at /> steps=N

import { createBrowserGpuContext } from '../../src/gpu/browser';
import { UrlSource } from '../../src/io/model-source';
import { type DecodePlansResult, runDecodePlans } from './model-decode-plans';

declare global {
  interface Window {
    __decodePlansResult?: DecodePlansResult;
    __decodePlansError?: string;
  }
}

async function main(): Promise<DecodePlansResult> {
  const q = new URLSearchParams(location.search);
  const modelUrl = new URL(`/${q.get('model') ?? 'smolvlm-256m-random'}/`, location.href).href;
  const gpu = await createBrowserGpuContext();
  try {
    return await runDecodePlans({
      env: 'browser',
      gpu,
      source: () => new UrlSource(modelUrl, { useCache: false }),
      steps: Number(q.get('steps') ?? 6),
      log: (line) => console.log(`[bench] ${line}`),
    });
  } finally {
    gpu.destroy();
  }
}

main().then(
  (result) => {
    window.__decodePlansResult = result;
  },
  (e: unknown) => {
    window.__decodePlansError = e instanceof Error ? `${e.name}: ${e.message}\n${e.stack ?? ''}` : String(e);
  },
);
