// Qwen-VL video (src/processor/qwen-video.ts, qwen-prompt.ts): the frames each family samples from a clip,
// the size its frames are resized to, Qwen3-VL's frame-group timestamps and their "<0.2 seconds>" text,
// against test/reference/qwen_video_sampling.py (HF transformers 4.57's rules with numpy's and torch's own
// arithmetic); and video prompts against HF's procedure (render the checkpoint's template, expand each
// video, tokenize the whole text), with their M-RoPE positions.

import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { NodeDirSource } from '../../src/io/model-source-node';
import { ChatTemplate, type TemplateMessage } from '../../src/processor/chat-template';
import { mropePositions } from '../../src/processor/mrope-positions';
import { parseQwenImageProcessorConfig } from '../../src/processor/qwen-image-processor';
import { buildQwenPrompt } from '../../src/processor/qwen-prompt';
import { parseQwenVideoConfig, pythonFixed1, qwenGroupTimestamps, qwenVideoSize, sampleQwenFrames } from '../../src/processor/qwen-video';
import { TextTokenizer } from '../../src/processor/tokenizer';

const models = resolve(import.meta.dirname, '../fixtures/models');
const json = (path: string) => JSON.parse(readFileSync(path, 'utf8'));
const ref = json(resolve(import.meta.dirname, '../fixtures/goldens/qwen-video-sampling.json')) as {
  sampling: Array<{ total: number; fps: number; qwen2: number[]; qwen3: number[]; qwen3Timestamps: number[]; qwen3Text: string[] }>;
  resize: Array<{ frames: number; height: number; width: number; small: [number, number]; real: [number, number] }>;
  fixed1: Array<{ x: number; text: string }>;
};
const qwen3Image = parseQwenImageProcessorConfig(json(`${models}/Qwen3-VL-2B-Instruct/preprocessor_config.json`));
const qwen3 = parseQwenVideoConfig('qwen3_vl', qwen3Image, json(`${models}/Qwen3-VL-2B-Instruct/video_preprocessor_config.json`));
const qwen25Image = parseQwenImageProcessorConfig(json(`${models}/Qwen2.5-VL-3B-Instruct/preprocessor_config.json`));
const qwen25 = parseQwenVideoConfig('qwen2_5_vl', qwen25Image, undefined);
const GEOMETRY3 = { patchSize: 16, mergeSize: 2, temporalPatchSize: 2 };

describe('Qwen-VL video processing', () => {
  it("reads the checkpoints' settings: Qwen3-VL's clip budget, Qwen2.5-VL's image budget per frame, 2 fps", () => {
    expect(qwen3).toEqual({ family: 'qwen3_vl', fps: 2, minFrames: 4, maxFrames: 768, minPixels: 4096, maxPixels: 25165824 });
    expect(qwen25).toEqual({ family: 'qwen2_5_vl', fps: 2, minFrames: 4, maxFrames: 768, minPixels: 3136, maxPixels: 12845056 });
  });

  it.each(ref.sampling.map((s) => [`${s.total} frames at ${s.fps} fps`, s] as const))('samples %s as HF does', (_, s) => {
    expect(sampleQwenFrames(s.total, s.fps, qwen25, 2)).toEqual(s.qwen2);
    expect(sampleQwenFrames(s.total, s.fps, qwen3, 2)).toEqual(s.qwen3);
    const ts = qwenGroupTimestamps(
      s.qwen3.map((i) => i / s.fps),
      2,
    );
    for (const [i, t] of ts.entries()) expect(t).toBeCloseTo(s.qwen3Timestamps[i], 12);
    expect(ts.map((t) => `<${pythonFixed1(t)} seconds>`)).toEqual(s.qwen3Text);
  });

  it("resizes a Qwen3-VL clip within its budget over all frames (the checkpoint's, and a small one)", () => {
    const small = { ...qwen3, minPixels: 4096, maxPixels: 200000 };
    for (const r of ref.resize) {
      expect(qwenVideoSize(r.frames, r.height, r.width, qwen3, GEOMETRY3), `${r.frames} x ${r.height} x ${r.width}`).toEqual(r.real);
      expect(qwenVideoSize(r.frames, r.height, r.width, small, GEOMETRY3), `${r.frames} x ${r.height} x ${r.width}`).toEqual(r.small);
    }
    expect(() => qwenVideoSize(1, 64, 64, qwen3, GEOMETRY3)).toThrow(/at least 2 frames/);
  });

  it("writes tenths as Python's format does: exact halves to even", () => {
    for (const f of ref.fixed1) expect(pythonFixed1(f.x), String(f.x)).toBe(f.text);
  });
});

describe.each(['Qwen2.5-VL-3B-Instruct', 'Qwen3-VL-2B-Instruct'])('%s video prompt', (name) => {
  let tok: TextTokenizer;
  beforeAll(async () => {
    tok = await TextTokenizer.load(new NodeDirSource(`${models}/Qwen3-VL-2B-Instruct`));
  });
  const qwen3 = name.startsWith('Qwen3');
  const group = { h: 4, w: 6 };
  const timestamps = [0.25, 1.25, 2.5];
  const messages: TemplateMessage[] = [
    {
      role: 'user',
      content: [{ type: 'image' }, { type: 'text', text: 'and then ' }, { type: 'video' }, { type: 'text', text: 'What changed?' }],
    },
  ];

  it("HF's ids: the template rendered, the video expanded, the text tokenized; positions from the runs", () => {
    const template = new ChatTemplate(json(`${models}/${name}/chat_template.json`).chat_template, tok.templateTokens());
    const p = buildQwenPrompt(template, tok, messages, [{ grid: { t: 1, h: 2, w: 2 } }], {
      mergeSize: 2,
      tokensPerSecond: qwen3 ? undefined : 2,
      videos: [{ group, timestamps, ...(qwen3 ? {} : { secondsPerGroup: 1 }) }],
    });
    const pads = '<|video_pad|>'.repeat(6);
    let text = template.render(messages, true);
    text = qwen3
      ? text.replace(
          '<|vision_start|><|video_pad|><|vision_end|>',
          ['<0.2 seconds>', '<1.2 seconds>', '<2.5 seconds>'].map((t) => `${t}<|vision_start|>${pads}<|vision_end|>`).join(''),
        )
      : text.replace('<|video_pad|>', pads.repeat(3));
    expect(Array.from(p.ids)).toEqual(tok.encodeSegments([{ text, trusted: true }]).ids);
    expect(p.owners).toEqual(
      qwen3
        ? [{ image: 0 }, { video: 0, group: 0 }, { video: 0, group: 1 }, { video: 0, group: 2 }]
        : [{ image: 0 }, { video: 0, group: 0 }],
    );
    const runs = qwen3 ? p.runs.slice(1).map((r) => r.grid) : p.runs.slice(1).map((r) => ({ ...r.grid, s: r.secondsPerGrid }));
    expect(runs).toEqual(
      qwen3
        ? [
            { t: 1, ...group },
            { t: 1, ...group },
            { t: 1, ...group },
          ]
        : [{ t: 3, ...group, s: 1 }],
    );
    expect(p.positions).toEqual(mropePositions(p.ids.length, p.runs, { mergeSize: 2, tokensPerSecond: qwen3 ? undefined : 2 }));
    if (!qwen3) {
      // t steps by seconds per group x tokens_per_second: 0, 2, 4 for the three groups.
      const start = p.runs[1].start;
      expect([0, 6, 12].map((k) => p.positions.rows[0][start + k] - p.positions.rows[0][start])).toEqual([0, 2, 4]);
    }
  });
});
