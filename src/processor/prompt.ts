// prompt.ts: chat messages + image layouts → PromptPlan (token ids and where each image's placeholders are).
// Expansion matches HF `Idefics3Processor` (`get_image_prompt_string`): for a split image
//
//   <fake_token_around_image><row_1_col_1><image>*S ... <fake_token_around_image><row_1_col_C><image>*S \n
//   ...                                                                                     (R rows)
//   \n<fake_token_around_image><global-img><image>*S<fake_token_around_image>
//
// and for a single image `<fake_token_around_image><global-img><image>*S<fake_token_around_image>`
// (S = image_seq_len). The last row's "\n" and the global image's "\n" tokenize together as "\n\n".
//
// Placeholders: ONE entry per image part, in message order. Its `<image>` tokens are not contiguous (row/col
// markers sit between tiles), so the entry lists one run per tile, in the order the encoder emits tiles
// (grid row-major, then the global image): run i receives tile i's S embeddings. Only image parts create
// placeholders; user text is tokenized without special-token parsing (tokenizer.ts), so typing "<image>"
// yields ordinary text tokens.
//
// Video parts (SmolVLM2, video-prompt.ts) expand to an intro line, then per frame "\nFrame from MM:SS:" and
// one untiled image block. Their text shares BPE runs with the text around it (HF tokenizes the whole
// string), so their `<image>` runs are found by scanning: every run of `<image>` ids that is not an image
// part's belongs to the video parts, in order, one per frame with a non-zero token count.

import { InternalError, InvalidMessageError } from '../errors';
import type { ChatTemplate, TemplateMessage } from './chat-template';
import type { ImageLayout } from './image-layout';
import type { MropePositions } from './mrope-positions';
import type { ProcessorConfig } from './processor-config';
import type { Segment, TextTokenizer } from './tokenizer';
import { VIDEO_MARKER, videoPromptString } from './video-prompt';

export interface PlaceholderRun {
  /** Index in tokenIds of the run's first `<image>` token. */
  offset: number;
  length: number;
}

export interface ImagePlaceholder {
  modality: 'image';
  /** Index of the image part among all image parts of the messages (0-based, message order). */
  imageIndex: number;
  /** First `<image>` token of this image. */
  offset: number;
  /** `<image>` tokens of this image = numTiles * imageSeqLen = embeddings the encoder must return. */
  length: number;
  /** Contiguous `<image>` runs, one per tile, in encoder output order; lengths sum to `length`. */
  runs: PlaceholderRun[];
  /** The whole expansion (markers, newlines and `<image>` tokens): never split it across prefill chunks. */
  spanOffset: number;
  spanLength: number;
  rows: number;
  cols: number;
  numTiles: number;
}

/** What a video part's expansion needs, known before any frame is decoded (sampling.ts, video-prompt.ts). */
export interface VideoLayout {
  /** Sampled frames' timestamps (seconds). */
  timestamps: readonly number[];
  /** Clip duration (seconds). */
  duration: number;
  /** `<image>` tokens per frame: image_seq_len each, or EVS's pre-sized counts (0 allowed after the first). */
  tokensPerFrame: readonly number[];
}

export interface VideoPlaceholder {
  modality: 'video';
  /** Index of the video part among all video parts (0-based, message order). */
  videoIndex: number;
  /** Frame f's `<image>` run, in frame order; undefined for a frame pruning sized to 0 tokens. */
  frameRuns: Array<PlaceholderRun | undefined>;
  /** First `<image>` token of the video, and all of its `<image>` tokens. */
  offset: number;
  length: number;
}

/** An audio part's `[AUDIO]` tokens: one contiguous run, one sub-run per 30-second chunk (voxtral-prompt.ts). */
export interface AudioPlaceholder {
  modality: 'audio';
  /** Index of the audio part among all audio parts (0-based, message order). */
  audioIndex: number;
  /** Chunk c's run, in chunk order: tokensPerChunk tokens each. */
  chunkRuns: PlaceholderRun[];
  offset: number;
  length: number;
}

export interface PromptPlan {
  tokenIds: Uint32Array;
  /** One per image part, in message order. */
  placeholders: ImagePlaceholder[];
  /** One per video part, in message order (empty without videos). */
  videos: VideoPlaceholder[];
  /** One per audio part, in message order (empty without audio). */
  audios: AudioPlaceholder[];
  /**
   * A decoder with M-RoPE (Qwen-VL): the prompt's three position rows and the delta of the tokens after
   * it (mrope-positions.ts). Absent: each token's position is its index.
   */
  mrope?: MropePositions;
}

/** HF `get_image_prompt_string`: the text an image's `<image>` marker expands to. */
export function imagePromptString(rows: number, cols: number, imageSeqLen: number, config: ProcessorConfig): string {
  const { fakeImageToken: fake, imageToken: img, globalImageToken: global } = config;
  const tile = img.repeat(imageSeqLen);
  const globalPart = `${fake}${global}${tile}${fake}`;
  if (rows === 0 && cols === 0) return globalPart;
  let s = '';
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++) s += `${fake}<row_${r + 1}_col_${c + 1}>${tile}`;
    s += '\n';
  }
  return `${s}\n${globalPart}`;
}

export interface PlanOptions {
  /** Append the assistant prefix (HF add_generation_prompt). Default true. */
  addGenerationPrompt?: boolean;
}

/**
 * Renders the chat template, expands each image marker for its layout and tokenizes. `layouts[i]` is the
 * layout of the i-th image part (message order); only sizes are needed, so this runs before any encoding.
 */
export function buildPromptPlan(
  tokenizer: TextTokenizer,
  template: ChatTemplate,
  config: ProcessorConfig,
  messages: readonly TemplateMessage[],
  layouts: readonly ImageLayout[],
  options: PlanOptions = {},
  videos: readonly VideoLayout[] = [],
): PromptPlan {
  const hasVideo = messages.some((m) => m.content.some((p) => p.type === 'video'));
  const pieces = template.renderPieces(
    messages,
    config.imageToken,
    options.addGenerationPrompt ?? true,
    hasVideo ? VIDEO_MARKER : undefined,
  );
  const numImageParts = pieces.filter((p) => p.kind === 'image').length;
  if (numImageParts !== layouts.length) {
    throw new InvalidMessageError(
      `the messages have ${numImageParts} image parts but ${layouts.length} image layouts were given; pass one layout per image part.`,
    );
  }
  const numVideoParts = pieces.filter((p) => p.kind === 'video').length;
  if (numVideoParts !== videos.length) {
    throw new InvalidMessageError(
      `the messages have ${numVideoParts} video parts but ${videos.length} video layouts were given; pass one layout per video part.`,
    );
  }
  const introFrameCount = Math.max(0, ...videos.map((v) => v.timestamps.length));
  const segments: Segment[] = [];
  const imageSegment: number[] = [];
  for (const p of pieces) {
    if (p.kind === 'image') {
      const l = layouts[p.index]!;
      imageSegment[p.index] = segments.length;
      segments.push({ text: imagePromptString(l.rows, l.cols, config.imageSeqLen, config), trusted: true });
    } else if (p.kind === 'video') {
      segments.push({ text: videoPromptString({ ...videos[p.index]!, introFrameCount }, config), trusted: true });
    } else {
      segments.push({ text: p.text, trusted: p.kind === 'template' });
    }
  }
  const { ids, ranges } = tokenizer.encodeSegments(segments);
  const imageTokenId = tokenizer.requireTokenId(config.imageToken, 'as the image placeholder token');

  const placeholders: ImagePlaceholder[] = layouts.map((layout, imageIndex) => {
    const range = ranges[imageSegment[imageIndex]!];
    if (!range) throw new InternalError(`image ${imageIndex}'s expansion did not start and end on special tokens`);
    const [start, end] = range;
    const runs: PlaceholderRun[] = [];
    for (let i = start; i < end; i++) {
      if (ids[i] !== imageTokenId) continue;
      const last = runs[runs.length - 1];
      if (last && last.offset + last.length === i) last.length++;
      else runs.push({ offset: i, length: 1 });
    }
    const length = runs.reduce((n, r) => n + r.length, 0);
    if (runs.length !== layout.numTiles || length !== layout.numTiles * config.imageSeqLen) {
      throw new InternalError(
        `image ${imageIndex} expanded to ${runs.length} runs / ${length} image tokens but its layout needs ` +
          `${layout.numTiles} tiles x ${config.imageSeqLen} tokens`,
      );
    }
    return {
      modality: 'image',
      imageIndex,
      offset: runs[0]!.offset,
      length,
      runs,
      spanOffset: start,
      spanLength: end - start,
      rows: layout.rows,
      cols: layout.cols,
      numTiles: layout.numTiles,
    };
  });

  const videoPlaceholders = videoRuns(ids, imageTokenId, placeholders, videos);

  // Invariant 1: every <image> token belongs to an image or video part's expansion.
  const numPlaceholderTokens = [...placeholders, ...videoPlaceholders].reduce((n, p) => n + p.length, 0);
  const numImageTokens = ids.reduce((n, id) => n + (id === imageTokenId ? 1 : 0), 0);
  if (numImageTokens !== numPlaceholderTokens) {
    throw new InternalError(`prompt has ${numImageTokens} image tokens but image and video parts account for ${numPlaceholderTokens}`);
  }
  return { tokenIds: Uint32Array.from(ids), placeholders, videos: videoPlaceholders, audios: [] };
}

/** The video parts' `<image>` runs: every run not an image part's, in order, one per frame with tokens. */
function videoRuns(
  ids: readonly number[],
  imageTokenId: number,
  images: readonly ImagePlaceholder[],
  videos: readonly VideoLayout[],
): VideoPlaceholder[] {
  if (videos.length === 0) return [];
  const imageRuns = new Set(images.flatMap((p) => p.runs.map((r) => r.offset)));
  const runs: PlaceholderRun[] = [];
  for (let i = 0; i < ids.length; i++) {
    if (ids[i] !== imageTokenId) continue;
    const last = runs[runs.length - 1];
    if (last && last.offset + last.length === i) last.length++;
    else runs.push({ offset: i, length: 1 });
  }
  const free = runs.filter((r) => !imageRuns.has(r.offset));
  let k = 0;
  const out = videos.map((v, videoIndex): VideoPlaceholder => {
    const frameRuns = v.tokensPerFrame.map((n, f) => {
      if (n === 0) return undefined;
      const run = free[k++];
      if (!run || run.length !== n) {
        throw new InternalError(`video ${videoIndex} frame ${f} expanded to ${run?.length ?? 0} image tokens but its layout needs ${n}`);
      }
      return run;
    });
    const present = frameRuns.filter((r): r is PlaceholderRun => r !== undefined);
    if (present.length === 0) throw new InternalError(`video ${videoIndex} has no image tokens`);
    return { modality: 'video', videoIndex, frameRuns, offset: present[0].offset, length: present.reduce((a, r) => a + r.length, 0) };
  });
  if (k !== free.length) throw new InternalError(`the prompt has ${free.length} video image runs but the video layouts account for ${k}`);
  return out;
}
