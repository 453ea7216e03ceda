// Intake (intake.ts) for a Qwen-VL checkpoint: each image is prepared by the encoder (content key, smart
// resize and patch grid, in a worker), each video sampled, decoded and resized there into frame groups
// (src/encoder/video/prepare-qwen-video.ts), the prompt is planned from the grids (token counts and M-RoPE
// positions before any encoding), the context window is checked, and each image and frame group is looked
// up in the encoder cache tiers.
//
//   images ──prepare──────► keys + patch grids ───┐
//   videos ──prepareVideo─► frame groups + times ─┴─plan──► token ids, a pad run per image and group, positions
//                                                          ──lookup──► ready | pending

import { ContextLengthError, InternalError, InvalidMessageError } from '../../errors';
import type { MediaEncoder } from '../../encoder/media-encoder';
import type { TemplateTool } from '../../processor/chat-template';
import type { QwenProcessor } from '../../processor/qwen-processor';
import type { PreparedMedia } from '../../protocol/encoder';
import { imagePayloads, isGivenEmbeddings, type RequestMessage } from './given-embeddings';
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
): Promise<IntakePlan> {
  const { processor, media } = deps;
  const images = imagePayloads(messages);
  const given = images.findIndex(isGivenEmbeddings);
  if (given >= 0) {
    throw new InvalidMessageError(
      `image part ${given} carries image_embeds, which a ${processor.modelType} checkpoint does not take yet (its rows need the image's patch grid); send the image itself.`,
    );
  }
  const sources = videoSources(messages);
  if (sources.length > 0 && videoOptions.pruneRate > 0) {
    throw new InvalidMessageError(
      `the request option tessera.videoPruning (EVS) takes SmolVLM2 checkpoints for now; a ${processor.modelType} video is sent whole: leave it out.`,
    );
  }
  // Every image and video prepared side by side; if one fails, what the others prepared is let go below.
  const [imagesSettled, videosSettled] = await Promise.all([
    Promise.allSettled(images.map((b) => media.prepare(b as Uint8Array))),
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
    const hits = await Promise.all(items.map((m) => media.lookup(m.prepared, requestId)));
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

function gridOf(p: PreparedMedia) {
  if (!p.grid) throw new InvalidMessageError(`the encoder prepared image ${p.key} without a patch grid; it is not a Qwen-VL encoder`);
  return p.grid;
}
