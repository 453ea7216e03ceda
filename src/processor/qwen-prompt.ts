// qwen-prompt.ts: chat messages + each image's patch grid → the token ids of a Qwen-VL prompt and its
// M-RoPE positions. As HF `Qwen2_5_VLProcessor` / `Qwen3VLProcessor` do: the checkpoint's chat template
// writes <|vision_start|><|image_pad|><|vision_end|> for an image part, and the processor repeats
// <|image_pad|> to the image's token count (grid t·h·w / merge²) before tokenizing the whole text.
// Here the template's literals and the expansions are trusted text (special tokens become their ids)
// and user text is not (chat-template.ts, tokenizer.ts), so a user typing "<|image_pad|>" gets plain
// text tokens and every pad id in the prompt is an image's.

import { InvalidMessageError } from '../errors';
import type { ChatTemplate, TemplateMessage } from './chat-template';
import { type MropePositions, mropePositions, type VisionRun } from './mrope-positions';
import type { PatchGrid } from './smart-resize';
import type { Segment, TextTokenizer } from './tokenizer';

const IMAGE_PAD = '<|image_pad|>';

export interface QwenPromptImage {
  grid: PatchGrid;
}

export interface QwenPrompt {
  ids: Uint32Array;
  /** Each image's run of pad tokens: where it starts and its grid (message order). */
  runs: VisionRun[];
  /** The prompt's M-RoPE positions and the delta of the tokens after it. */
  positions: MropePositions;
}

export function buildQwenPrompt(
  template: ChatTemplate,
  tokenizer: TextTokenizer,
  messages: readonly TemplateMessage[],
  images: readonly QwenPromptImage[],
  o: { mergeSize: number; addGenerationPrompt?: boolean },
): QwenPrompt {
  const padId = tokenizer.requireTokenId(IMAGE_PAD, 'to expand image parts');
  const pieces = template.renderPieces(messages, IMAGE_PAD, o.addGenerationPrompt ?? true);
  const segments: Segment[] = pieces.map((p) => {
    if (p.kind === 'template') return { text: p.text, trusted: true };
    if (p.kind === 'text') return { text: p.text, trusted: false };
    if (p.kind === 'image') {
      const image = images[p.index];
      if (!image) throw new InvalidMessageError(`the messages have more image parts than the ${images.length} images given`);
      const { t, h, w } = image.grid;
      return { text: IMAGE_PAD.repeat((t * h * w) / (o.mergeSize * o.mergeSize)), trusted: true };
    }
    throw new InvalidMessageError('a video part reached the Qwen image prompt; Qwen-VL video is not supported yet');
  });
  const ids = Uint32Array.from(tokenizer.encodeSegments(segments).ids);
  // The pad runs, in order: the k-th run is image k's.
  const runs: VisionRun[] = [];
  for (let i = 0; i < ids.length; i++) {
    if (ids[i] !== padId || (i > 0 && ids[i - 1] === padId)) continue;
    const image = images[runs.length];
    if (!image) throw new InvalidMessageError(`the prompt holds more image runs than the ${images.length} images given`);
    runs.push({ start: i, grid: image.grid });
  }
  if (runs.length !== images.length) {
    throw new InvalidMessageError(`${images.length} images were given for ${runs.length} image parts in the messages`);
  }
  return { ids, runs, positions: mropePositions(ids.length, runs, { mergeSize: o.mergeSize }) };
}
