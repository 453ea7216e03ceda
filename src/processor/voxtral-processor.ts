// voxtral-processor.ts: the processor of a Voxtral checkpoint (HF `VoxtralProcessor`, which asks
// mistral-common for token ids): the Tekken tokenizer from tokenizer.json, the prompt rules of
// voxtral-prompt.ts, the feature extractor's chunk length, and the stop tokens. Audio itself is decoded and
// featurized in the encoder (src/encoder/audio/), which tells the chunk counts this plans from.

import { ImageNotSupportedError, ProcessorConfigError } from '../errors';
import { logMelConfigFrom, type LogMelConfig } from './audio/log-mel-config';
import { StreamingDetokenizer } from './detokenizer';
import { requireJson, type ModelFiles } from './files';
import { splitMessages, type ChatMessage } from './messages';
import type { PromptPlan } from './prompt';
import { loadStopTokenIds } from './stop-tokens';
import { TextTokenizer } from './tokenizer';
import {
  buildVoxtralPlan,
  VOXTRAL_CONTROL_TOKENS,
  type VoxtralChunk,
  type VoxtralControlIds,
  type VoxtralPromptOptions,
} from './voxtral-prompt';
import type { ToolCallSyntax } from './tool-call-syntax';

export class VoxtralProcessor {
  /** How the template writes a tool call: never (Voxtral's prompt is built without a Jinja template). */
  readonly toolSyntax: ToolCallSyntax | undefined = undefined;

  private constructor(
    readonly tokenizer: TextTokenizer,
    readonly controlIds: VoxtralControlIds,
    /** The feature extractor's settings (its chunk: nSamples at samplingRate). */
    readonly features: LogMelConfig,
    /** [AUDIO] tokens per 30-second chunk (config.json: encoder frames / projector stack). */
    readonly tokensPerChunk: number,
    readonly stopTokenIds: readonly number[],
    readonly where: string,
  ) {}

  static async load(files: ModelFiles, tokensPerChunk: number, audioTokenId: number): Promise<VoxtralProcessor> {
    const [tokenizer, pre] = await Promise.all([
      TextTokenizer.load(files),
      requireJson(files, 'preprocessor_config.json', 'for the audio feature extractor (its log-mel settings)'),
    ]);
    const features = logMelConfigFrom(pre, 'preprocessor_config.json');
    const ids = Object.fromEntries(
      Object.entries(VOXTRAL_CONTROL_TOKENS).map(([k, token]) => [k, tokenizer.requireTokenId(token, 'to build Voxtral prompts')]),
    ) as unknown as VoxtralControlIds;
    if (ids.audio !== audioTokenId) {
      throw new ProcessorConfigError(
        `config.json audio_token_id is ${audioTokenId} but the tokenizer's [AUDIO] is ${ids.audio}; the checkpoint files do not belong together.`,
      );
    }
    return new VoxtralProcessor(tokenizer, ids, features, tokensPerChunk, await loadStopTokenIds(files, tokenizer), files.where);
  }

  /** Seconds per chunk (n_samples / sampling_rate: 30 for Whisper's extractor). */
  get chunkSeconds(): number {
    return this.features.nSamples / this.features.samplingRate;
  }

  /** 30-second chunks of a clip of `samples` samples at the extractor's rate (the last one zero-padded). */
  chunksFor(samples: number): number {
    return Math.max(1, Math.ceil(samples / this.features.nSamples));
  }

  /**
   * Token ids + placeholders from the chunk count of each audio part (`audioChunks[i]` for the i-th audio
   * part, message order). Image and video parts are refused: the checkpoint has no vision tower.
   */
  planPrompt(
    messages: ReadonlyArray<ChatMessage<unknown, unknown, unknown>>,
    audioChunks: readonly number[],
    options: VoxtralPromptOptions = {},
  ): PromptPlan {
    const { templateMessages } = splitMessages(messages, false);
    let a = 0;
    const voxtral = templateMessages.map((m) => ({
      role: m.role,
      content: m.content.map((p): VoxtralChunk => {
        if (p.type === 'image' || p.type === 'video') throw new ImageNotSupportedError(this.where, p.type);
        if (p.type === 'audio') {
          const chunks = audioChunks[a++];
          if (chunks === undefined) throw new ProcessorConfigError(`audio part ${a - 1} has no chunk count (${audioChunks.length} given)`);
          return { type: 'audio', chunks };
        }
        return p;
      }),
    }));
    return buildVoxtralPlan(this.tokenizer, this.controlIds, voxtral, this.tokensPerChunk, options);
  }

  /** Streaming text for generated ids (control tokens such as </s> are skipped). */
  createDetokenizer(): StreamingDetokenizer {
    return new StreamingDetokenizer(this.tokenizer, true);
  }

  decode(ids: readonly number[], skipSpecialTokens = true): string {
    return this.tokenizer.decode(ids, skipSpecialTokens);
  }
}
