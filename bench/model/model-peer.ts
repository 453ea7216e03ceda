// The peer in the browser page: transformers.js (Idefics3ForConditionalGeneration + AutoProcessor) on
// onnxruntime-web's WebGPU EP, fp32, on the ONNX export of the same random weights (bench/onnx-export/),
// served by the same Vite dev server; nothing remote. One cold request (its vision encoder alone takes
// minutes on SwiftShader). Stage times come from wrapping the sessions' run(); buffers, dispatches and
// readbacks from the page's GpuProbe.
//
// Inputs: its own AutoProcessor runs on the same image and chat (timed; its input_ids are compared with
// ours and its pixels measured against ours), then generate() gets OUR pixel_values by default, so the
// greedy-token check compares the two engines rather than two image resizers (transformers.js resizes
// float tensors with its own interpolation; Tessera's processor is HF-exact). `ownPixels` keeps its own.

import { AutoProcessor, Idefics3ForConditionalGeneration, RawImage, Tensor, env } from '@huggingface/transformers';
import wasmUrl from '../../node_modules/@huggingface/transformers/node_modules/onnxruntime-web/dist/ort-wasm-simd-threaded.asyncify.wasm?url';
import type { GpuProbe, ProbeCounts } from './gpu-probe';
import { BENCH_PROMPT } from './model-request';
import type { PeerFigures } from './model-result';
import { median, tokenTimes } from '../harness/timing';

export interface PeerRun {
  /** Model id under env.localModelPath ('/'): the folder name served by Vite. */
  modelId: string;
  imageUrl: string;
  maxNewTokens: number;
  /** Our processor's input ids and pixel values for the same request ([numTiles, 3, H, W]). */
  ourInputIds: number[];
  ourPixels: Float32Array;
  ownPixels: boolean;
  /** Reference step-0 logits (float64 PyTorch, stored f32), or undefined when absent. */
  referenceLogits0?: Float32Array;
  /** onnxruntime-web's execution provider: 'webgpu' (default) or 'wasm' (the cpu column's browser peer). */
  device?: 'webgpu' | 'wasm';
  /**
   * Requests after the first on the same sessions (default 0: one cold request). The figures are the last
   * one's, with tile, TTFT and decode replaced by their medians over the warm requests (each in `warm`).
   */
  warmRuns?: number;
  probe: GpuProbe;
  log: (line: string) => void;
}

export class PeerError extends Error {
  override readonly name = 'PeerError';
}

interface SessionLike {
  run(feeds: Record<string, unknown>, ...rest: unknown[]): Promise<Record<string, { data: unknown; dims: number[] }>>;
}

interface DecoderCall {
  ms: number;
  counts: ProbeCounts;
}

export function configureEnv(): void {
  env.allowRemoteModels = false;
  env.allowLocalModels = true;
  env.localModelPath = '/';
  env.useBrowserCache = false;
  env.useWasmCache = false;
  const onnx = env.backends.onnx as { wasm?: { wasmPaths?: unknown; numThreads?: number } };
  if (!onnx.wasm) throw new PeerError('transformers.js exposes no onnxruntime-web wasm settings (env.backends.onnx.wasm)');
  // The asyncify build (its WebGPU build), served from node_modules by Vite; never the CDN default.
  onnx.wasm.wasmPaths = { wasm: new URL(wasmUrl, location.href).href };
}

function delta(a: ProbeCounts, b: ProbeCounts): ProbeCounts {
  return {
    bytesLive: b.bytesLive,
    peakBytes: b.peakBytes,
    numDispatches: b.numDispatches - a.numDispatches,
    numSubmits: b.numSubmits - a.numSubmits,
    numReadbacks: b.numReadbacks - a.numReadbacks,
    readbackBytes: b.readbackBytes - a.readbackBytes,
  };
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Infinity;
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

export async function runPeer(run: PeerRun): Promise<PeerFigures> {
  configureEnv();
  const { probe, log } = run;
  probe.reset();
  const tLoad = performance.now();
  const processor: any = await AutoProcessor.from_pretrained(run.modelId);
  const device = run.device ?? 'webgpu';
  const model: any = await Idefics3ForConditionalGeneration.from_pretrained(run.modelId, { device, dtype: 'fp32' });
  const loadMs = performance.now() - tLoad;
  log(`peer: transformers.js loaded ${Object.keys(model.sessions).join(', ')} in ${(loadMs / 1000).toFixed(1)} s`);

  try {
    // Stage timing: wrap each session's run().
    const sessions = model.sessions as Record<string, SessionLike>;
    let encodeMs = 0;
    const decoderCalls: DecoderCall[] = [];
    let logits0: Float32Array | undefined;
    const vision = sessions.vision_encoder;
    const visionRun = vision.run.bind(vision);
    vision.run = async (...args) => {
      const t0 = performance.now();
      const out = await visionRun(...args);
      encodeMs += performance.now() - t0;
      log(`peer: vision_encoder ran in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      return out;
    };
    const decoder = sessions.decoder_model_merged;
    const decoderRun = decoder.run.bind(decoder);
    decoder.run = async (...args) => {
      const before = probe.snapshot();
      const t0 = performance.now();
      const out = await decoderRun(...args);
      const ms = performance.now() - t0;
      decoderCalls.push({ ms, counts: delta(before, probe.snapshot()) });
      if (!logits0) logits0 = Float32Array.from(out.logits.data as Float32Array);
      // On WebGPU each run is seconds here and worth a line; on WebAssembly it is tens of ms.
      if (device === 'webgpu') log(`peer: decoder_model_merged run ${decoderCalls.length} in ${(ms / 1000).toFixed(2)} s`);
      return out;
    };

    // One request, timed; run (1 + warmRuns) times on the same sessions.
    const once = async (): Promise<PeerFigures> => {
      encodeMs = 0;
      decoderCalls.length = 0;
      logits0 = undefined;
      // Its own processor on the same image and chat.
      const tProc = performance.now();
      const image = await RawImage.fromURL(run.imageUrl);
      const messages = [{ role: 'user', content: [{ type: 'image' }, { type: 'text', text: BENCH_PROMPT }] }];
      const text: string = processor.apply_chat_template(messages, { add_generation_prompt: true });
      const inputs = await processor(text, image);
      const processMs = performance.now() - tProc;
      const ids = Array.from(inputs.input_ids.data as BigInt64Array, (x) => Number(x));
      const inputIdsEqualOurs = JSON.stringify(ids) === JSON.stringify(run.ourInputIds);
      const pixelMaxAbsDiffVsOurs = maxAbsDiff(inputs.pixel_values.data as Float32Array, run.ourPixels);
      log(
        `peer: its processor took ${processMs.toFixed(0)} ms; input_ids ${inputIdsEqualOurs ? 'equal to' : 'DIFFER from'} ours; ` +
          `pixel_values ${JSON.stringify(inputs.pixel_values.dims)}, max |its - ours| ${pixelMaxAbsDiffVsOurs.toFixed(4)} ` +
          `(normalized units, 1 uint8 step = ${(2 / 255).toFixed(4)})`,
      );
      if (!run.ownPixels) {
        if (inputs.pixel_values.data.length !== run.ourPixels.length) {
          throw new PeerError(`its pixel_values hold ${inputs.pixel_values.data.length} values, ours ${run.ourPixels.length}`);
        }
        inputs.pixel_values = new Tensor('float32', run.ourPixels, inputs.pixel_values.dims);
      }

      // Generate, greedy, timing each token as the streamer sees it.
      const { streamer, times: putTimes } = tokenTimes();
      log(`peer: generate(max_new_tokens ${run.maxNewTokens}, do_sample false) ...`);
      const tGen = performance.now();
      const output = await model.generate({ ...inputs, max_new_tokens: run.maxNewTokens, do_sample: false, streamer });
      const tEnd = performance.now();
      const all = Array.from(output.data as BigInt64Array, (x) => Number(x));
      const tokenIds = all.slice(ids.length);
      const decoded: string = processor.batch_decode(output.slice(null, [ids.length, null]), { skip_special_tokens: true })[0];

      const decodeCalls = decoderCalls.slice(1);
      const perToken = (f: (c: ProbeCounts) => number) =>
        decodeCalls.length ? decodeCalls.reduce((a, c) => a + f(c.counts), 0) / decodeCalls.length : 0;
      const prefillMs = decoderCalls[0]?.ms ?? NaN;
      const numTiles = inputs.pixel_values.dims[1] as number;
      const decodeSpanMs = putTimes.length > 1 ? putTimes[putTimes.length - 1] - putTimes[0] : NaN;
      return {
        library: `@huggingface/transformers ${env.version}`,
        onnxruntime: `onnxruntime-web ${(env.backends.onnx as { versions?: { web?: string } }).versions?.web ?? '?'}`,
        device,
        dtype: 'fp32',
        loadMs,
        processMs,
        inputIdsEqualOurs,
        pixelMaxAbsDiffVsOurs,
        pixelsUsed: run.ownPixels ? 'own' : 'ours',
        encodeMs,
        encodeMsPerTile: encodeMs / numTiles,
        prefillMs,
        prefillTokensPerSecond: (ids.length * 1000) / prefillMs,
        ttftMs: processMs + (putTimes[0] - tGen),
        decodeTokensPerSecond: ((putTimes.length - 1) * 1000) / decodeSpanMs,
        totalMs: processMs + (tEnd - tGen),
        tokenIds,
        peakGpuBytes: probe.snapshot().peakBytes,
        decodeStep: {
          numDispatches: perToken((c) => c.numDispatches),
          numSubmits: perToken((c) => c.numSubmits),
          numReadbacks: perToken((c) => c.numReadbacks),
          readbackBytes: perToken((c) => c.readbackBytes),
        },
        logits0MaxAbsDiffVsReference: logits0 && run.referenceLogits0 ? maxAbsDiff(logits0, run.referenceLogits0) : null,
        text: decoded,
        notes: [
          `one cold request (first after load)${device === 'webgpu' ? ': includes ORT shader compilation' : ''}`,
          `numThreads ${(env.backends.onnx as { wasm?: { numThreads?: number } }).wasm?.numThreads ?? '?'} (the page is not cross-origin isolated)`,
          'TTFT = its processor + generate() start to the first generated token (streamer)',
          'encode = vision_encoder session.run; prefill = first decoder_model_merged run; both include output download',
          'decode tokens/s = generated tokens after the first / time from first to last token (as ours)',
          'peak GPU memory = peak live bytes of buffers created during load + request (createBuffer/destroy probe)',
        ],
      };
    };
    const cold = await once();
    const warm: PeerFigures[] = [];
    for (let i = 0; i < (run.warmRuns ?? 0); i++) {
      warm.push(await once());
      const w = warm[warm.length - 1]!;
      log(
        `peer warm ${i + 1} of ${run.warmRuns}: tile ${w.encodeMsPerTile.toFixed(0)} ms, TTFT ${w.ttftMs.toFixed(0)} ms, decode ${w.decodeTokensPerSecond.toFixed(1)} tok/s`,
      );
    }
    if (warm.length === 0) return cold;
    const last = warm[warm.length - 1]!;
    return {
      ...last,
      encodeMsPerTile: median(warm.map((p) => p.encodeMsPerTile)),
      ttftMs: median(warm.map((p) => p.ttftMs)),
      decodeTokensPerSecond: median(warm.map((p) => p.decodeTokensPerSecond)),
      warm: warm.map((p) => ({ tileMs: p.encodeMsPerTile, ttftMs: p.ttftMs, decodeTokensPerSecond: p.decodeTokensPerSecond })),
      notes: [
        `warm: tile, TTFT and decode are medians of ${warm.length} requests after a first one (dropped); the rest is the last one's`,
        ...last.notes.slice(1),
      ],
    };
  } finally {
    await model.dispose();
  }
}
