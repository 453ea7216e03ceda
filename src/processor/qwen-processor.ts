// qwen-processor.ts: the processor of a Qwen-VL checkpoint (HF `Qwen2_5_VLProcessor`, `Qwen3VLProcessor`):
// the Qwen2 tokenizer, the checkpoint's chat template, its image processor settings
// (preprocessor_config.json, qwen-image-processor.ts) and the stop tokens. The encoder resizes and cuts
// the images (src/encoder/encoder-core.ts) and tells each one's patch grid; planPrompt turns the grids
// into token ids, one placeholder run per image, and the prompt's M-RoPE positions (qwen-prompt.ts).

import { AudioNotSupportedError, ProcessorConfigError, VideoNotSupportedError } from '../errors';
import { ChatTemplate, loadChatTemplateSource } from './chat-template';
import { StreamingDetokenizer } from './detokenizer';
import { requireJson, type ModelFiles } from './files';
import { splitMessages, type ChatMessage } from './messages';
import type { ImagePlaceholder, PromptPlan } from './prompt';
import { buildQwenPrompt } from './qwen-prompt';
import { parseQwenImageProcessorConfig, type QwenImageProcessorConfig } from './qwen-image-processor';
import type { PatchGrid } from './smart-resize';
import { loadStopTokenIds } from './stop-tokens';
import { TextTokenizer } from './tokenizer';

/** What the processor needs of the model's config (config.json's vision_config and image_token_id). */
export interface QwenProcessorModel {
  modelType: string;
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
    readonly stopTokenIds: readonly number[],
    readonly where: string,
    /** config.json model_type (named in errors). */
    readonly modelType: string,
  ) {}

  static async load(files: ModelFiles, model: QwenProcessorModel): Promise<QwenProcessor> {
    const [tokenizer, pre] = await Promise.all([
      TextTokenizer.load(files),
      requireJson(files, 'preprocessor_config.json', 'for the image processor (pixel budget, normalisation)'),
    ]);
    const image = parseQwenImageProcessorConfig(pre);
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
    return new QwenProcessor(tokenizer, template, image, await loadStopTokenIds(files, tokenizer), files.where, model.modelType);
  }

  /** LM tokens of an image of this patch grid: one per merge block. */
  tokensFor(grid: PatchGrid): number {
    return (grid.t * grid.h * grid.w) / this.image.mergeSize ** 2;
  }

  /**
   * Token ids, one placeholder per image part (`grids[i]` for the i-th, message order) and the M-RoPE
   * positions. Video and audio parts are refused by name.
   */
  planPrompt(messages: ReadonlyArray<ChatMessage<unknown, unknown, unknown>>, grids: readonly PatchGrid[]): PromptPlan {
    const { templateMessages, videos, audios } = splitMessages(messages, false);
    if (audios.length > 0) throw new AudioNotSupportedError(this.where);
    if (videos.length > 0)
      throw new VideoNotSupportedError(this.where, `is a ${this.modelType} checkpoint, whose video prompts Tessera does not build yet`);
    const prompt = buildQwenPrompt(
      this.chatTemplate,
      this.tokenizer,
      templateMessages,
      grids.map((grid) => ({ grid })),
      { mergeSize: this.image.mergeSize },
    );
    const placeholders = prompt.runs.map((run, imageIndex): ImagePlaceholder => {
      const length = this.tokensFor(run.grid);
      return {
        modality: 'image',
        imageIndex,
        offset: run.start,
        length,
        runs: [{ offset: run.start, length }],
        // <|vision_start|> pads <|vision_end|>
        spanOffset: run.start - 1,
        spanLength: length + 2,
        rows: run.grid.h / this.image.mergeSize,
        cols: run.grid.w / this.image.mergeSize,
        numTiles: 1,
      };
    });
    return { tokenIds: prompt.ids, placeholders, videos: [], audios: [], mrope: prompt.positions };
  }

  /** Streaming text for generated ids (special tokens such as <|im_end|> are skipped). */
  createDetokenizer(): StreamingDetokenizer {
    return new StreamingDetokenizer(this.tokenizer, true);
  }

  decode(ids: readonly number[], skipSpecialTokens = true): string {
    return this.tokenizer.decode(ids, skipSpecialTokens);
  }
}
