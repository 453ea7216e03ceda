// Browser parity harness (used by test/e2e/parity.spec.ts): the same pipeline as test/gpu/parity.test.ts,
// in the browser's own WebGPU, returning the vision tower output, the connector output, the first-step
// logits and the greedy tokens for the test to compare with the PyTorch goldens.

import { createBrowserGpuContext } from '../../../src/gpu/browser';
import { UrlSource } from '../../../src/io/model-source';
import { generate } from '../../../src/model/generate';
import { loadModel } from '../../../src/families/load';
import type { DtypeOption } from '../../../src/model/weights/dtype';
import { CacheApiWeightStore } from '../../../src/model/weights/store';
import { decodeImageBrowser } from '../../../src/processor/image-decode';
import { Idefics3Processor } from '../../../src/processor/processor';

export interface ParityResult {
  tokenIds: number[];
  tilesU8: number[];
  towerOutput: number[];
  connector: number[];
  logits: number[];
  adapter: string;
  /** GPU bytes of the weights, and what happened to each file's stored quantized copy. */
  weightBytes: number;
  storedCopies: Record<string, string>;
}

export interface ParityOptions {
  dtype?: DtypeOption;
  /** Keep / read stored quantized copies in the Cache API. */
  weightCache?: boolean;
}

declare global {
  interface Window {
    tesseraParity?: (model: string, maxNewTokens: number, options?: ParityOptions) => Promise<ParityResult>;
  }
}

window.tesseraParity = async (model, maxNewTokens, options = {}) => {
  const gpu = await createBrowserGpuContext();
  try {
    const source = new UrlSource(model);
    const processor = await Idefics3Processor.load(source, { decodeImage: decodeImageBrowser });
    const loaded = await loadModel(gpu, source, {
      kvCacheTokens: 512,
      maxTokensPerStep: 128,
      dtype: options.dtype,
      weightStore: options.weightCache ? CacheApiWeightStore.available() : undefined,
    });
    try {
      const image = new Uint8Array(await (await fetch('/sample.png')).arrayBuffer());
      const prepared = await processor.prepare([
        {
          role: 'user',
          content: [
            { type: 'image', image },
            { type: 'text', text: 'Can you describe this image?' },
          ],
        },
      ]);
      const im = prepared.images[0];
      const vision = await loaded.vision!.encode({ pixels: im.pixelValues, numTiles: im.layout.numTiles }, { captureTowerOutput: true });
      const connector = await gpu.readF32(vision.embeddings);
      let logits: Float32Array | undefined;
      const tokenIds: number[] = [];
      for await (const t of generate(loaded.runner, 1, {
        promptIds: prepared.plan.tokenIds,
        placeholders: prepared.plan.placeholders.flatMap((p) => p.runs),
        mediaEmbeddings: connector,
        maxNewTokens,
        stopIds: new Set(processor.stopTokenIds),
        chunkSize: 100,
        onFirstLogits: (l) => (logits = l),
      })) {
        tokenIds.push(t);
      }
      gpu.release(vision.embeddings);
      return {
        tokenIds,
        tilesU8: Array.from(im.tilesU8),
        towerOutput: Array.from(vision.towerOutput!),
        connector: Array.from(connector),
        logits: Array.from(logits!),
        adapter: `${gpu.adapter.vendor} ${gpu.adapter.architecture}`,
        weightBytes: loaded.weights.sizeBytes,
        storedCopies: loaded.weights.storedCopies,
      };
    } finally {
      loaded.destroy();
    }
  } finally {
    gpu.destroy();
  }
};
document.body.dataset.ready = 'yes';

/** What the audio parity returns: the greedy tokens and how the audio was read, encoded and cached. */
export interface AudioParityResult {
  tokenIds: number[];
  chunks: number;
  decoder: string;
  encoderMode: string;
  sources: string[];
}

declare global {
  interface Window {
    /** Transcribes the golden clip of `seconds` (a float WAV at 16 kHz, made here) with language 'en'. */
    tesseraAudioParity?: (model: string, seconds: number, maxNewTokens: number) => Promise<AudioParityResult>;
  }
}

window.tesseraAudioParity = async (model, seconds, maxNewTokens) => {
  const [{ createEngine }, { testClip, wavBytes }] = await Promise.all([
    import('../../../src/engine/create-browser'),
    import('../../helpers/audio-clips'),
  ]);
  const engine = await createEngine({ model, kvCacheTokens: 2048 });
  try {
    const wav = wavBytes(testClip(seconds, 16000), 16000);
    const t = await engine.audio.transcriptions.create({ file: new Blob([wav]), language: 'en', max_tokens: maxNewTokens });
    const a = t.tessera.audios[0]!;
    return {
      tokenIds: t.tessera.tokenIds,
      chunks: a.chunks.length,
      decoder: a.decoder,
      encoderMode: engine.stats().encoder.mode,
      sources: a.chunks.map((c) => c.source),
    };
  } finally {
    engine.destroy();
  }
};

declare global {
  interface Window {
    /** Decodes `base64` audio as the encoder Web Worker does (WebCodecs) to mono PCM at `rate`, as base64 float32. */
    tesseraDecodeAudio?: (base64: string, rate: number) => Promise<{ pcm: string; format: string }>;
  }
}

window.tesseraDecodeAudio = async (base64, rate) => {
  const { decodeAudioBrowser } = await import('../../../src/encoder/audio/decode-browser');
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  const blocks: Float32Array[] = [];
  let format = '';
  for await (const block of decodeAudioBrowser(bytes, rate, { onInfo: (i) => (format = i.format) })) blocks.push(block);
  const pcm = new Float32Array(blocks.reduce((n, b) => n + b.length, 0));
  let at = 0;
  for (const b of blocks) {
    pcm.set(b, at);
    at += b.length;
  }
  let s = '';
  const u8 = new Uint8Array(pcm.buffer);
  for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode(...u8.subarray(i, i + 0x8000));
  return { pcm: btoa(s), format };
};

declare global {
  interface Window {
    /** The CPU backend in this page (onnxruntime-web, WebAssembly): greedy tokens about the sample image. */
    tesseraCpuParity?: (
      model: string,
      maxNewTokens: number,
      encoderMode?: 'in-process' | 'workers',
    ) => Promise<{
      tokenIds: number[];
      backend: string;
      /** engine.stats().device.reason (says how many WebAssembly threads). */
      reason: string;
      encoderMode: string;
      keys: string[];
      /** The same question asked while a long text request streams: its tokens, and how far the long one had got. */
      beside: { tokenIds: number[]; longTokensWhenDone: number; longTokens: number };
    }>;
  }
}

window.tesseraCpuParity = async (model, maxNewTokens, encoderMode) => {
  const { createEngine } = await import('../../../src/engine/create-browser');
  const engine = await createEngine({ model, device: 'wasm', ...(encoderMode ? { encoder: { mode: encoderMode } } : {}) });
  try {
    const sample = new Uint8Array(await (await fetch('/sample.png')).arrayBuffer());
    const ask = () =>
      engine.chat.completions.create({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'image', image: sample },
              { type: 'text', text: 'Can you describe this image?' },
            ],
          },
        ],
        max_tokens: maxNewTokens,
      });
    const r = await ask();
    // While a long text request streams, the same question again (its image read and prepared meanwhile):
    // it must be admitted beside the long one, not after it.
    const long = await engine.chat.completions.create({
      messages: [{ role: 'user', content: 'Tell me a long story.' }],
      max_tokens: 400,
      stream: true,
    });
    let longTokens = 0;
    let longTokensWhenDone = -1;
    let beside: Promise<number[]> | undefined;
    for await (const chunk of long) {
      if (chunk.choices[0]?.delta.content) longTokens++;
      beside ??= ask().then((b) => {
        longTokensWhenDone = longTokens;
        return b.tessera.tokenIds;
      });
    }
    return {
      tokenIds: r.tessera.tokenIds,
      backend: engine.stats().device.backend,
      reason: engine.stats().device.reason,
      encoderMode: engine.stats().encoder.mode,
      keys: r.tessera.media.map((m) => m.key),
      beside: { tokenIds: await beside!, longTokensWhenDone, longTokens },
    };
  } finally {
    engine.destroy();
  }
};

/** One answer: its text, finish reason, tokens and (when asked) log probabilities. */
interface BatchAnswer {
  text: string;
  finish: string;
  tokenIds: number[];
  logprobs: Array<{ token: string; logprob: number; top_logprobs: Array<{ token: string; logprob: number }> }>;
}

declare global {
  interface Window {
    /**
     * The first `aloneCount` of `requests` (default all) one at a time, then all of them at once, on `device`
     * ('webgpu' or 'wasm'); each answer's text, finish reason, tokens and log probabilities, and the most rows
     * one step ran.
     */
    tesseraBatch?: (
      model: string,
      device: 'webgpu' | 'wasm',
      requests: unknown[],
      aloneCount?: number,
    ) => Promise<{
      alone: BatchAnswer[];
      together: BatchAnswer[];
      maxBatch: number;
      backend: string;
    }>;
  }
}

window.tesseraBatch = async (model, device, requests, aloneCount = requests.length) => {
  const { createEngine } = await import('../../../src/engine/create-browser');
  const engine = await createEngine({ model, device, kvCacheTokens: 8192 });
  try {
    type Req = Parameters<typeof engine.chat.completions.create>[0] & { stream?: false };
    const answer = async (r: unknown): Promise<BatchAnswer> => {
      const c = await engine.chat.completions.create(r as Req);
      return {
        text: c.choices[0]!.message.content ?? '',
        finish: c.choices[0]!.finish_reason,
        tokenIds: c.tessera.tokenIds,
        logprobs: c.choices[0]!.logprobs?.content ?? [],
      };
    };
    // One at a time: the first `aloneCount` requests (Node's tests compare all of them on every backend).
    const alone: BatchAnswer[] = [];
    for (const r of requests.slice(0, aloneCount)) alone.push(await answer(r));
    const together = await Promise.all(requests.map(answer));
    return { alone, together, maxBatch: engine.stats().scheduler.batchSeqs.max, backend: engine.stats().device.backend };
  } finally {
    engine.destroy();
  }
};
