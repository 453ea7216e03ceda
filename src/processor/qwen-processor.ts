// qwen-processor.ts: the processor of a Qwen-VL checkpoint (HF `Qwen2_5_VLProcessor`, `Qwen3VLProcessor`):
// the Qwen2 tokenizer, the checkpoint's chat template, its image processor settings
// (preprocessor_config.json, qwen-image-processor.ts) and the stop tokens. The encoder resizes and cuts
// the images (src/encoder/encoder-core.ts) and tells each one's patch grid; planPrompt turns the grids
// into token ids, one placeholder run per image, and the prompt's M-RoPE positions (qwen-prompt.ts).

import { AudioNotSupportedError, InvalidRequestError, ProcessorConfigError } from '../errors';
import { ChatTemplate, loadChatTemplateSource, type TemplateTool } from './chat-template';
import { StreamingDetokenizer } from './detokenizer';
import { readJson, requireJson, type ModelFiles } from './files';
import { splitMessages, type ChatMessage } from './messages';
import type { ImagePlaceholder, PlaceholderRun, PromptPlan, VideoPlaceholder } from './prompt';
import { buildQwenPrompt } from './qwen-prompt';
import { parseQwenImageProcessorConfig, type QwenImageProcessorConfig } from './qwen-image-processor';
import { parseQwenVideoConfig, type QwenVideoConfig } from './qwen-video';
import type { PatchGrid } from './smart-resize';
import { loadStopTokenIds } from './stop-tokens';
import { TextTokenizer } from './tokenizer';
import { type ToolCallSyntax, toolCallSyntaxOf } from './tool-call-syntax';

/** What the processor needs of the model's config (config.json's vision_config and image_token_id). */
export interface QwenProcessorModel {
  modelType: string;
  /** Which tower (and so which video rules): the vision config's kind. */
  kind: QwenVideoConfig['family'];
  /** Qwen2.5-VL's vision_config.tokens_per_second (its M-RoPE time axis for video); absent for Qwen3-VL. */
  tokensPerSecond?: number;
  mergeSize: number;
  patchSize: number;
  temporalPatchSize: number;
  imageTokenId: number;
}

export class QwenProcessor {
  private constructor(
    readonly tokenizer: TextTokenizer,
    readonly chatTemplate: ChatTemplate,
    /** The image preprocessing (pixel budget, normalisation, patch and merge sizes). */
    readonly image: QwenImageProcessorConfig,
    /** How videos are sampled and sized (the encoder applies it; here for what a page tells its user). */
    readonly video: QwenVideoConfig,
    readonly stopTokenIds: readonly number[],
    readonly where: string,
    /** config.json model_type (named in errors). */
    readonly modelType: string,
    /** Qwen2.5-VL's tokens per second of video on the M-RoPE time axis; undefined for Qwen3-VL. */
    private readonly tokensPerSecond: number | undefined,
  ) {
    this.toolSyntax = toolCallSyntaxOf(chatTemplate);
  }

  /** How the chat template writes a tool call; undefined when it offers no tools (Qwen2.5-VL's). */
  readonly toolSyntax: ToolCallSyntax | undefined;

  static async load(files: ModelFiles, model: QwenProcessorModel): Promise<QwenProcessor> {
    const [tokenizer, pre, videoPre] = await Promise.all([
      TextTokenizer.load(files),
      requireJson(files, 'preprocessor_config.json', 'for the image processor (pixel budget, normalisation)'),
      readJson(files, 'video_preprocessor_config.json'),
    ]);
    const image = parseQwenImageProcessorConfig(pre);
    const video = parseQwenVideoConfig(model.kind, image, videoPre);
    // The processor's patches must be the tower's: a mismatch is a checkpoint whose files do not belong together.
    for (const [name, mine, tower] of [
      ['merge_size', image.mergeSize, model.mergeSize],
      ['patch_size', image.patchSize, model.patchSize],
      ['temporal_patch_size', image.temporalPatchSize, model.temporalPatchSize],
    ] as const) {
      if (mine !== tower) {
        throw new ProcessorConfigError(
          `preprocessor_config.json ${name} is ${mine} but config.json's vision_config has ${tower}; the checkpoint files do not belong together.`,
        );
      }
    }
    const pad = tokenizer.requireTokenId('<|image_pad|>', 'to expand image parts');
    if (pad !== model.imageTokenId) {
      throw new ProcessorConfigError(
        `config.json image_token_id is ${model.imageTokenId} but the tokenizer's <|image_pad|> is ${pad}; the checkpoint files do not belong together.`,
      );
    }
    tokenizer.requireTokenId('<|vision_start|>', 'to expand image parts');
    const template = new ChatTemplate(await loadChatTemplateSource(files, tokenizer.tokenizerConfig), tokenizer.templateTokens());
    return new QwenProcessor(
      tokenizer,
      template,
      image,
      video,
      await loadStopTokenIds(files, tokenizer),
      files.where,
      model.modelType,
      model.tokensPerSecond,
    );
  }

  /**
   * The template writes the tools' JSON as its own text, where an added token would become its id: a tool
   * whose name, description or schema holds one ('<|im_end|>', '<tool_call>') is refused by name.
   */
  private checkTools(tools: readonly TemplateTool[]): void {
    if (!this.toolSyntax)
      throw new InvalidRequestError('tools', tools.length, `the chat template of ${this.where} offers no tools; leave them out.`);
    tools.forEach((t, i) => {
      const token = this.tokenizer.addedTokenIn(JSON.stringify(t));
      if (token !== undefined) {
        throw new InvalidRequestError(
          `tools[${i}]`,
          t.function.name,
          `its name, description or parameters hold the token text ${JSON.stringify(token)}, which the template would pass to the model as that token; remove it.`,
        );
      }
    });
  }

  /** LM tokens of an image of this patch grid: one per merge block. */
  tokensFor(grid: PatchGrid): number {
    return (grid.t * grid.h * grid.w) / this.image.mergeSize ** 2;
  }

  /**
   * Token ids, one placeholder per image part (`grids[i]` for the i-th, message order) and per video part
   * (`videos[i]`: its frame groups' grid and timestamps), and the M-RoPE positions. Audio parts are refused
   * by name.
   */
  planPrompt(
    messages: ReadonlyArray<ChatMessage<unknown, unknown, unknown>>,
    grids: readonly PatchGrid[],
    videos: ReadonlyArray<{ group: { h: number; w: number }; timestamps: readonly number[] }> = [],
  ): PromptPlan {
    return this.planToolPrompt(messages, grids, videos, []);
  }

  /** planPrompt, with `tools` offered to the model as the template shows them (a template with toolSyntax only). */
  planToolPrompt(
    messages: ReadonlyArray<ChatMessage<unknown, unknown, unknown>>,
    grids: readonly PatchGrid[],
    videos: ReadonlyArray<{ group: { h: number; w: number }; timestamps: readonly number[] }>,
    tools: readonly TemplateTool[],
  ): PromptPlan {
    const { templateMessages, audios } = splitMessages(messages, false, this.toolSyntax !== undefined);
    if (tools.length > 0) this.checkTools(tools);
    if (audios.length > 0) throw new AudioNotSupportedError(this.where);
    const m = this.image.mergeSize;
    // Qwen2.5-VL's seconds per frame group: temporal patch / fps, at HF's and vLLM's default fps of 2.
    const secondsPerGroup = this.tokensPerSecond === undefined ? undefined : this.image.temporalPatchSize / 2;
    const prompt = buildQwenPrompt(
      this.chatTemplate,
      this.tokenizer,
      templateMessages,
      grids.map((grid) => ({ grid })),
      {
        mergeSize: m,
        tokensPerSecond: this.tokensPerSecond,
        videos: videos.map((v) => ({ ...v, ...(secondsPerGroup !== undefined ? { secondsPerGroup } : {}) })),
        tools,
      },
    );
    const placeholders: ImagePlaceholder[] = [];
    const videoRuns: PlaceholderRun[][] = videos.map(() => []);
    for (const [k, run] of prompt.runs.entries()) {
      const owner = prompt.owners[k]!;
      const perGroup = (run.grid.h * run.grid.w) / (m * m);
      if ('video' in owner) {
        // A Qwen2.5-VL video is one run of all its groups, t-major: group g's rows are its g-th stretch.
        for (let g = 0; g < run.grid.t; g++) videoRuns[owner.video]!.push({ offset: run.start + g * perGroup, length: perGroup });
        continue;
      }
      const length = this.tokensFor(run.grid);
      placeholders.push({
        modality: 'image',
        imageIndex: owner.image,
        offset: run.start,
        length,
        runs: [{ offset: run.start, length }],
        // <|vision_start|> pads <|vision_end|>
        spanOffset: run.start - 1,
        spanLength: length + 2,
        rows: run.grid.h / m,
        cols: run.grid.w / m,
        numTiles: 1,
      });
    }
    const videoPlaceholders = videoRuns.map(
      (frameRuns, videoIndex): VideoPlaceholder => ({
        modality: 'video',
        videoIndex,
        frameRuns,
        offset: frameRuns[0]?.offset ?? 0,
        length: frameRuns.reduce((a, r) => a + r.length, 0),
      }),
    );
    return { tokenIds: prompt.ids, placeholders, videos: videoPlaceholders, audios: [], mrope: prompt.positions };
  }

  /** Streaming text for generated ids (special tokens such as <|im_end|> are skipped). */
  createDetokenizer(): StreamingDetokenizer {
    return new StreamingDetokenizer(this.tokenizer, true);
  }

  decode(ids: readonly number[], skipSpecialTokens = true): string {
    return this.tokenizer.decode(ids, skipSpecialTokens);
  }
}
