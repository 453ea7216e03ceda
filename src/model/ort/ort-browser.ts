// onnxruntime in a browser (or a Web Worker) for the CPU backend: onnxruntime-web's WebAssembly build
// ('onnxruntime-web/wasm': SIMD, and threads when the page is cross-origin isolated, i.e. served with
// COOP/COEP headers, which SharedArrayBuffer needs: see wasmThreads). Its .wasm file is found next to its module, as the
// app's bundler emits it; `wasmPaths` points elsewhere (a folder or URL the app serves it from).

import { OnnxRuntimeLoadError } from '../../errors';
import type { OrtModule, OrtRuntime, OrtSessionOptions } from './ort-api';

interface OrtWebEnv {
  env: { wasm: { numThreads?: number; proxy?: boolean; wasmPaths?: string } };
}

export interface BrowserOrtOptions {
  /** Where onnxruntime-web's .wasm files are served from (default: next to its module). */
  wasmPaths?: string;
  /** WebAssembly threads (default: up to 4 when cross-origin isolated, else 1; see wasmThreads). */
  threads?: number;
}

/**
 * How many threads the WebAssembly backend uses: 1 unless the page is cross-origin isolated, then up to
 * `requested` (default 4) and the core count. Its threads are Web Workers running onnxruntime-web's
 * module: under COEP their script must be served with the headers too, or they never start and the first
 * run waits for them for ever (test/e2e/parity.spec.ts: the page alone isolated hung; every response with
 * the headers answers).
 */
function wasmThreads(requested?: number): number {
  const isolated = (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true;
  if (!isolated) return 1;
  const cores = (globalThis.navigator as Navigator | undefined)?.hardwareConcurrency ?? 4;
  return Math.max(1, Math.min(requested ?? 4, cores));
}

export async function loadBrowserOrt(options: BrowserOrtOptions = {}): Promise<OrtRuntime> {
  const mod = await import('onnxruntime-web/wasm');
  const ort = ((mod as { default?: unknown }).default ?? mod) as unknown as OrtModule & OrtWebEnv;
  const threads = wasmThreads(options.threads);
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.proxy = false;
  if (options.wasmPaths) ort.env.wasm.wasmPaths = options.wasmPaths;
  // The WebAssembly loads with the first session: a failure to load it is named here, not inside a model file.
  const create = ort.InferenceSession.create.bind(ort.InferenceSession);
  const session: OrtModule['InferenceSession'] = {
    create: (model: Uint8Array, o?: OrtSessionOptions) =>
      create(model, o).catch((e: unknown) => {
        const message = (e as Error)?.message ?? String(e);
        if (!/no available backend|magic word|Aborted\(|failed to (fetch|load)|Failed to fetch dynamically imported module/i.test(message))
          throw e;
        throw new OnnxRuntimeLoadError(
          `onnxruntime-web could not load its WebAssembly for the CPU backend (${message.slice(0, 300)}). ` +
            "A dev server that pre-bundles dependencies serves it from the wrong place (Vite 7 and older): add optimizeDeps: { exclude: ['tessera', 'onnxruntime-web'] }; " +
            "or serve the files of node_modules/onnxruntime-web/dist/ and give createEngine({ wasm: { wasmPaths: '<their URL>/' } }); or use device: 'webgpu'.",
          { cause: e },
        );
      }),
  };
  const isolated = (globalThis as { crossOriginIsolated?: boolean }).crossOriginIsolated === true;
  return {
    ort: { ...ort, InferenceSession: session, Tensor: ort.Tensor },
    provider: 'wasm',
    label: `onnxruntime WebAssembly, ${threads === 1 ? '1 thread' : `${threads} threads`}${isolated ? '' : ': the page is not cross-origin isolated'}`,
  };
}
