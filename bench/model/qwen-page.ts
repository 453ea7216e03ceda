// Browser side of `npm run bench:model -- --family qwen2_5_vl|qwen3_vl` (qwen.ts): our engine, then
// transformers.js 4.3.1 (Qwen2_5_VLForConditionalGeneration / Qwen3VLForConditionalGeneration on
// onnxruntime-web's WebGPU EP, fp32) on the ONNX export of the same random weights (qwen-peer-export.ts),
// one after the other in this page on the same adapter, with the same images and prompt, greedy.
//
// Both get the same input: our processor's token ids and patch rows (the checkpoint folder has no
// tokenizer.json, which transformers.js's tokenizer needs). transformers.js's own image processor
// (AutoImageProcessor, which needs none) still runs on each image: it is timed into the peer's TTFT, as
// ours' processing is in ours, and its grid and pixels are compared with ours.
//
// Query: model=<checkpoint folder served at /> peerModel=<its -peer folder> family=qwen2_5_vl|qwen3_vl
//        images=448x448,1280x720 (PNGs at /<model>/bench-input/<label>.png) tokens=N reps=N (warm
//        requests per image after a cold one, each side) ours=0|1 peer=0|1
// Progress goes to the console; figures to window.__qwenBenchResult (or a message in __qwenBenchError).

import {
  AutoImageProcessor,
  Qwen2_5_VLForConditionalGeneration,
  Qwen3VLForConditionalGeneration,
  RawImage,
  Tensor,
  env,
} from '@huggingface/transformers';
import { createEngine } from '../../src/engine/create-browser';
import { adapterName } from '../../src/gpu/adapter-info';
import { createBrowserGpuContext } from '../../src/gpu/browser';
import { loadQwenProcessor } from '../../src/families/qwen-processor';
import { parseModelConfig } from '../../src/families/registry';
import { UrlSource } from '../../src/io/model-source';
import { decodeImageBrowser } from '../../src/processor/image-decode';
import { processQwenImage } from '../../src/processor/qwen-image-processor';
import { median, tokenTimes } from '../harness/timing';
import { GpuProbe } from './gpu-probe';
import { BENCH_ENCODER_OPTIONS } from './model-engine-options';
import { configureEnv } from './model-peer';
import { pngVariant } from './png-variant';
import type { QwenPageResult, QwenRequestFigures, QwenSideFigures, Skipped } from './qwen-result';

declare global {
  interface Window {
    __qwenBenchResult?: QwenPageResult;
    __qwenBenchError?: string;
  }
}

class QwenPageError extends Error {
  override readonly name = 'QwenPageError';
}

const PROMPT = 'Describe this image.';

function log(message: string): void {
  console.log(`[bench] ${message}`);
}

function errorText(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

async function fetchBytes(url: string): Promise<Uint8Array> {
  const r = await fetch(url);
  if (!r.ok) throw new QwenPageError(`${url}: HTTP ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}

interface Input {
  label: string;
  png: Uint8Array;
  ids: number[];
  patches: Float32Array;
  grid: { t: number; h: number; w: number };
}

/** Our processor's ids and patch rows for each image (what both sides are given). */
async function prepareInputs(modelUrl: string, labels: readonly string[]): Promise<Input[]> {
  const source = new UrlSource(new URL(modelUrl, location.href).href, { useCache: false });
  const text = await source.readText('config.json');
  if (text === undefined) throw new QwenPageError(`${modelUrl}config.json is missing`);
  const config = parseModelConfig(JSON.parse(text));
  const processor = await loadQwenProcessor(source, config);
  const inputs: Input[] = [];
  for (const label of labels) {
    const png = await fetchBytes(`${modelUrl}bench-input/${label}.png`);
    const processed = processQwenImage(await decodeImageBrowser(png), processor.image);
    const plan = processor.planPrompt(
      [
        {
          role: 'user',
          content: [
            { type: 'image', image: png },
            { type: 'text', text: PROMPT },
          ],
        },
      ],
      [processed.grid],
    );
    inputs.push({ label, png, ids: [...plan.tokenIds], patches: processed.patches, grid: processed.grid });
  }
  return inputs;
}

const gridText = (g: { t: number; h: number; w: number }) => `${g.t}x${g.h}x${g.w}`;

async function runOurs(
  modelUrl: string,
  inputs: readonly Input[],
  tokens: number,
  reps: number,
  probe: GpuProbe,
): Promise<QwenSideFigures> {
  probe.reset();
  const t0 = performance.now();
  const engine = await createEngine({
    model: new UrlSource(new URL(modelUrl, location.href).href, { useCache: false }),
    device: 'webgpu',
    encoder: BENCH_ENCODER_OPTIONS,
    weightCache: false,
    kvCacheTokens: 4096,
  });
  const loadMs = performance.now() - t0;
  log(`ours: loaded in ${(loadMs / 1000).toFixed(1)} s`);
  try {
    const rows: QwenSideFigures['rows'] = [];
    for (const input of inputs) {
      const ask = async (tag: string): Promise<QwenRequestFigures> => {
        const r = await engine.chat.completions.create({
          messages: [
            {
              role: 'user',
              content: [
                { type: 'image', image: pngVariant(input.png, tag) },
                { type: 'text', text: PROMPT },
              ],
            },
          ],
          max_tokens: tokens,
        });
        const info = r.tessera;
        if (info.media[0]?.source !== 'encoded')
          throw new QwenPageError(`${input.label} ${tag}: the image was not encoded (${info.media[0]?.source})`);
        const grid = info.media[0].grid;
        const f: QwenRequestFigures = {
          encodeMs: info.timings.encodeMs,
          ttftMs: info.timings.ttftMs,
          decodeTokensPerSecond: info.timings.decodeTokensPerSecond,
          promptTokens: info.promptTokens,
          imageTokens: info.imageTokens,
          tokenIds: [...info.tokenIds],
          grid: grid ? gridText(grid) : '',
        };
        log(
          `ours ${input.label} ${tag}: encode ${f.encodeMs.toFixed(0)} ms, TTFT ${f.ttftMs.toFixed(0)} ms, decode ${f.decodeTokensPerSecond.toFixed(2)} tok/s (${f.imageTokens} image tokens, grid ${f.grid})`,
        );
        return f;
      };
      const cold = await ask('cold');
      const warm: QwenRequestFigures[] = [];
      for (let i = 0; i < reps; i++) warm.push(await ask(`warm-${i}`));
      rows.push({ image: input.label, cold, warm: middle(warm) ?? cold });
    }
    const stats = engine.stats();
    return {
      library: 'tessera',
      loadMs,
      rows,
      peakGpuBytes: stats.gpuMemory.peakBytes + (stats.encoder.gpuMemory?.peakBytes ?? 0),
      probePeakGpuBytes: probe.snapshot().peakBytes,
    };
  } finally {
    engine.destroy();
  }
}

/** The request whose TTFT is the median of the warm ones. */
function middle(xs: readonly QwenRequestFigures[]): QwenRequestFigures | undefined {
  if (xs.length === 0) return undefined;
  const m = median(xs.map((x) => x.ttftMs));
  return xs.find((x) => x.ttftMs === m) ?? xs[0];
}

interface SessionLike {
  run(feeds: Record<string, unknown>, ...rest: unknown[]): Promise<Record<string, { data: unknown; dims: number[] }>>;
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Number.POSITIVE_INFINITY;
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

async function runPeer(
  family: string,
  peerId: string,
  inputs: readonly Input[],
  tokens: number,
  reps: number,
  probe: GpuProbe,
): Promise<QwenSideFigures> {
  configureEnv();
  probe.reset();
  const t0 = performance.now();
  const Model = family === 'qwen3_vl' ? Qwen3VLForConditionalGeneration : Qwen2_5_VLForConditionalGeneration;
  const model: any = await Model.from_pretrained(peerId, { device: 'webgpu', dtype: 'fp32' });
  const imageProcessor: any = await AutoImageProcessor.from_pretrained(peerId);
  const loadMs = performance.now() - t0;
  log(`peer: transformers.js ${env.version} loaded ${Object.keys(model.sessions).join(', ')} in ${(loadMs / 1000).toFixed(1)} s`);
  try {
    const sessions = model.sessions as Record<string, SessionLike>;
    let encodeMs = 0;
    const vision = sessions.vision_encoder!;
    const visionRun = vision.run.bind(vision);
    vision.run = async (...args) => {
      const t = performance.now();
      const out = await visionRun(...args);
      encodeMs += performance.now() - t;
      log(`peer: vision_encoder ran in ${((performance.now() - t) / 1000).toFixed(1)} s`);
      return out;
    };
    const decoder = sessions.decoder_model_merged!;
    const decoderRun = decoder.run.bind(decoder);
    let decoderRuns = 0;
    decoder.run = async (...args) => {
      const t = performance.now();
      const out = await decoderRun(...args);
      decoderRuns++;
      // Each run is seconds to minutes on a software adapter: worth a line.
      log(`peer: decoder run ${decoderRuns}${decoderRuns === 1 ? ' (prefill)' : ''} in ${((performance.now() - t) / 1000).toFixed(1)} s`);
      return out;
    };
    const rows: QwenSideFigures['rows'] = [];
    for (const input of inputs) {
      const ask = async (tag: string): Promise<QwenRequestFigures> => {
        encodeMs = 0;
        decoderRuns = 0;
        // Its own image processor, timed (its output is compared with ours; generate() gets ours). With
        // Qwen2.5-VL-3B's preprocessor_config.json (no size and no do_resize key) transformers.js 4.3.1
        // does not resize, and an image whose sides are not multiples of 28 then fails in its patch view:
        // the report says so, and its TTFT is generate()'s alone.
        const tProc = performance.now();
        let own: { image_grid_thw: { data: BigInt64Array }; pixel_values: { data: Float32Array } } | undefined;
        let processorError: string | undefined;
        try {
          own = await imageProcessor(await RawImage.fromBlob(new Blob([input.png as BlobPart])));
        } catch (e) {
          processorError = errorText(e);
          log(`peer ${input.label} ${tag}: its image processor failed (${processorError}); generate() still gets ours`);
        }
        const processMs = own ? performance.now() - tProc : 0;
        const ownGrid = own ? Array.from(own.image_grid_thw.data, Number) : [];
        const gridEqual = ownGrid.join('x') === gridText(input.grid);
        const pixelDiff = own && gridEqual ? maxAbsDiff(own.pixel_values.data, input.patches) : Number.NaN;
        const numPatches = input.grid.t * input.grid.h * input.grid.w;
        const n = input.ids.length;
        const { streamer, times } = tokenTimes();
        const tGen = performance.now();
        const output = await model.generate({
          input_ids: new Tensor('int64', BigInt64Array.from(input.ids.map(BigInt)), [1, n]),
          attention_mask: new Tensor('int64', new BigInt64Array(n).fill(1n), [1, n]),
          pixel_values: new Tensor('float32', input.patches, [numPatches, input.patches.length / numPatches]),
          image_grid_thw: new Tensor('int64', BigInt64Array.from([input.grid.t, input.grid.h, input.grid.w].map(BigInt)), [1, 3]),
          max_new_tokens: tokens,
          do_sample: false,
          streamer,
        });
        const tokenIds = Array.from(output.data as BigInt64Array, Number).slice(n);
        const f: QwenRequestFigures = {
          encodeMs,
          processMs,
          ttftMs: processMs + (times[0]! - tGen),
          decodeTokensPerSecond: ((times.length - 1) * 1000) / (times[times.length - 1]! - times[0]!),
          promptTokens: n,
          imageTokens: input.ids.filter((id) => id === model.config.image_token_id).length,
          tokenIds,
          grid: own ? ownGrid.join('x') : 'none (its processor failed)',
          pixelMaxAbsDiffVsOurs: pixelDiff,
          ...(processorError ? { processorError } : {}),
        };
        log(
          `peer ${input.label} ${tag}: its processor ${processMs.toFixed(0)} ms (grid ${f.grid}${gridEqual ? `, pixels within ${pixelDiff.toFixed(4)} of ours` : `, ours ${gridText(input.grid)}`}), ` +
            `encode ${encodeMs.toFixed(0)} ms, TTFT ${f.ttftMs.toFixed(0)} ms, decode ${f.decodeTokensPerSecond.toFixed(3)} tok/s`,
        );
        return f;
      };
      const cold = await ask('cold');
      const warm: QwenRequestFigures[] = [];
      for (let i = 0; i < reps; i++) warm.push(await ask(`warm-${i}`));
      rows.push({ image: input.label, cold, warm: middle(warm) ?? cold });
    }
    return {
      library: `@huggingface/transformers ${env.version}, onnxruntime-web ${(env.backends.onnx as { versions?: { web?: string } }).versions?.web ?? '?'} (webgpu, fp32)`,
      loadMs,
      rows,
      peakGpuBytes: probe.snapshot().peakBytes,
      probePeakGpuBytes: probe.snapshot().peakBytes,
    };
  } finally {
    await model.dispose();
  }
}

async function main(): Promise<QwenPageResult> {
  const started = performance.now();
  const q = new URLSearchParams(location.search);
  const model = q.get('model');
  const peerModel = q.get('peerModel');
  const family = q.get('family');
  if (!model || !peerModel || !family) throw new QwenPageError('the page needs model=, peerModel= and family=');
  const tokens = Number(q.get('tokens') ?? 16);
  const reps = Number(q.get('reps') ?? 1);
  const labels = (q.get('images') ?? '448x448,1280x720').split(',');
  const gpu = await createBrowserGpuContext();
  const adapter = { adapter: adapterName(gpu.adapter), kernelVariant: gpu.kernelVariant };
  gpu.destroy();
  log(`adapter ${adapter.adapter}, our kernel variant ${adapter.kernelVariant}`);
  const inputs = await prepareInputs(`/${model}/`, labels);
  const probe = new GpuProbe();
  probe.install();
  try {
    let ours: QwenSideFigures | Skipped = { skipped: 'not requested (ours=0)' };
    if (q.get('ours') !== '0') {
      try {
        ours = await runOurs(`/${model}/`, inputs, tokens, reps, probe);
      } catch (e) {
        ours = { skipped: `ours failed: ${errorText(e)}` };
        log(ours.skipped);
      }
    }
    let peer: QwenSideFigures | Skipped = { skipped: 'not requested (peer=0)' };
    if (q.get('peer') !== '0') {
      try {
        peer = await runPeer(family, peerModel, inputs, tokens, reps, probe);
      } catch (e) {
        peer = { skipped: `transformers.js failed: ${errorText(e)}` };
        log(peer.skipped);
      }
    }
    return { userAgent: navigator.userAgent, ...adapter, ours, peer, pageSeconds: (performance.now() - started) / 1000 };
  } finally {
    probe.uninstall();
  }
}

main().then(
  (result) => {
    window.__qwenBenchResult = result;
  },
  (e: unknown) => {
    window.__qwenBenchError = e instanceof Error ? `${e.name}: ${e.message}\n${e.stack ?? ''}` : String(e);
  },
);
