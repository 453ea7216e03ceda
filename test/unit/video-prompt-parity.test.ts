// SmolVLM2 video prompts against an independent reference of HF's processor (test/reference/
// video_reference.py: numpy linspace/unique, Python round(), num2words, timedelta and jinja2 with HF's
// video chat template; its output is committed as test/fixtures/goldens/video-reference.json). For every
// case: the sampled frame indices and timestamps are equal, and the prompt's token ids equal the reference
// text tokenized by transformers.js on the same tokenizer.json, on the REAL SmolVLM2-500M-Video-Instruct
// files and on the tiny checkpoint. Cases include clips shorter than one sampling interval, a tie that
// Python rounds to even, clips longer than max_frames (skip logic), two hours, and two clips in one message.

import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { AutoTokenizer, env } from '@huggingface/transformers';
import { beforeAll, describe, expect, it } from 'vitest';
import { makeTiny } from '../../scripts/make-tiny';
import { NodeDirSource } from '../../src/io/model-source-node';
import type { ChatMessage } from '../../src/processor/messages';
import { Idefics3Processor } from '../../src/processor/processor';
import { decodeImageNode } from '../../src/processor/image-decode-node';
import { frameTimestamp, numberToWords, timedeltaString } from '../../src/processor/video-prompt';
import { sampleFrames } from '../../src/processor/video-sampling';

const ROOT = resolve(import.meta.dirname, '../..');
const REFERENCE = JSON.parse(readFileSync(resolve(ROOT, 'test/fixtures/goldens/video-reference.json'), 'utf8')) as {
  cases: Array<{
    name: string;
    config: { checkpoint: string; fps: number; max_frames: number; image_seq_len: number };
    clips: Array<{ numFrames: number; fps: number; duration: number; indices: number[]; timestamps: number[] }>;
    messages: Array<{ role: 'system' | 'user' | 'assistant'; content: Array<{ type: 'text'; text: string } | { type: 'video' }> }>;
    text: string;
  }>;
  num2words: Record<string, string>;
  timedelta: Record<string, string>;
  timestamps: Record<string, string>;
};

/** The reference stores each run of N <image> as <image*N>. */
const expand = (text: string) => text.replace(/<image\*(\d+)>/g, (_, n: string) => '<image>'.repeat(Number(n)));

describe('video prompt parity with the HF reference (video-reference.json)', () => {
  const processors = new Map<string, Idefics3Processor>();
  const tokenizers = new Map<string, Awaited<ReturnType<typeof AutoTokenizer.from_pretrained>>>();
  beforeAll(async () => {
    if (!existsSync(resolve(ROOT, 'public/models/smolvlm2-video-tiny/model.safetensors'))) makeTiny(resolve(ROOT, 'public/models'));
    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    env.localModelPath = `${ROOT}/`;
    for (const dir of new Set(REFERENCE.cases.map((c) => c.config.checkpoint))) {
      processors.set(dir, await Idefics3Processor.load(new NodeDirSource(resolve(ROOT, dir)), { decodeImage: decodeImageNode }));
      tokenizers.set(dir, await AutoTokenizer.from_pretrained(dir));
    }
  });

  for (const c of REFERENCE.cases) {
    it(`${c.name}: same frames, timestamps and token ids`, () => {
      const p = processors.get(c.config.checkpoint)!;
      const video = p.config.video!;
      expect({ fps: video.fps, maxFrames: video.maxFrames, imageSeqLen: p.config.imageSeqLen }).toEqual({
        fps: c.config.fps,
        maxFrames: c.config.max_frames,
        imageSeqLen: c.config.image_seq_len,
      });
      const layouts = c.clips.map((clip) => {
        const s = sampleFrames({ numFrames: clip.numFrames, fps: clip.fps, duration: clip.numFrames / clip.fps }, video);
        expect(s.indices).toEqual(clip.indices);
        expect(s.timestamps).toEqual(clip.timestamps);
        return { timestamps: s.timestamps, duration: clip.numFrames / clip.fps, tokensPerFrame: s.indices.map(() => p.config.imageSeqLen) };
      });
      const messages = c.messages.map((m) => ({
        role: m.role,
        content: m.content.map((part) => (part.type === 'video' ? { type: 'video' as const, video: null } : part)),
      })) as ChatMessage<unknown, unknown>[];
      const plan = p.planPrompt(messages, [], undefined, layouts);
      const ref = Array.from(tokenizers.get(c.config.checkpoint)!.encode(expand(c.text)));
      expect(Array.from(plan.tokenIds)).toEqual(ref);
      // Each frame is one placeholder run of image_seq_len tokens, in frame order.
      expect(plan.videos.map((v) => v.frameRuns.length)).toEqual(c.clips.map((clip) => clip.indices.length));
      for (const v of plan.videos) for (const r of v.frameRuns) expect(r!.length).toBe(c.config.image_seq_len);
    });
  }

  it('num2words, timedelta and MM:SS formatting match Python for every reference value', () => {
    for (const [n, words] of Object.entries(REFERENCE.num2words)) expect(numberToWords(Number(n))).toBe(words);
    for (const [s, text] of Object.entries(REFERENCE.timedelta)) expect(timedeltaString(Number(s))).toBe(text);
    for (const [t, text] of Object.entries(REFERENCE.timestamps)) expect(frameTimestamp(Number(t))).toBe(text);
  });
});
