// Intake (intake.ts) for a Qwen-VL checkpoint: each image is prepared by the encoder (content key, smart
// resize and patch grid, in a worker), each video sampled, decoded and resized there into frame groups
// (src/encoder/video/prepare-qwen-video.ts), the prompt is planned from the grids (token counts and M-RoPE
// positions before any encoding), the context window is checked, and each image and frame group is looked
// up in the encoder cache tiers. An image_embeds part brings its rows and patch grid (image_grid_thw): it
// is planned from that grid and its rows are taken as they are (or found by uuid), with no encode.
//
//   images ──prepare──────► keys + patch grids ───┐
//   image_embeds ─────────► keys + given grids ───┤
//   videos ──prepareVideo─► frame groups + times ─┴─plan──► token ids, a pad run per image and group, positions
//                                                          ──lookup──► ready | pending

import { levelsAlongRows } from '../../encoder/deepstack-layout';
import type { MediaEmbeddings, MediaEncoder } from '../../encoder/media-encoder';
import { ContextLengthError, EmbeddingsNotCachedError, EmbeddingsShapeError, InternalError, InvalidMessageError } from '../../errors';
import type { TemplateTool } from '../../processor/chat-template';
import type { QwenProcessor } from '../../processor/qwen-processor';
import type { PreparedMedia } from '../../protocol/encoder';
import { checkFinite, type GivenEmbeddings, imagePayloads, isGivenEmbeddings, type RequestMessage } from './given-embeddings';
import type { IntakePlan } from './intake-plan';
import { type RequestVideo, type VideoIntakeOptions, videoSources } from './intake-video';
import type { RequestMedia } from './request-media';

export interface QwenIntakeDeps {
  processor: QwenProcessor;
  media: MediaEncoder;
  contextWindow: number;
  contextLimits?: { modelPositions: number; kvCacheTokens: number };
}

export async function intakeQwen(
  deps: QwenIntakeDeps,
  messages: readonly RequestMessage[],
  requestId: number,
  maxTokens: number,
  videoOptions: VideoIntakeOptions,
  tools: readonly TemplateTool[] = [],
  maxPixels?: readonly number[],
): Promise<IntakePlan> {
  const { processor, media } = deps;
  const images = imagePayloads(messages);
  const sources = videoSources(messages);
  if (sources.length > 0 && videoOptions.pruneRate > 0) {
    throw new InvalidMessageError(
      `the request option tessera.videoPruning (EVS) takes SmolVLM2 checkpoints for now; a ${processor.modelType} video is sent whole: leave it out.`,
    );
  }
  // Every image and video prepared side by side; if one fails, what the others prepared is let go below.
  const [imagesSettled, videosSettled] = await Promise.all([
    Promise.allSettled(
      images.map((b, i) =>
        isGivenEmbeddings(b) ? preparedGiven(b, processor) : media.prepare(b, maxPixels?.[i] ? { maxPixels: maxPixels[i] } : undefined),
      ),
    ),
    Promise.allSettled(sources.map((v) => media.prepareVideo(v, requestId, { thumbnailEdge: videoOptions.thumbnailEdge }))),
  ]);
  const settled = [...imagesSettled, ...videosSettled];
  const prepared = imagesSettled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const clips = videosSettled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const all: PreparedMedia[] = [...prepared, ...clips.flatMap((c) => c.frames.map((f) => f.media))];
  try {
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    const plan = processor.planToolPrompt(
      messages,
      prepared.map((p) => gridOf(p)),
      clips.map((c) => {
        const { h, w } = gridOf(c.frames[0]!.media);
        return { group: { h, w }, timestamps: c.frames.map((f) => f.timestamp) };
      }),
      tools,
    );
    if (plan.tokenIds.length + maxTokens > deps.contextWindow)
      throw new ContextLengthError(plan.tokenIds.length, maxTokens, deps.contextWindow, deps.contextLimits);
    const patch = processor.image.patchSize;
    const items: RequestMedia[] = prepared.map((p, i) => ({
      prepared: p,
      placeholder: plan.placeholders[i],
      // The resized image's longest side, in pixels.
      longestEdge: Math.max(gridOf(p).h, gridOf(p).w) * patch,
    }));
    const given = new Map(images.flatMap((b, i) => (isGivenEmbeddings(b) ? [[prepared[i], b] as const] : [])));
    const hits = await Promise.all(
      items.map((m) => {
        const g = given.get(m.prepared);
        return g ? takeGiven(g, m.prepared, processor, media, requestId) : media.lookup(m.prepared, requestId);
      }),
    );
    hits.forEach((h, i) => {
      if (!h) return;
      items[i].data = h.data;
      items[i].source = h.source;
    });
    // Each video's frame groups: one media item per group, found in the cache already when the clip was known.
    const videos: RequestVideo[] = clips.map((clip, videoIndex) => {
      const runs = plan.videos[videoIndex]!.frameRuns;
      if (runs.length !== clip.frames.length) {
        throw new InternalError(`video ${videoIndex}: ${clip.frames.length} frame groups but ${runs.length} runs in the prompt`);
      }
      clip.frames.forEach((f, frame) => {
        const run = runs[frame]!;
        const grid = gridOf(f.media);
        items.push({
          prepared: f.media,
          placeholder: { offset: run.offset, length: run.length, runs: [run] },
          longestEdge: Math.max(grid.h, grid.w) * patch,
          video: { videoIndex, frame },
          ...(f.cached ? { data: f.cached.data, source: f.cached.source } : {}),
        });
      });
      const tokensPerFrame = runs.map((r) => r!.length);
      const layout = { timestamps: clip.frames.map((f) => f.timestamp), duration: clip.meta.duration, tokensPerFrame };
      return { clip, layout, unprunedTokens: tokensPerFrame.reduce((a, b) => a + b, 0) };
    });
    items.sort((a, b) => a.placeholder.offset - b.placeholder.offset);
    return { plan, media: items, videos, audios: [] };
  } catch (e) {
    for (const p of all) media.forget(p);
    media.release(requestId);
    throw e;
  }
}

/** An image_embeds part as a prepared image: its key and the token count its patch grid implies (nothing to encode). */
async function preparedGiven(g: GivenEmbeddings, processor: QwenProcessor): Promise<PreparedMedia> {
  const grid = g.gridThw;
  if (!grid) {
    throw new InvalidMessageError(
      `${g.where} has no patch grid: a ${processor.modelType} image's embeddings go as vLLM's dictionary { image_embeds, image_grid_thw } (a part naming cached ones by uuid: image_embeds null and ${g.where}.tessera.grid_thw = [t, h, w]).`,
    );
  }
  const m = processor.image.mergeSize;
  if (grid.t !== 1 || grid.h % m !== 0 || grid.w % m !== 0) {
    throw new InvalidMessageError(
      `${g.where}'s image_grid_thw [${grid.t}, ${grid.h}, ${grid.w}] is not an image's patch grid for this checkpoint: t is 1 for an image, and h and w are multiples of its merge size ${m}.`,
    );
  }
  return { key: g.key, grid, numTokens: (grid.h * grid.w) / (m * m) };
}

/** The given rows, checked against the model and kept in the memory cache (or found there by uuid). */
async function takeGiven(
  g: GivenEmbeddings,
  prepared: PreparedMedia,
  processor: QwenProcessor,
  media: MediaEncoder,
  requestId: number,
): Promise<MediaEmbeddings> {
  const { hiddenSize: hidden, deepstackLevels: levels } = media.info;
  const n = prepared.numTokens;
  const width = (1 + levels) * hidden;
  const { t, h, w } = prepared.grid!;
  const want = `[${n}, ${width}] (${n} tokens for image_grid_thw [${t}, ${h}, ${w}] at merge size ${processor.image.mergeSize}, each of ${hidden} values${levels > 0 ? ` followed by its ${levels} DeepStack levels' ${hidden} each, as vLLM's Qwen3-VL tower gives them` : ''})`;
  const wrong = (shape: readonly number[]) => new EmbeddingsShapeError(g.where, shape, want, 'send its patch grid as image_grid_thw');
  if (g.data) {
    const shape = g.shape!;
    if (shape.length !== 2 || shape[0] !== n || shape[1] !== width) throw wrong(shape);
    return media.adopt(prepared, levelsAlongRows(checkFinite(g, g.data, shape), n, hidden, levels), requestId);
  }
  const cached = await media.lookup(prepared, requestId);
  if (!cached) throw new EmbeddingsNotCachedError(g.where, g.uuid ?? g.key);
  if (cached.data.length !== n * width) throw wrong([cached.data.length / width, width]);
  return cached;
}

function gridOf(p: PreparedMedia) {
  if (!p.grid) throw new InvalidMessageError(`the encoder prepared image ${p.key} without a patch grid; it is not a Qwen-VL encoder`);
  return p.grid;
}
