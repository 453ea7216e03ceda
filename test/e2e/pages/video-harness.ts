// Browser harness for test/e2e/video.spec.ts: an engine on the tiny SmolVLM2 checkpoint, asked about the
// committed test clips (test/fixtures/video/, each frame shows its own index), with the thumbnails read back
// to the frame index they show. For the long-clip test, the in-process encoder runs on this page behind a
// VideoDecoder that counts what it decodes and how many decoded frames are open at once (a wrapper around the
// real WebCodecs decoder, on the page only: product code is unchanged).

import { createEngine } from '../../../src/engine/create-browser';
import type { Engine } from '../../../src/engine/engine';
import type { ChatCompletionRequest, EngineStats, TesseraInfo } from '../../../src/engine/types';
import { frameIndexOf } from '../../helpers/count-frames';

const MODEL = '/models/smolvlm2-video-tiny/';
const CLIPS = import.meta.glob('../../fixtures/video/*', { query: '?url', import: 'default', eager: true }) as Record<string, string>;

async function clipBytes(name: string): Promise<Uint8Array> {
  const url = CLIPS[`../../fixtures/video/${name}`];
  if (!url) throw new Error(`no test clip ${name}`);
  return new Uint8Array(await (await fetch(url)).arrayBuffer());
}

/** Decoded frames so far and the most open at once (VideoFrames not closed yet). */
const decoding = { outputs: 0, open: 0, maxOpen: 0 };

function countDecodes(): void {
  const Real = globalThis.VideoDecoder;
  const closeFrame = VideoFrame.prototype.close;
  VideoFrame.prototype.close = function (this: VideoFrame) {
    if (!(this as { counted?: boolean }).counted) return closeFrame.call(this);
    (this as { counted?: boolean }).counted = false;
    decoding.open--;
    return closeFrame.call(this);
  };
  globalThis.VideoDecoder = class extends Real {
    constructor(init: VideoDecoderInit) {
      super({
        ...init,
        output: (frame: VideoFrame) => {
          decoding.outputs++;
          decoding.open++;
          decoding.maxOpen = Math.max(decoding.maxOpen, decoding.open);
          (frame as { counted?: boolean }).counted = true;
          init.output(frame);
        },
      });
    }
  };
}

export interface VideoAskResult {
  tokenIds?: number[];
  promptTokens?: number;
  videos?: Array<Omit<TesseraInfo['videos'][0], 'frames'> & { frames: Array<{ index: number; label: string; shown?: number }> }>;
  media?: TesseraInfo['media'];
  error?: { name: string; message: string };
}

const harness = {
  engine: undefined as Engine | undefined,
  async create(options: { mode?: 'workers' | 'in-process'; countDecodes?: boolean } = {}): Promise<string> {
    harness.engine?.destroy();
    if (options.countDecodes) countDecodes();
    harness.engine = await createEngine({ model: MODEL, encoder: { mode: options.mode ?? 'workers' }, kvCacheTokens: 2048 });
    return harness.engine.stats().encoder.mode;
  },
  async ask(
    name: string,
    options: { blob?: boolean; bytes?: number; maxTokens?: number; tessera?: ChatCompletionRequest['tessera'] } = {},
  ): Promise<VideoAskResult> {
    try {
      let bytes = await clipBytes(name);
      if (options.bytes !== undefined) bytes = bytes.subarray(0, options.bytes);
      const video = options.blob ? new File([bytes as Uint8Array<ArrayBuffer>], name) : bytes;
      const r = await harness.engine!.chat.completions.create({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'video', video },
              { type: 'text', text: 'What happens in this video?' },
            ],
          },
        ],
        max_tokens: options.maxTokens ?? 3,
        tessera: { videoThumbnails: 80, ...options.tessera },
      });
      return {
        tokenIds: r.tessera.tokenIds,
        promptTokens: r.usage.prompt_tokens,
        media: r.tessera.media,
        videos: r.tessera.videos.map((v) => ({
          ...v,
          frames: v.frames.map((f) => ({
            index: f.index,
            label: f.label,
            shown: f.thumbnail && frameIndexOf(f.thumbnail.rgba, f.thumbnail.width, f.thumbnail.height, 4),
          })),
        })),
      };
    } catch (e) {
      const err = e as Error;
      return { error: { name: err.name, message: err.message } };
    }
  },
  stats(): EngineStats {
    return harness.engine!.stats();
  },
  decoding(): typeof decoding {
    return { ...decoding };
  },
};

declare global {
  interface Window {
    videoHarness: typeof harness;
  }
}
window.videoHarness = harness;
document.body.dataset.ready = 'yes';
