// What happens to a request before the scheduler sees it: every image is prepared by the encoder (content
// key + tile layout, in a worker), every video sampled and decoded there (intake-video.ts), the prompt is
// planned from the layouts (token counts before any encoding: docs/design.md invariant 2), the context window is
// checked, and each media item is looked up in the encoder cache tiers. Nothing is encoded here: items
// the caches do not hold are left for the scheduler to start under its encoder budget.
//
//   images ──prepare──────► keys + layouts ──┐
//   videos ──prepareVideo─► frames + times ──┴─plan──► token ids, placeholder runs ──lookup──► ready | pending

import type { AudioFeatures } from '../../protocol/encoder';
import {
  AudioNotSupportedError,
  ContextLengthError,
  EmbeddingsNotCachedError,
  InvalidMessageError,
  ToolsNotSupportedError,
  VideoNotSupportedError,
} from '../../errors';
import type { MediaEmbeddings, MediaEncoder } from '../../encoder/media-encoder';
import type { FamilyProcessor } from '../../families/family';
import { QwenProcessor } from '../../processor/qwen-processor';
import { VoxtralProcessor } from '../../processor/voxtral-processor';
import type { VoxtralPromptOptions } from '../../processor/voxtral-prompt';
import type { PreparedMedia } from '../../protocol/encoder';
import type { ProcessorConfig } from '../../processor/processor-config';
import {
  checkFinite,
  checkGivenShape,
  type GivenEmbeddings,
  givenLayout,
  imagePayloads,
  isGivenEmbeddings,
  type RequestMessage,
} from './given-embeddings';
import { audioSources, intakeAudio } from './intake-audio';
import { intakeQwen } from './intake-qwen';
import type { TemplateTool } from '../../processor/chat-template';
import { prepareVideos, videoMedia, videoSources, type RequestVideo, type VideoIntakeOptions } from './intake-video';
import type { IntakePlan } from './intake-plan';
import type { RequestMedia } from './request-media';

export type { IntakePlan };

export interface IntakeDeps {
  processor: FamilyProcessor;
  media: MediaEncoder;
  /** Tokens (prompt + max_tokens) one request may reach. */
  contextWindow: number;
  /** What sets contextWindow (named in ContextLengthError). */
  contextLimits?: { modelPositions: number; kvCacheTokens: number };
  /** How audio chunks get their features (the engine option media.audioFeatures; default 'whole-clip'). */
  audioFeatures?: AudioFeatures;
}

/** An image_embeds part as a prepared item: its key and the layout its grid implies (nothing to encode). */
function preparedGiven(g: GivenEmbeddings, config: ProcessorConfig, where: string): PreparedMedia {
  if (g.gridThw) {
    throw new InvalidMessageError(
      `${g.where} carries a patch grid (image_grid_thw), a Qwen-VL image's; ${where} is an Idefics3 checkpoint, whose image_embeds are tile rows with their tile grid as tessera.grid.`,
    );
  }
  const { imageSeqLen, image } = config;
  const layout = givenLayout(g, image.tileSize, imageSeqLen);
  return { key: g.key, layout, numTokens: layout.numImageTokens };
}

/** The given embeddings of an image_embeds part, checked against the model and kept in the memory cache. */
async function takeGiven(
  g: GivenEmbeddings,
  prepared: PreparedMedia,
  config: ProcessorConfig,
  deps: IntakeDeps,
  requestId: number,
): Promise<MediaEmbeddings> {
  const { imageSeqLen } = config;
  const hidden = deps.media.info.hiddenSize;
  const layout = prepared.layout!;
  if (g.data) {
    checkGivenShape(g, g.data, g.shape!, layout, imageSeqLen, hidden);
    return deps.media.adopt(prepared, checkFinite(g, g.data, g.shape!), requestId);
  }
  const cached = await deps.media.lookup(prepared, requestId);
  if (!cached) throw new EmbeddingsNotCachedError(g.where, g.uuid ?? g.key);
  checkGivenShape(g, cached.data, [layout.numImageTokens, cached.data.length / layout.numImageTokens], layout, imageSeqLen, hidden);
  return cached;
}

/** The messages with their image and video parts removed (a text-only fallback). */
export function withoutImages(messages: readonly RequestMessage[]): RequestMessage[] {
  return messages.map((m) => (typeof m.content === 'string' ? m : { ...m, content: m.content.filter((p) => p.type === 'text') }));
}

/** A reduced-resolution retry's setting per image (message order): Idefics3's longest edges, or Qwen-VL's pixel budgets. */
export interface ReducedResolution {
  longestEdges?: readonly number[];
  maxPixels?: readonly number[];
}

/**
 * Prepare (or re-prepare at a reduced resolution) the images and videos, plan the prompt, check the window,
 * and take cache hits for `requestId`. On any failure, prepared pixels are dropped and no cache reference is left.
 */
export async function intake(
  deps: IntakeDeps,
  messages: readonly RequestMessage[],
  requestId: number,
  maxTokens: number,
  reduced?: ReducedResolution,
  videoOptions: VideoIntakeOptions = { pruneRate: 0, thumbnailEdge: 0 },
  audioOptions: VoxtralPromptOptions = {},
  tools: readonly TemplateTool[] = [],
): Promise<IntakePlan> {
  if (deps.processor instanceof VoxtralProcessor) {
    return intakeAudio({ ...deps, processor: deps.processor }, messages, requestId, maxTokens, audioOptions);
  }
  if (deps.processor instanceof QwenProcessor) {
    if (audioSources(messages).length > 0) throw new AudioNotSupportedError(deps.processor.where);
    return intakeQwen({ ...deps, processor: deps.processor }, messages, requestId, maxTokens, videoOptions, tools, reduced?.maxPixels);
  }
  if (tools.length > 0) throw new ToolsNotSupportedError(deps.processor.where, 'tools');
  if (audioSources(messages).length > 0) throw new AudioNotSupportedError(deps.processor.where);
  const images = imagePayloads(messages);
  const sources = videoSources(messages);
  if (sources.length > 0 && !deps.processor.config.video) throw new VideoNotSupportedError(deps.processor.where);
  const config = deps.processor.config;
  const defaultEdge = config.image.longestEdge;
  const edges = images.map((_, i) => reduced?.longestEdges?.[i] ?? defaultEdge);
  const preparing = images.map((b, i) =>
    isGivenEmbeddings(b)
      ? Promise.resolve().then(() => preparedGiven(b, config, deps.processor.where))
      : deps.media.prepare(b, edges[i] === defaultEdge ? undefined : { longestEdge: edges[i] }),
  );
  const videoWork = prepareVideos(deps.media, sources, requestId, deps.processor.config.imageSeqLen, videoOptions);
  const settled = await Promise.allSettled([...preparing, videoWork]);
  const prepared = settled.slice(0, images.length).flatMap((r) => (r.status === 'fulfilled' ? [r.value as PreparedMedia] : []));
  const videos =
    settled[images.length]!.status === 'fulfilled' ? (settled[images.length] as PromiseFulfilledResult<RequestVideo[]>).value : [];
  const all: PreparedMedia[] = [...prepared, ...videos.flatMap((v) => v.clip.frames.map((f) => f.media))];
  try {
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    const plan = deps.processor.planPrompt(
      messages,
      prepared.map((m) => m.layout!),
      undefined,
      videos.map((v) => v.layout),
    );
    if (plan.tokenIds.length + maxTokens > deps.contextWindow)
      throw new ContextLengthError(plan.tokenIds.length, maxTokens, deps.contextWindow, deps.contextLimits);
    const imageMedia: RequestMedia[] = prepared.map((p, i) => ({ prepared: p, placeholder: plan.placeholders[i], longestEdge: edges[i] }));
    const media = [...imageMedia, ...(await videoMedia(deps.media, videos, plan, videoOptions.pruneRate))].sort(
      (a, b) => a.placeholder.offset - b.placeholder.offset,
    );
    const given = new Map(images.flatMap((b, i) => (isGivenEmbeddings(b) ? [[prepared[i], b] as const] : [])));
    const hits = await Promise.all(
      media.map((m) => {
        const g = given.get(m.prepared);
        if (g) return takeGiven(g, m.prepared, config, deps, requestId);
        return m.data ? undefined : deps.media.lookup(m.prepared, requestId);
      }),
    );
    hits.forEach((h, i) => {
      if (!h) return;
      media[i].data = h.data;
      media[i].source = h.source;
    });
    return { plan, media, videos, audios: [] };
  } catch (e) {
    for (const p of all) deps.media.forget(p);
    deps.media.release(requestId);
    throw e;
  }
}
