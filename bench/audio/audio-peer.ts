// The peer of `npm run bench:audio` in the browser: transformers.js (VoxtralForConditionalGeneration +
// VoxtralProcessor) on onnxruntime-web's WebGPU EP, fp32, on the ONNX export of the same random weights
// (bench/onnx-export/voxtral/), served by the same Vite dev server; nothing remote. Runs in its own page
// (audio-peer.html) in the same Chromium right after ours, with the same flags.
//
// Input: transformers.js takes PCM, not files, so the driver decodes the same clips with ffmpeg in Node to
// 16 kHz mono f32 (ours decodes the MP3 itself; that time is not in these figures). Its processor expands
// "[AUDIO]" to [BEGIN_AUDIO] + 375 [AUDIO] per 30 s chunk and runs WhisperFeatureExtractor on each chunk.
//
//   warm-up  a different 2 s clip, 2 tokens (compiles ORT's WebGPU shaders for both graphs), as our page does
//   cold     the 30 s clip: processor ms (log-mel + tokenizer), audio_encoder ms per chunk (session.run,
//            includes its output download), prefill ms, TTFT, decode tok/s, greedy token ids
//   recording  the 30 s 16 kHz WAV recording: its greedy token ids only. This is the request whose PCM is the
//            same in both engines (s16 at 16 kHz: no decoder or resampler in between), so its tokens are the
//            ones to compare with ours; the MP3's PCM differs a little (WebCodecs + our resampler vs ffmpeg).

import { type Tensor, VoxtralForConditionalGeneration, VoxtralProcessor, env } from '@huggingface/transformers';
import { configureEnv } from '../model/model-peer';
import { tokenTimes } from '../harness/timing';

/** Our page's question; with the [AUDIO] marker the processor expands, and Tekken's control tokens. */
export const PEER_PROMPT = '<s>[INST][AUDIO]What is said in this recording?[/INST]';

export interface AudioPeerFigures {
  library: string;
  onnxruntime: string;
  device: 'webgpu';
  dtype: 'fp32';
  loadMs: number;
  warmupMs: number;
  /** Its processor on the 30 s PCM: WhisperFeatureExtractor per chunk + tokenizer. */
  featuresMs: number;
  chunks: number;
  encodeMs: number;
  encodeMsPerChunk: number;
  prefillMs: number;
  promptTokens: number;
  /** Its prompt ids, first 4 and last 12 (the [AUDIO] run in between). */
  promptIdsHead: number[];
  promptIdsTail: number[];
  ttftMs: number;
  decodeTokensPerSecond: number;
  tokenIds: number[];
  /** Greedy token ids on the 30 s recording (same PCM as ours). */
  recordingTokenIds: number[];
  recordingPromptTokens: number;
  notes: string[];
}

export class AudioPeerError extends Error {
  override readonly name = 'AudioPeerError';
}

interface SessionLike {
  run(feeds: Record<string, unknown>, ...rest: unknown[]): Promise<Record<string, { data: unknown; dims: number[] }>>;
}

export interface AudioPeerRun {
  /** Model id under env.localModelPath ('/'): the folder name served by Vite. */
  modelId: string;
  /** 16 kHz mono PCM. */
  clip: Float32Array;
  warm: Float32Array;
  /** The 30 s recording for the token comparison; undefined skips that request. */
  recording?: Float32Array;
  maxNewTokens: number;
  log: (line: string) => void;
}

export async function runAudioPeer(run: AudioPeerRun): Promise<AudioPeerFigures> {
  configureEnv();
  const { log } = run;
  const tLoad = performance.now();
  const processor: any = await VoxtralProcessor.from_pretrained(run.modelId);
  const model: any = await VoxtralForConditionalGeneration.from_pretrained(run.modelId, { device: 'webgpu', dtype: 'fp32' });
  const loadMs = performance.now() - tLoad;
  log(`peer: transformers.js loaded ${Object.keys(model.sessions).join(', ')} in ${(loadMs / 1000).toFixed(1)} s`);
  try {
    const sessions = model.sessions as Record<string, SessionLike>;
    const encodeCalls: number[] = [];
    const decoderCalls: number[] = [];
    const wrap = (name: string, into: number[]) => {
      const s = sessions[name];
      if (!s) throw new AudioPeerError(`transformers.js opened no ${name} session (it has ${Object.keys(sessions).join(', ')})`);
      const inner = s.run.bind(s);
      s.run = async (...args) => {
        const t0 = performance.now();
        const out = await inner(...args);
        into.push(performance.now() - t0);
        // Each encoder run and each request's prefill as they finish: on software WebGPU one takes minutes.
        if (name === 'audio_encoder' || (args[0] as { inputs_embeds?: { dims: number[] } }).inputs_embeds?.dims[1] !== 1) {
          log(`peer: ${name} run took ${(into[into.length - 1] / 1000).toFixed(1)} s`);
        }
        return out;
      };
    };
    wrap('audio_encoder', encodeCalls);
    wrap('decoder_model_merged', decoderCalls);

    const generate = async (pcm: Float32Array, maxNewTokens: number) => {
      const { streamer, times: putTimes } = tokenTimes();
      const tProc = performance.now();
      const inputs = await processor(PEER_PROMPT, pcm);
      const processMs = performance.now() - tProc;
      const tGen = performance.now();
      const output = await model.generate({ ...inputs, max_new_tokens: maxNewTokens, do_sample: false, streamer });
      const ids = Array.from(inputs.input_ids.data as BigInt64Array, (x) => Number(x));
      const all = Array.from(output.data as BigInt64Array, (x) => Number(x));
      return { ids, tokenIds: all.slice(ids.length), processMs, tGen, putTimes, chunks: (inputs.audio_values as Tensor).dims[0] as number };
    };

    const tWarm = performance.now();
    await generate(run.warm, 2);
    const warmupMs = performance.now() - tWarm;
    log(`peer: warm-up (2 s clip, 2 tokens) took ${(warmupMs / 1000).toFixed(1)} s`);
    encodeCalls.length = 0;
    decoderCalls.length = 0;

    log(`peer: 30 s clip, generate(max_new_tokens ${run.maxNewTokens}, do_sample false) ...`);
    const r = await generate(run.clip, run.maxNewTokens);
    const encodeMs = encodeCalls.reduce((a, b) => a + b, 0);
    const prefillMs = decoderCalls[0] ?? NaN;
    log(
      `peer: 30 s clip: ${r.chunks} chunk(s), ${r.ids.length} prompt tokens, encode ${encodeMs.toFixed(0)} ms, prefill ${prefillMs.toFixed(0)} ms, ` +
        `TTFT ${(r.processMs + (r.putTimes[0] - r.tGen)).toFixed(0)} ms; tokens ${JSON.stringify(r.tokenIds)}`,
    );
    const rec = run.recording ? await generate(run.recording, run.maxNewTokens) : { tokenIds: [], ids: [] };
    const decodeSpanMs = r.putTimes.length > 1 ? r.putTimes[r.putTimes.length - 1] - r.putTimes[0] : NaN;
    return {
      library: `@huggingface/transformers ${env.version}`,
      onnxruntime: `onnxruntime-web ${(env.backends.onnx as { versions?: { web?: string } }).versions?.web ?? '?'}`,
      device: 'webgpu',
      dtype: 'fp32',
      loadMs,
      warmupMs,
      featuresMs: r.processMs,
      chunks: r.chunks,
      encodeMs,
      encodeMsPerChunk: encodeMs / r.chunks,
      prefillMs,
      promptTokens: r.ids.length,
      promptIdsHead: r.ids.slice(0, 4),
      promptIdsTail: r.ids.slice(-12),
      ttftMs: r.processMs + (r.putTimes[0] - r.tGen),
      decodeTokensPerSecond: ((r.putTimes.length - 1) * 1000) / decodeSpanMs,
      tokenIds: r.tokenIds,
      recordingTokenIds: rec.tokenIds,
      recordingPromptTokens: rec.ids.length,
      notes: [
        'input: the 30 s MP3 decoded to 16 kHz mono f32 by ffmpeg in Node (transformers.js takes PCM; no decode in its figures)',
        'features = its VoxtralProcessor call (WhisperFeatureExtractor per chunk + tokenizer), in the page thread',
        'encode = audio_encoder session.run (encoder + projector, includes the output download), after a warm-up on a 2 s clip',
        'TTFT = processor + generate() start to the first generated token (streamer)',
        'decode tokens/s = generated tokens after the first / time from first to last token (as ours)',
        `numThreads ${(env.backends.onnx as { wasm?: { numThreads?: number } }).wasm?.numThreads ?? '?'} (the page is not cross-origin isolated)`,
      ],
    };
  } finally {
    await model.dispose();
  }
}
