// qwen-prompt.ts: chat messages + each image's patch grid (and each video's frame groups) → the token ids
// of a Qwen-VL prompt and its M-RoPE positions. As HF `Qwen2_5_VLProcessor` / `Qwen3VLProcessor` do: the checkpoint's chat template
// writes <|vision_start|><|image_pad|><|vision_end|> for an image part, and the processor repeats
// <|image_pad|> to the image's token count (grid t·h·w / merge²) before tokenizing the whole text.
// Here the template's literals and the expansions are trusted text (special tokens become their ids)
// and user text is not (chat-template.ts, tokenizer.ts), so a user typing "<|image_pad|>" gets plain
// text tokens and every pad id in the prompt is an image's.

import { InvalidMessageError } from '../errors';
import type { ChatTemplate, TemplateMessage, TemplateTool } from './chat-template';
import { type MropePositions, mropePositions, type VisionRun } from './mrope-positions';
import { pythonFixed1 } from './qwen-video';
import type { PatchGrid } from './smart-resize';
import type { Segment, TextTokenizer } from './tokenizer';

const IMAGE_PAD = '<|image_pad|>';
const VIDEO_PAD = '<|video_pad|>';
const VISION_START = '<|vision_start|>';
const VISION_END = '<|vision_end|>';

export interface QwenPromptImage {
  grid: PatchGrid;
}

/**
 * A video part: its frame groups' grid (t = 1: one temporal patch each), how many, and how the family
 * writes them. Qwen2.5-VL: one run of pads for all groups, its M-RoPE t axis stepping by
 * `secondsPerGroup` · tokens_per_second. Qwen3-VL: each group its own block after its timestamp,
 * "<0.8 seconds><|vision_start|>pads<|vision_end|>", its t axis 0.
 */
export interface QwenPromptVideo {
  group: { h: number; w: number };
  /** Qwen3-VL: each group's seconds (written in the prompt); Qwen2.5-VL: only their count matters. */
  timestamps: readonly number[];
  /** Qwen2.5-VL: seconds per frame group (temporal patch / fps). Absent: Qwen3-VL's layout. */
  secondsPerGroup?: number;
}

export interface QwenPrompt {
  ids: Uint32Array;
  /** Each vision run in prompt order: an image's pads, a Qwen2.5-VL video's, or one Qwen3-VL frame group's. */
  runs: VisionRun[];
  /** Which part each run belongs to: the image's index, or the video's and the group's. */
  owners: Array<{ image: number } | { video: number; group: number }>;
  /** The prompt's M-RoPE positions and the delta of the tokens after it. */
  positions: MropePositions;
}

export function buildQwenPrompt(
  template: ChatTemplate,
  tokenizer: TextTokenizer,
  messages: readonly TemplateMessage[],
  images: readonly QwenPromptImage[],
  o: {
    mergeSize: number;
    tokensPerSecond?: number;
    addGenerationPrompt?: boolean;
    videos?: readonly QwenPromptVideo[];
    tools?: readonly TemplateTool[];
  },
): QwenPrompt {
  const padId = tokenizer.requireTokenId(IMAGE_PAD, 'to expand image parts');
  const videos = o.videos ?? [];
  const videoPadId = videos.length > 0 ? tokenizer.requireTokenId(VIDEO_PAD, 'to expand video parts') : -1;
  const m2 = o.mergeSize * o.mergeSize;
  const pieces = template.renderPieces(messages, IMAGE_PAD, o.addGenerationPrompt ?? true, VIDEO_PAD, o.tools);
  const segments: Segment[] = [];
  for (const [i, p] of pieces.entries()) {
    if (p.kind === 'template') segments.push({ text: p.text, trusted: true });
    else if (p.kind === 'text') segments.push({ text: p.text, trusted: false });
    else if (p.kind === 'image') {
      const image = images[p.index];
      if (!image) throw new InvalidMessageError(`the messages have more image parts than the ${images.length} images given`);
      const { t, h, w } = image.grid;
      segments.push({ text: IMAGE_PAD.repeat((t * h * w) / m2), trusted: true });
    } else {
      const video = videos[p.index];
      if (!video) throw new InvalidMessageError(`the messages have more video parts than the ${videos.length} videos given`);
      const pads = VIDEO_PAD.repeat((video.group.h * video.group.w) / m2);
      if (video.secondsPerGroup !== undefined) {
        segments.push({ text: pads.repeat(video.timestamps.length), trusted: true });
        continue;
      }
      // Qwen3VLProcessor replaces the template's "<|vision_start|><|video_pad|><|vision_end|>" whole (or
      // a bare <|video_pad|>) with a block per frame group, each after its timestamp.
      const before = segments[segments.length - 1];
      const after = pieces[i + 1];
      const wrapped =
        before?.trusted === true && before.text.endsWith(VISION_START) && after?.kind === 'template' && after.text.startsWith(VISION_END);
      if (wrapped) {
        before.text = before.text.slice(0, -VISION_START.length);
        pieces[i + 1] = { kind: 'template', text: after.text.slice(VISION_END.length) };
      }
      const blocks = video.timestamps.map((s) => `<${pythonFixed1(s)} seconds>${VISION_START}${pads}${VISION_END}`).join('');
      segments.push({ text: blocks, trusted: true });
    }
  }
  const ids = Uint32Array.from(tokenizer.encodeSegments(segments.filter((s) => s.text.length > 0)).ids);
  // The pad runs, in order: images' and videos' (a Qwen3-VL video's groups one run each).
  const runs: VisionRun[] = [];
  const owners: QwenPrompt['owners'] = [];
  let image = 0;
  let video = 0;
  let group = 0;
  for (let i = 0; i < ids.length; i++) {
    if (ids[i] === padId && (i === 0 || ids[i - 1] !== padId)) {
      const it = images[image];
      if (!it) throw new InvalidMessageError(`the prompt holds more image runs than the ${images.length} images given`);
      runs.push({ start: i, grid: it.grid });
      owners.push({ image: image++ });
    } else if (ids[i] === videoPadId && (i === 0 || ids[i - 1] !== videoPadId)) {
      const v = videos[video];
      if (!v) throw new InvalidMessageError(`the prompt holds more video runs than the ${videos.length} videos given`);
      if (v.secondsPerGroup !== undefined) {
        runs.push({ start: i, grid: { t: v.timestamps.length, h: v.group.h, w: v.group.w }, secondsPerGrid: v.secondsPerGroup });
        owners.push({ video: video++, group: 0 });
        continue;
      }
      runs.push({ start: i, grid: { t: 1, h: v.group.h, w: v.group.w } });
      owners.push({ video, group: group++ });
      if (group === v.timestamps.length) {
        video++;
        group = 0;
      }
    }
  }
  if (image !== images.length) {
    throw new InvalidMessageError(`${images.length} images were given for ${image} image parts in the messages`);
  }
  if (video !== videos.length) {
    throw new InvalidMessageError(`${videos.length} videos were given for ${video} video parts in the messages`);
  }
  return {
    ids,
    runs,
    owners,
    positions: mropePositions(ids.length, runs, { mergeSize: o.mergeSize, tokensPerSecond: o.tokensPerSecond }),
  };
}
