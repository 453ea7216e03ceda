// processor.ts: the SmolVLM / Idefics3 processor (HF `Idefics3Processor`; `smolvlm` checkpoints share the
// file layout): tokenizer + chat template + image processor + stop tokens, loaded from the checkpoint's
// own files. Two ways in:
//   - planPrompt(messages, layouts, options, videos): token ids and placeholders from image SIZES and video
//     frame counts/timestamps only (counts before work); video conversations use HF's SmolVLM video template;
//   - prepare(messages): decode and process the images too, then plan (images only: videos go through the
//     engine's encoder, which demuxes and samples them).

import { AudioNotSupportedError, ImageDecodeError, InvalidMessageError, VideoNotSupportedError } from '../errors';
import { ChatTemplate, loadChatTemplateSource } from './chat-template';
import { StreamingDetokenizer } from './detokenizer';
import type { ModelFiles } from './files';
import type { DecodedImage, ImageDecoder, RawImage } from './image-decode';
import { imageLayout, type ImageLayout } from './image-layout';
import { processImage, shrinkTarget, type ProcessedImage } from './image-processor';
import { splitMessages, type ChatMessage, type ImageInput } from './messages';
import { loadProcessorConfig, type ProcessorConfig } from './processor-config';
import { buildPromptPlan, type PlanOptions, type PromptPlan, type VideoLayout } from './prompt';
import { loadStopTokenIds } from './stop-tokens';
import { TextTokenizer } from './tokenizer';
import { SMOLVLM_VIDEO_CHAT_TEMPLATE } from './video-prompt';
import type { ToolCallSyntax } from './tool-call-syntax';

export interface ProcessorLoadOptions {
  /** Bytes → pixels: decodeImageBrowser (browser/worker) or decodeImageNode (Node, from 'processor/node'). */
  decodeImage: ImageDecoder;
}

export interface PreparedPrompt {
  plan: PromptPlan;
  /** One per image part, in message order (plan.placeholders[i] belongs to images[i]). */
  images: ProcessedImage[];
}

export class Idefics3Processor {
  /** How the template writes a tool call: never (Idefics3 templates offer no tools). */
  readonly toolSyntax: ToolCallSyntax | undefined = undefined;

  private constructor(
    readonly config: ProcessorConfig,
    readonly tokenizer: TextTokenizer,
    readonly chatTemplate: ChatTemplate,
    /** Generation ends at any of these (stop-tokens.ts). */
    readonly stopTokenIds: readonly number[],
    private readonly decodeImage: ImageDecoder,
    /** HF's SmolVLM video template, for conversations with a video part (only when the checkpoint has video settings). */
    readonly videoChatTemplate: ChatTemplate | undefined,
    /** Where the checkpoint was read from (named in errors). */
    readonly where: string,
  ) {}

  static async load(files: ModelFiles, options: ProcessorLoadOptions): Promise<Idefics3Processor> {
    const [config, tokenizer] = await Promise.all([loadProcessorConfig(files), TextTokenizer.load(files)]);
    const source = await loadChatTemplateSource(files, tokenizer.tokenizerConfig);
    const template = new ChatTemplate(source, tokenizer.templateTokens());
    const stop = await loadStopTokenIds(files, tokenizer);
    for (const t of [config.imageToken, config.fakeImageToken, config.globalImageToken]) {
      tokenizer.requireTokenId(t, 'to expand images in the prompt');
    }
    const videoTemplate = config.video ? new ChatTemplate(SMOLVLM_VIDEO_CHAT_TEMPLATE, tokenizer.templateTokens()) : undefined;
    return new Idefics3Processor(config, tokenizer, template, stop, options.decodeImage, videoTemplate, files.where);
  }

  /** Tiles and tokens of an image of this size (no pixels needed). */
  imageLayout(width: number, height: number): ImageLayout {
    return imageLayout(width, height, this.config.image, this.config.imageSeqLen);
  }

  /**
   * Token ids + placeholders from image sizes and video layouts alone; `layouts[i]` for the i-th image part,
   * `videos[i]` for the i-th video part (payloads unused).
   */
  planPrompt(
    messages: ReadonlyArray<ChatMessage<unknown, unknown>>,
    layouts: readonly ImageLayout[],
    options?: PlanOptions,
    videos: readonly VideoLayout[] = [],
  ): PromptPlan {
    const { templateMessages, videos: videoParts, audios } = splitMessages(messages, false);
    if (audios.length > 0) throw new AudioNotSupportedError(this.where);
    let template = this.chatTemplate;
    if (videoParts.length > 0) {
      if (!this.videoChatTemplate) throw new VideoNotSupportedError(this.where);
      template = this.videoChatTemplate;
    }
    return buildPromptPlan(this.tokenizer, template, this.config, templateMessages, layouts, options, videos);
  }

  /** Decodes (bytes) and processes one image into tiles and pixel values. */
  async processImage(input: ImageInput): Promise<ProcessedImage> {
    const decoded = await this.decodeInput(input);
    return processImage(decoded, this.config.image, this.config.imageSeqLen);
  }

  /** Everything a request needs: processed images and the prompt plan that matches them. */
  async prepare(messages: ReadonlyArray<ChatMessage>, options?: PlanOptions): Promise<PreparedPrompt> {
    const { images: inputs, videos } = splitMessages(messages);
    if (videos.length > 0) {
      throw new InvalidMessageError(
        'Idefics3Processor.prepare() handles images only; ask the engine about videos (it samples and decodes them in its encoder).',
      );
    }
    const images: ProcessedImage[] = [];
    // One at a time: peak memory is one image's working set, not all of them.
    for (const input of inputs) images.push(await this.processImage(input));
    const plan = this.planPrompt(
      messages,
      images.map((im) => im.layout),
      options,
    );
    return { plan, images };
  }

  /** Streaming text for generated ids (special tokens such as <end_of_utterance> are skipped). */
  createDetokenizer(): StreamingDetokenizer {
    return new StreamingDetokenizer(this.tokenizer, true);
  }

  /** Batch decode, for comparison with the stream. */
  decode(ids: readonly number[], skipSpecialTokens = true): string {
    return this.tokenizer.decode(ids, skipSpecialTokens);
  }

  private async decodeInput(input: ImageInput): Promise<DecodedImage> {
    if (input instanceof Uint8Array || input instanceof ArrayBuffer) {
      const bytes = input instanceof Uint8Array ? input : new Uint8Array(input);
      return await this.decodeImage(bytes, { shrinkTo: (s) => shrinkTarget(s, this.config.image) });
    }
    const raw = input as RawImage;
    if (!raw || !Number.isInteger(raw.width) || !Number.isInteger(raw.height) || raw.width < 1 || raw.height < 1 || !raw.data) {
      throw new ImageDecodeError(
        'an image part must hold encoded bytes (Uint8Array/ArrayBuffer) or {width, height, channels, data} pixels.',
      );
    }
    return { ...raw, sourceWidth: raw.width, sourceHeight: raw.height };
  }
}
