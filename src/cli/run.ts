// `tessera run`: answer a prompt about an image, a video or audio, or transcribe audio, streaming the
// answer to stdout.

import { openAsBlob } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { createEngine } from '../engine/create-node';
import type { AudioInfo, ChatCompletionRequest, ChatContentPart, EngineProgress, MediaInfo, TesseraInfo } from '../engine/types';
import { describeDtype, modelParts } from '../model/weights/dtype';
import type { RunArgs } from './args';

/** The parsed `run` arguments (args.ts) and where output goes. */
export interface RunOptions extends Omit<RunArgs, 'command' | 'verbose'> {
  out: (text: string) => void;
  err: (text: string) => void;
}

function progressPrinter(err: (text: string) => void) {
  let lastFile = '';
  let lastPct = -1;
  return (p: EngineProgress) => {
    if (p.phase === 'ready' || !p.file || !p.totalBytes) return;
    const pct = Math.floor(((p.loadedBytes ?? 0) / p.totalBytes) * 100);
    if (p.file === lastFile && pct < lastPct + 25 && pct !== 100) return;
    lastFile = p.file;
    lastPct = pct;
    err(`  ${p.phase} ${p.file} ${pct}% of ${(p.totalBytes / 2 ** 20).toFixed(1)} MiB\n`);
  };
}

export async function run(o: RunOptions): Promise<number> {
  const t0 = performance.now();
  if (!o.json && o.notice) o.err(`${o.notice}\n`);
  // Read the image (and find the video) before loading the model, so a wrong path fails at once. The video
  // stays a file-backed Blob: only its container index and sampled frames are ever read.
  const content: ChatContentPart[] = [];
  if (o.image) content.push({ type: 'image', image: await readFile(o.image) });
  if (o.video) {
    await stat(o.video);
    content.push({ type: 'video', video: await openAsBlob(o.video) });
  }
  if (o.audio) content.push({ type: 'audio', audio: await readFile(o.audio) });
  if (!o.transcribe) content.push({ type: 'text', text: o.prompt });
  if (!o.json) o.err(`loading ${o.model}\n`);
  const engine = await createEngine({
    model: o.model,
    mmproj: o.mmproj,
    dtype: o.dtype,
    compute: o.compute,
    device: o.device,
    weightCacheDir: o.weightCache === false ? false : undefined,
    decodePlan: o.decodePlan,
    gpu:
      o.variant || o.maxBinding
        ? { ...(o.variant ? { kernelVariant: o.variant } : {}), ...(o.maxBinding ? { maxStorageBufferBindingSize: o.maxBinding } : {}) }
        : undefined,
    onProgress: o.json ? undefined : progressPrinter(o.err),
  });
  if (!o.json) o.err(`device: ${engine.stats().device.backend} (${engine.stats().device.reason})\n`);
  try {
    const req: ChatCompletionRequest = {
      messages: [{ role: 'user', content }],
      max_tokens: o.maxTokens,
      temperature: o.temperature,
      top_p: o.topP,
      top_k: o.topK,
      seed: o.seed,
      ...(o.videoPruning ? { tessera: { videoPruning: o.videoPruning } } : {}),
    };
    const loadMs = performance.now() - t0;
    if (o.transcribe) return await transcribe(engine, content, o, loadMs);
    if (o.json) {
      const r = await engine.chat.completions.create({ ...req, stream: false });
      o.out(
        `${JSON.stringify({
          model: r.model,
          text: r.choices[0].message.content,
          finish_reason: r.choices[0].finish_reason,
          token_ids: r.tessera.tokenIds,
          prompt_tokens: r.usage.prompt_tokens,
          image_tokens: r.tessera.imageTokens,
          tiles: r.tessera.numTiles,
          timings: { loadMs, ...r.tessera.timings },
          media: r.tessera.media,
          videos: r.tessera.videos,
          audios: r.tessera.audios,
          encoder: engine.stats().encoder.mode,
          device: engine.stats().device,
          weights: {
            dtype:
              engine.model.backend === 'webgpu'
                ? describeDtype(engine.model.weights.dtype, modelParts(engine.model.config))
                : `onnx (${engine.model.backend})`,
            gpuBytes: engine.stats().weightBytes,
          },
          // The language model's device: its peak since the engine was made (weights, KV cache, scratch).
          gpu_peak_bytes: engine.stats().gpuMemory.peakBytes,
        })}\n`,
      );
      return 0;
    }
    if (!o.json) o.err(`loaded in ${(loadMs / 1000).toFixed(1)} s; answering\n\n`);
    const stream = await engine.chat.completions.create({ ...req, stream: true });
    for await (const chunk of stream) {
      const delta = chunk.choices[0].delta.content;
      if (delta) o.out(delta);
      if (chunk.tessera) {
        const t = chunk.tessera.timings;
        o.out('\n');
        for (const a of chunk.tessera.audios) o.err(audioLine(a));
        for (const v of chunk.tessera.videos) {
          o.err(
            `\nvideo: ${v.frames.length} of ${v.numFrames} frames (${v.duration.toFixed(1)} s, ${v.codec}, ${v.decoder}) at ` +
              `${v.frames.map((f) => f.label).join(' ')}; ${v.tokens} frame tokens${v.tokens < v.unprunedTokens ? ` of ${v.unprunedTokens} (pruned)` : ''}\n`,
          );
        }
        o.err(
          `\n[${chunk.choices[0].finish_reason}] ${chunk.tessera.tokenIds.length} tokens; prompt ${chunk.tessera.promptTokens} tokens ` +
            `(${chunk.tessera.imageTokens} image tokens, ${mediaShape(chunk.tessera.media, chunk.tessera.numTiles)}); process ${t.processMs.toFixed(0)} ms, ` +
            `encode ${t.encodeMs.toFixed(0)} ms, prefill ${t.prefillMs.toFixed(0)} ms, TTFT ${t.ttftMs.toFixed(0)} ms, ` +
            `decode ${t.decodeTokensPerSecond.toFixed(1)} tokens/s\n`,
        );
      }
    }
    return 0;
  } finally {
    engine.destroy();
  }
}

function audioLine(a: AudioInfo): string {
  const cached = a.chunks.filter((c) => c.source !== 'encoded').length;
  return (
    `\naudio: ${a.duration.toFixed(1)} s (${a.format}, ${a.sampleRate} Hz, ${a.channels} ch, ${a.decoder}); ` +
    `${a.chunks.length} chunk(s) of 30 s${cached ? `, ${cached} from the cache` : ''}; ${a.tokens} audio tokens\n`
  );
}

function summaryLine(info: TesseraInfo, finish: string): string {
  const t = info.timings;
  return (
    `\n[${finish}] ${info.tokenIds.length} tokens; prompt ${info.promptTokens} tokens; process ${t.processMs.toFixed(0)} ms, ` +
    `encode ${t.encodeMs.toFixed(0)} ms, prefill ${t.prefillMs.toFixed(0)} ms, TTFT ${t.ttftMs.toFixed(0)} ms, ` +
    `decode ${t.decodeTokensPerSecond.toFixed(1)} tokens/s\n`
  );
}

/** `--transcribe`: engine.audio.transcriptions over the one audio part. */
async function transcribe(
  engine: Awaited<ReturnType<typeof createEngine>>,
  content: ChatContentPart[],
  o: RunOptions,
  loadMs: number,
): Promise<number> {
  const file = (content.find((p) => p.type === 'audio') as Extract<ChatContentPart, { type: 'audio' }>).audio;
  const req = { file, language: o.language, max_tokens: o.maxTokens, temperature: o.temperature, seed: o.seed };
  if (o.json) {
    const r = await engine.audio.transcriptions.create({ ...req, stream: false });
    o.out(
      `${JSON.stringify({
        model: engine.modelId,
        text: r.text,
        token_ids: r.tessera.tokenIds,
        usage: r.usage,
        timings: { loadMs, ...r.tessera.timings },
        audios: r.tessera.audios,
        encoder: engine.stats().encoder.mode,
      })}\n`,
    );
    return 0;
  }
  o.err(`loaded in ${(loadMs / 1000).toFixed(1)} s; transcribing\n\n`);
  for await (const e of await engine.audio.transcriptions.create({ ...req, stream: true })) {
    if (e.type === 'transcript.text.delta') o.out(e.delta);
    else {
      o.out('\n');
      for (const a of e.tessera.audios) o.err(audioLine(a));
      o.err(summaryLine(e.tessera, e.tessera.tokenIds.length >= o.maxTokens ? 'length' : 'stop'));
    }
  }
  return 0;
}

/** The images' tiles (Idefics3), or their patch grids (Qwen-VL: frames x rows x columns of patches). */
function mediaShape(media: readonly MediaInfo[], numTiles: number): string {
  const grids = media.flatMap((m) => (m.grid ? [`${m.grid.t}x${m.grid.h}x${m.grid.w}`] : []));
  return grids.length > 0 ? `patch grid${grids.length > 1 ? 's' : ''} ${grids.join(', ')}` : `${numTiles} tiles`;
}
