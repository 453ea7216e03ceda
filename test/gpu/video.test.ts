// Video end to end in Node on the tiny SmolVLM2-shaped checkpoint (smolvlm2-video-tiny: 16 tokens per frame,
// max_frames 8): greedy tokens against the PyTorch reference for a 4-frame clip; MP4/WebM through ffmpeg
// and animated GIF/WebP through sharp, decoding exactly the frames SmolVLM2 samples (every test frame shows
// its own index); the frame-level and whole-clip caches; EVS pruning; and the bad inputs, each a
// named error for that request only. Needs ffmpeg (test/helpers/video.ts says how to get it).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Engine } from '../../src/engine/engine';
import type { ChatCompletionRequest, VideoFrames } from '../../src/engine/types';
import { evsPrune, evsRetainedCount } from '../../src/encoder/video/evs';
import {
  FfmpegMissingError,
  InvalidMessageError,
  VideoDecodeError,
  VideoEmptyError,
  VideoNotSupportedError,
  AudioNotSupportedError,
  VideoTrackMissingError,
} from '../../src/errors';
import { testEngine } from '../helpers/engine';
import { ensureTinyModels } from '../helpers/tiny-models';
import { clip, countFrameImage, countingFfmpeg, frameIndexOf, requireFfmpeg, videoGolden } from '../helpers/video';
import { useGpu } from './gpu';
import { testClip, wavBytes } from '../helpers/audio-clips';

const gpu = useGpu();
let engine: Engine;
let dir: string;

type Video = Extract<ChatCompletionRequest['messages'][0]['content'], unknown[]>[0] & { type: 'video' };

function ask(
  video: Video['video'],
  extra: Partial<ChatCompletionRequest> & { stream?: false } = {},
): ChatCompletionRequest & { stream?: false } {
  return {
    messages: [
      {
        role: 'user',
        content: [
          { type: 'video', video },
          { type: 'text', text: 'What happens in this video?' },
        ],
      },
    ],
    max_tokens: 3,
    ...extra,
  };
}

/** The frame indices the thumbnails show (80 px thumbnails of 80 x 48 clips are the frames themselves). */
function shownIndices(r: Awaited<ReturnType<Engine['videoFrames']>>): number[] {
  return r.frames.map((f) => frameIndexOf(f.thumbnail!.rgba, f.thumbnail!.width, f.thumbnail!.height, 4));
}

let healthyTokens: number[];
async function expectHealthy() {
  const r = await engine.chat.completions.create(ask(clip('count-4s.mp4'), { max_tokens: 2 }));
  expect(r.tessera.tokenIds).toEqual(healthyTokens);
  const s = engine.stats();
  expect(s.kv.numFreeBlocks).toBe(s.kv.numBlocks);
  for (const m of r.tessera.media) expect(engine.media.refCount(m.key)).toBe(0);
}

beforeAll(async () => {
  requireFfmpeg();
  dir = ensureTinyModels();
  engine = await testEngine(gpu(), `${dir}/smolvlm2-video-tiny`, { kvCacheTokens: 4096, maxTokensPerStep: 128 });
  healthyTokens = (await engine.chat.completions.create(ask(clip('count-4s.mp4'), { max_tokens: 2 }))).tessera.tokenIds;
});
afterAll(() => engine?.destroy());

describe('video', () => {
  it('a 4-frame clip: the prompt ids and greedy tokens of the PyTorch reference', async () => {
    const g = videoGolden();
    const video: VideoFrames = { frames: g.frames.map((image, k) => ({ image, timestamp: g.timestamps[k] })), duration: g.duration };
    const plan = engine.processor.planPrompt(
      [
        {
          role: 'user',
          content: [
            { type: 'video', video },
            { type: 'text', text: g.prompt },
          ],
        },
      ],
      [],
      undefined,
      [{ timestamps: g.timestamps, duration: g.duration, tokensPerFrame: [16, 16, 16, 16] }],
    );
    expect(Array.from(plan.tokenIds)).toEqual(g.inputIds);
    const r = await engine.chat.completions.create({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'video', video },
            { type: 'text', text: g.prompt },
          ],
        },
      ],
      max_tokens: 20,
    });
    expect(r.tessera.tokenIds).toEqual(g.tokens);
    expect(r.usage.prompt_tokens).toBe(g.inputIds.length);
    expect(r.tessera.media.map((m) => m.video)).toEqual([0, 1, 2, 3].map((frame) => ({ videoIndex: 0, frame })));
    expect(r.tessera.videos[0].frames.map((f) => f.label)).toEqual(['00:00', '00:01', '00:02', '00:03']);
    expect(r.tessera.videos[0]).toMatchObject({ decoder: 'frames', numFrames: 4, duration: 4, tokens: 64, unprunedTokens: 64 });
  });

  it('MP4 and WebM through ffmpeg, GIF and WebP through sharp: the frames SmolVLM2 samples, with their times', async () => {
    const cases: Array<[string, number[], string[], number]> = [
      ['count-4s.mp4', [0, 6, 12, 19], ['00:00', '00:01', '00:02', '00:03'], 20],
      ['count-4s-vp9.webm', [0, 6, 12, 19], ['00:00', '00:01', '00:02', '00:03'], 20],
      ['count-4s-vp8.webm', [0, 6, 12, 19], ['00:00', '00:01', '00:02', '00:03'], 20],
      ['count-half.mp4', [0], ['00:00'], 5], // shorter than one sampling interval: one frame
      ['count-12s.mp4', [2, 4, 7, 10, 13, 16, 19, 22], ['00:01', '00:02', '00:03', '00:05', '00:06', '00:08', '00:09', '00:11'], 24], // > max_frames: skip 1 s
      ['count.gif', [0, 2, 4, 7], ['00:00', '00:01', '00:02', '00:03'], 8],
      ['count.webp', [0, 2, 4, 7], ['00:00', '00:01', '00:02', '00:03'], 8],
    ];
    for (const [name, indices, labels, numFrames] of cases) {
      const info = await engine.videoFrames(clip(name), { thumbnailEdge: 80, encode: false });
      expect({
        name,
        indices: info.frames.map((f) => f.index),
        labels: info.frames.map((f) => f.label),
        numFrames: info.numFrames,
      }).toEqual({ name, indices, labels, numFrames });
      expect(shownIndices(info), name).toEqual(indices);
      const r = await engine.chat.completions.create(ask(clip(name)));
      expect(r.tessera.videos[0].frames.map((f) => f.index)).toEqual(indices);
      expect(r.tessera.tokenIds).toHaveLength(3);
    }
  });

  it('asking twice about a clip decodes 0 frames and encodes 0 frames the second time; answers are identical', async () => {
    const first = await engine.chat.completions.create(ask(clip('count-12s.mp4'), { max_tokens: 4 }));
    const before = engine.stats().encoder;
    const again = await engine.chat.completions.create(ask(clip('count-12s.mp4'), { max_tokens: 4 }));
    const after = engine.stats().encoder;
    expect(again.tessera.tokenIds).toEqual(first.tessera.tokenIds);
    expect(again.tessera.videos[0].source).toBe('clip-cache');
    expect(after.video.framesDecoded - before.video.framesDecoded).toBe(0);
    expect(after.video.clipCacheHits - before.video.clipCacheHits).toBe(1);
    expect(after.encodes - before.encodes).toBe(0);
    expect(new Set(again.tessera.media.map((m) => m.source))).toEqual(new Set(['memory']));
  });

  it('two clips that share frames encode each shared frame once', async () => {
    const list = (ks: number[]): VideoFrames => ({ frames: ks.map((k, i) => ({ image: countFrameImage(1000 + k), timestamp: i })) });
    const a = await engine.chat.completions.create(ask(list([0, 1, 2, 3])));
    const before = engine.stats().encoder.encodes;
    const b = await engine.chat.completions.create(ask(list([2, 3, 4, 5])));
    expect(engine.stats().encoder.encodes - before).toBe(2);
    expect(b.tessera.media.map((m) => m.source)).toEqual(['memory', 'memory', 'encoded', 'encoded']);
    expect(b.tessera.media[0].key).toBe(a.tessera.media[2].key);
    // The same frame twice in one clip is one encode too.
    const before2 = engine.stats().encoder.encodes;
    await engine.chat.completions.create(ask(list([6, 6, 6, 7])));
    expect(engine.stats().encoder.encodes - before2).toBe(2);
  });

  it('EVS: q = 0 is the unpruned request; q = 0.5 keeps the planned count, chosen from the frames as evs.ts does', async () => {
    const plain = await engine.chat.completions.create(ask(clip('count-4s.mp4'), { max_tokens: 4 }));
    const q0 = await engine.chat.completions.create(ask(clip('count-4s.mp4'), { max_tokens: 4, tessera: { videoPruning: 0 } }));
    expect(q0.tessera.tokenIds).toEqual(plain.tessera.tokenIds);
    expect(q0.usage.prompt_tokens).toBe(plain.usage.prompt_tokens);

    const half = await engine.chat.completions.create(ask(clip('count-4s.mp4'), { max_tokens: 4, tessera: { videoPruning: 0.5 } }));
    const v = half.tessera.videos[0];
    expect(v.unprunedTokens).toBe(64);
    expect(v.tokens).toBe(evsRetainedCount(16, 4, 0.5));
    expect(half.usage.prompt_tokens).toBe(plain.usage.prompt_tokens - (64 - v.tokens));
    expect(half.tessera.media).toHaveLength(1);
    expect(half.tessera.media[0].video).toEqual({ videoIndex: 0 });
    // The pruned item's embeddings are EVS's choice from the frames' cached embeddings.
    const id = 1e9;
    try {
      const frames = await Promise.all(
        plain.tessera.media.map(
          async (m) => (await engine.media.lookup({ key: m.key, layout: undefined as never, numTokens: 16 }, id))!.data,
        ),
      );
      const pruned = await engine.media.lookup({ key: half.tessera.media[0].key, layout: undefined as never, numTokens: v.tokens }, id);
      expect(pruned!.data).toEqual(evsPrune(frames, engine.media.info.hiddenSize, 0.5));
    } finally {
      engine.media.release(id);
    }
    await expectHealthy();
  });
});

describe('bad video input: a named error for that request, and the engine stays usable', () => {
  it('a truncated MP4 (index at the end: lost; index first: frames lost)', async () => {
    for (const name of ['count-4s.mp4', 'count-4s-faststart.mp4']) {
      const whole = clip(name);
      const err = await engine.chat.completions.create(ask(whole.subarray(0, Math.floor(whole.length * 0.6)))).catch((e: unknown) => e);
      expect(err, name).toBeInstanceOf(VideoDecodeError);
      expect((err as Error).message, name).toMatch(/cut short/);
      await expectHealthy();
    }
  });

  it('a clip with no video track', async () => {
    const err = await engine.chat.completions.create(ask(clip('audio-only.m4a'))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VideoTrackMissingError);
    expect((err as Error).message).toContain('audio aac');
    await expectHealthy();
  });

  it('a 0-second clip', async () => {
    const err = await engine.chat.completions.create(ask(clip('zero-seconds.mp4'))).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VideoEmptyError);
    await expectHealthy();
  });

  it('a codec WebCodecs cannot decode (HEVC) is decoded by ffmpeg in Node: a correct answer', async () => {
    const info = await engine.videoFrames(clip('count-4s-hevc.mp4'), { thumbnailEdge: 80, encode: false });
    expect(shownIndices(info)).toEqual([0, 6, 12, 19]);
    const r = await engine.chat.completions.create(ask(clip('count-4s-hevc.mp4')));
    expect(r.tessera.videos[0].codec).toBe('hevc');
    await expectHealthy();
  });

  it('a 2-hour clip: only max_frames frames are decoded (one ffmpeg run each), the right ones', async () => {
    const ffmpeg = countingFfmpeg();
    const e = await testEngine(gpu(), `${dir}/smolvlm2-video-tiny`, {
      kvCacheTokens: 2048,
      maxTokensPerStep: 128,
      encoder: { ffmpegPath: ffmpeg.path },
    });
    try {
      const rss = process.memoryUsage().rss;
      const r = await e.chat.completions.create(ask(clip('two-hours.mp4'), { tessera: { videoThumbnails: 80 } }));
      const v = r.tessera.videos[0];
      expect(v).toMatchObject({ numFrames: 7200, duration: 7200 });
      const want = [1, 1029, 2057, 3085, 4114, 5142, 6170, 7199]; // linspace(1, 7199, 8): 1 s skipped at each end
      expect(v.frames.map((f) => f.index)).toEqual(want);
      expect(v.frames.map((f) => frameIndexOf(f.thumbnail!.rgba, 80, 48, 4))).toEqual(want.map((i) => i % 65536));
      expect(v.frames.at(-1)!.label).toBe('119:59');
      expect(ffmpeg.runs().filter((a) => a.includes('-frames:v 1'))).toHaveLength(8);
      expect(process.memoryUsage().rss - rss).toBeLessThan(200 * 2 ** 20);
      expect(e.stats().encoder.video.framesDecoded).toBe(8);
    } finally {
      e.destroy();
    }
  });

  it('no ffmpeg: FfmpegMissingError saying what to install; animated GIF still works', async () => {
    const e = await testEngine(gpu(), `${dir}/smolvlm2-video-tiny`, {
      kvCacheTokens: 2048,
      maxTokensPerStep: 128,
      encoder: { ffmpegPath: '/nonexistent/ffmpeg' },
    });
    try {
      const err = await e.chat.completions.create(ask(clip('count-4s.mp4'))).catch((x: unknown) => x);
      expect(err).toBeInstanceOf(FfmpegMissingError);
      expect((err as Error).message).toContain('apt-get install ffmpeg');
      const r = await e.chat.completions.create(ask(clip('count.gif')));
      expect(r.tessera.videos[0].frames).toHaveLength(4);
    } finally {
      e.destroy();
    }
  });

  it('bad frame lists, a bad pruning rate, and video on a checkpoint without video', async () => {
    for (const video of [
      { frames: [] },
      { frames: [{ image: countFrameImage(1), timestamp: -1 }] },
      {
        frames: [
          { image: countFrameImage(1), timestamp: 2 },
          { image: countFrameImage(2), timestamp: 1 },
        ],
      },
    ]) {
      const err = await engine.chat.completions.create(ask(video)).catch((x: unknown) => x);
      expect(err).toBeInstanceOf(InvalidMessageError);
    }
    const err = await engine.chat.completions.create(ask(clip('count-4s.mp4'), { tessera: { videoPruning: 1 } })).catch((x: unknown) => x);
    expect(err).toBeInstanceOf(InvalidMessageError);
    const v1 = await testEngine(gpu(), `${dir}/smolvlm-tiny`, { kvCacheTokens: 2048, maxTokensPerStep: 128 });
    try {
      const e = await v1.chat.completions.create(ask(clip('count-4s.mp4'))).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(VideoNotSupportedError);
      // Audio to this image checkpoint: AudioNotSupportedError, and the next request is served.
      const wav = wavBytes(testClip(1, 16000), 16000);
      await expect(
        v1.chat.completions.create({ messages: [{ role: 'user', content: [{ type: 'audio', audio: wav }] }], max_tokens: 2 }),
      ).rejects.toThrow(AudioNotSupportedError);
      await expect(v1.audio.transcriptions.create({ file: wav })).rejects.toThrow(AudioNotSupportedError);
      const r = await v1.chat.completions.create({ messages: [{ role: 'user', content: 'Hi' }], max_tokens: 2 });
      expect(r.tessera.tokenIds.length).toBeGreaterThan(0);
    } finally {
      v1.destroy();
    }
    await expectHealthy();
  });

  it('video_url (a data: URL) answers as the bytes do', async () => {
    const bytes = clip('count-4s.mp4');
    const url = `data:video/mp4;base64,${Buffer.from(bytes).toString('base64')}`;
    const r = await engine.chat.completions.create({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'video_url', video_url: { url } },
            { type: 'text', text: 'What happens in this video?' },
          ],
        },
      ],
      max_tokens: 2,
    });
    expect(r.tessera.tokenIds).toEqual(healthyTokens);
    expect(r.tessera.videos[0].source).toBe('clip-cache');
  });
});

describe('video with encoder worker threads (dist/encoder-worker.js)', () => {
  it('answers an MP4 as the in-process encoder does', async () => {
    const e = await testEngine(gpu(), `${dir}/smolvlm2-video-tiny`, { kvCacheTokens: 2048, maxTokensPerStep: 128, workers: true });
    try {
      const r = await e.chat.completions.create(ask(clip('count-4s.mp4'), { max_tokens: 2 }));
      expect(r.tessera.tokenIds).toEqual(healthyTokens);
      expect(e.stats().encoder.mode).toBe('workers');
      const again = await e.chat.completions.create(ask(new Blob([clip('count-4s.mp4') as Uint8Array<ArrayBuffer>]), { max_tokens: 2 }));
      expect(again.tessera.videos[0].source).toBe('clip-cache');
      expect(again.tessera.tokenIds).toEqual(healthyTokens);
    } finally {
      e.destroy();
    }
  });
});
