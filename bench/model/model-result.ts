// The figures one `npm run bench:model` run produces. Types only. Our engine is measured in Node (Dawn)
// and in headless Chromium; the peer (transformers.js + onnxruntime-web WebGPU) in the same Chromium page.
// The runner prints them as tables and, last, as one JSON line (ModelBenchResult).

import type { JsonFigures } from './model-json-report';

/** One request's numbers, as Tessera reports them (TesseraInfo.timings) plus wall clock. */
export interface RequestFigures {
  /** Decode + resize + tokenize on the CPU. */
  processMs: number;
  /** Vision tower + connector over every tile. */
  encodeMs: number;
  encodeMsPerTile: number;
  prefillMs: number;
  /** Prompt tokens / prefillMs (the image embeddings are already computed: encode is not included). */
  prefillTokensPerSecond: number;
  /** Request start to the first generated token (process + encode + prefill + first sample). */
  ttftMs: number;
  /** Generated tokens after the first, per second of decode. */
  decodeTokensPerSecond: number;
  /** Request start to the last token. */
  totalMs: number;
  tokenIds: number[];
  /** Where the image embeddings came from (TesseraInfo.media): 'encoded' = the vision encoder ran. */
  mediaSource: string;
}

/** Our engine in one environment. */
export interface OursFigures {
  env: 'node' | 'browser';
  /** Weight dtype the engine was created with (createEngine({ dtype })). */
  dtype: string;
  /**
   * A second load of the same dtype, reading the stored quantized copies the first load wrote (f16/q8/q4,
   * Node: the bench's weight cache directory); loadMs is the first load, which quantizes.
   */
  storedLoadMs?: number;
  adapter: string;
  kernelVariant: string;
  /** Engine.create: config, processor, weights fetched/read and uploaded. */
  loadMs: number;
  promptTokens: number;
  imageTokens: number;
  numTiles: number;
  /** First request after load: pipelines are compiled here (seconds on SwiftShader). */
  cold: RequestFigures;
  /** The measured request(s) after the cold one; `warm` is the median-TTFT one. */
  warm: RequestFigures;
  warmReps: number;
  /** The warm request's exact bytes again: the embeddings come from the encoder's memory cache. */
  cacheHit: RequestFigures;
  /** cacheHit's request again, sampled with `sampling`'s settings (the run with the median decode tokens/s). */
  sampled: RequestFigures;
  /** Settings, and decode tokens/s of the greedy (cacheHit first) and sampled requests, which alternate. */
  sampling: {
    temperature: number;
    top_k: number;
    top_p: number;
    seed: number;
    greedyDecodeTokensPerSecond: number[];
    sampledDecodeTokensPerSecond: number[];
  };
  /** How the engine was created (encoder mode and caches). */
  engineOptions: string;
  /** engine.stats().gpuMemory.peakBytes: every GPU buffer Tessera allocated, at the high-water mark. */
  peakGpuBytes: number;
  /** engine.stats().gpuMemory.peakByArea: what held the peak, per buffer area (sums to peakGpuBytes). */
  peakGpuByArea: Record<string, number>;
  weightBytes: number;
  kvCacheBytes: number;
  /** engine.stats().decodeStep after the measured request: one decode token's GPU work. */
  decodeStep: { numDispatches: number; numCommandBuffers: number; numReadbacks: number; readbackBytes: number };
  /** Same request's bytes as seen by the page's GPU probe (browser only; cross-check of peakGpuBytes). */
  probePeakGpuBytes?: number;
  text: string;
  /**
   * engine.profile() on the bench image and prompt after the measured requests (and after the memory
   * figures above were taken): GPU time per kernel kind for one vision tile, one prefill chunk, one decode step.
   */
  profile?: import('../../src/engine/types').ProfileReport | Skipped;
  /** A decode step at position ~50 and ~1000 (model-ours.ts measureContextCost). */
  contextCost?: ContextCost | Skipped;
}

/** Whole decode steps at two positions of one sequence: what the context's length costs a step. */
export interface ContextCost {
  short: import('../../src/engine/types').DecodeAtPosition;
  long: import('../../src/engine/types').DecodeAtPosition;
  /** long.stepMs / short.stepMs */
  ratio: number;
  /** Paged attention's GPU ms in each step (timed per dispatch), or null when the profile did not list it. */
  attentionMs: { short: number | null; long: number | null };
}

/** transformers.js in the browser (one cold request: its vision encoder alone takes minutes on SwiftShader). */
export interface PeerFigures {
  library: string;
  onnxruntime: string;
  device: string;
  dtype: string;
  /** from_pretrained + AutoProcessor.from_pretrained: ONNX files fetched, sessions created. */
  loadMs: number;
  /** Its AutoProcessor on the same image and chat (apply_chat_template + processor call). */
  processMs: number;
  inputIdsEqualOurs: boolean;
  /** max |its pixel_values - ours| (ours are HF-exact; it resizes with its own interpolation). */
  pixelMaxAbsDiffVsOurs: number;
  /** 'ours' (default): its generate() got our pixel_values so the token check compares engines, not resizers. */
  pixelsUsed: 'ours' | 'own';
  /** vision_encoder session.run wall time (all tiles). */
  encodeMs: number;
  encodeMsPerTile: number;
  /** First decoder_model_merged run (all prompt tokens). */
  prefillMs: number;
  prefillTokensPerSecond: number;
  /** processMs + generate() start to the streamer's first generated token. */
  ttftMs: number;
  decodeTokensPerSecond: number;
  totalMs: number;
  tokenIds: number[];
  /** Peak live bytes of GPU buffers created during load + request (page probe: GPUDevice.createBuffer/destroy). */
  peakGpuBytes: number;
  /** Per decode token (decoder runs after the first), counted by the page probe. */
  decodeStep: { numDispatches: number; numSubmits: number; numReadbacks: number; readbackBytes: number };
  /** Step-0 logits vs the PyTorch float64 reference (same ids and pixels). */
  logits0MaxAbsDiffVsReference: number | null;
  text: string;
  notes: string[];
  /** With warm requests (model-peer.ts warmRuns): each one's figures (the medians are above). */
  warm?: Array<{ tileMs: number; ttftMs: number; decodeTokensPerSecond: number }>;
}

export interface Skipped {
  skipped: string;
}

/** What the ONNX export is and how it was checked (from <model>/onnx/manifest.json and ort-check.json). */
export interface ExportFigures {
  files: Record<string, { bytes: number; sha256: string }>;
  opset: number;
  torch: string;
  /** export.py: modules vs the project's PyTorch reference. */
  check: Record<string, unknown>;
  /** bench/model/onnx-check.ts: the .onnx files on onnxruntime-web's CPU backend vs the reference. */
  ortCheck: Record<string, unknown>;
}

export interface BrowserFigures {
  userAgent: string;
  ours: OursFigures | Skipped;
  /** Our engine per weight dtype (f32 is `ours`). */
  oursByDtype?: Record<string, OursFigures | Skipped>;
  peer: PeerFigures | Skipped;
  pageSeconds: number;
}

export interface ModelBenchResult {
  bench: 'model';
  model: {
    path: string;
    shape: string;
    weights: string;
    longestEdge: number;
    note: string;
  };
  request: {
    prompt: string;
    image: string;
    maxNewTokens: number;
    greedy: true;
    promptTokens: number;
    imageTokens: number;
    numTiles: number;
  };
  /** Sampled requests (ours only): median decode tokens/s ÷ the greedy cache-hit requests' median. */
  sampling: {
    params: { temperature: number; top_k: number; top_p: number; seed: number };
    sampledOverGreedyDecode: { node: number | null; browser: number | null };
  };
  /** Float64 PyTorch reference greedy tokens on the same ids and pixels (test/reference via export.py). */
  referenceTokens: number[] | null;
  node: OursFigures | Skipped;
  browser: BrowserFigures | Skipped;
  /** The CPU backend in Node against onnxruntime-node driven directly on the same ONNX files (model-cpu.ts). */
  cpu: CpuFigures | Skipped;
  /** The cpu column in Chromium (onnxruntime-web, WebAssembly) against transformers.js on its 'wasm' device. */
  cpuBrowser: WasmFigures | Skipped;
  /** The response_format section (model-json.ts). */
  json: JsonFigures | Skipped;
  /** Weight dtypes: our engine per weight dtype in Node (f32 is `node`), and each dtype's accuracy against f32. */
  dtypes: {
    node: Record<string, OursFigures | Skipped>;
    /** Dtype figure / f32 figure for load, weight memory, vision, prefill, decode (Node). */
    ratiosToF32: Record<string, Record<string, number | null>>;
    accuracy: Record<string, import('../../src/model/weights/accuracy').LogitsAgreement> | Skipped;
    /** The goals on this machine and whether they were met (Node figures). */
    goals: Record<string, { goal: string; measured: number | null; met: boolean | null }>;
  };
  export: ExportFigures | Skipped;
  /** ours / peer: > 1 means ours is faster (times: peer ms / ours ms; rates: ours / peer). */
  ratios: Record<string, number | null>;
  tokenAgreement: Record<string, boolean | null>;
  /** --baseline=<ref>: the same suite on that tree, run first in the same invocation (model-baseline.ts). */
  baseline?: import('./model-baseline').BaselineComparison | Skipped;
  /** The fused and separate decode plans on the language model alone (model-decode-plans.ts), in Node. */
  decodePlans: import('./model-decode-plans').DecodePlansResult | Skipped;
  /** The same in Chromium (decode-plans-page.ts). */
  decodePlansBrowser: import('./model-decode-plans').DecodePlansResult | Skipped;
  /** The speed and memory goals on this machine, each with its measured figure and whether it was met. */
  goals: Record<string, { goal: string; measured: number | null; met: boolean | null }>;
  machine: { cpus: number; loadAverageAtStart: number[]; loadAverageAtEnd: number[] };
  totalSeconds: number;
}

export function isSkipped<T extends object>(x: T | Skipped): x is Skipped {
  return 'skipped' in x;
}

/** The cpu column (model-cpu.ts in Node, model-wasm-page.ts in the browser). */
export interface CpuSide {
  tileMs: number;
  ttftMs: number;
  decodeTokensPerSecond: number;
  tokenIds: number[];
}

export interface ConcurrentFigures {
  requests: number;
  aggregateDecodeTokensPerSecond: number;
  overOne: number;
  /** Prompt tokens the 16 took from the prefix cache (the engine's default; they share the image's blocks). */
  prefixHitTokens: number;
}

export type OursCpuFigures = CpuSide & { loadMs: number; concurrent: ConcurrentFigures };

/** What model-wasm-page.ts hands back: ours on device 'wasm' and transformers.js on its 'wasm' device. */
export interface WasmPageFigures {
  userAgent: string;
  crossOriginIsolated: boolean;
  ours: OursCpuFigures;
  peer: PeerFigures | Skipped;
}

/** The cpu column in the browser: the page's figures and ours against transformers.js (> 1: ours faster). */
export interface WasmFigures extends WasmPageFigures {
  ratios: { tile: number; ttft: number; decode: number } | null;
  tokensEqual: boolean | null;
  goals: { tileAtLeast1: boolean; ttftAtLeast1: boolean; decodeAtLeast1: boolean } | null;
}

export interface CpuFigures {
  threads: string;
  /** Measured requests per side (after a first one, dropped); tile, TTFT and decode are their medians. */
  reps: number;
  ours: OursCpuFigures;
  raw: CpuSide & { loadMs: number };
  ratios: { tile: number; ttft: number; decode: number };
  tokensEqual: boolean;
  goals: { tileAtLeast09: boolean; decodeAtLeast09: boolean; concurrentAtLeast2x: boolean };
}
