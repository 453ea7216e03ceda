// The video side of intake (intake.ts): each video part is sampled and decoded by the encoder (or found in
// its clip index), sized (tokens per frame, with EVS pruning sized here, before any encoding), and turned
// into scheduler media items once the prompt is planned:
//
//   no pruning   one item per sampled frame: its key, its one placeholder run of image_seq_len tokens
//                (so the scheduler, the encoder budget, prefix caching and batching treat frames as images)
//   pruning q    one composite item over all the frames' runs (media-encoder.ts CompositeMedia): its
//                embeddings are EVS's selection from the frames' (evs.ts)

import type { MediaEncoder, VideoClip } from '../../encoder/media-encoder';
import { evsTokensPerFrame } from '../../encoder/video/evs';
import type { ChatMessage } from '../../processor/messages';
import type { PlaceholderRun, PromptPlan, VideoLayout } from '../../processor/prompt';
import { frameTimestamp } from '../../processor/video-prompt';
import type { VideoSource } from '../../protocol/encoder';
import type { RequestMedia } from './request-media';
import type { VideoInfo } from '../types';

export interface VideoIntakeOptions {
  /** EVS pruning rate q in [0, 1); 0: none. */
  pruneRate: number;
  /** Thumbnails of this longest edge (px) for the sampled frames; 0: none. */
  thumbnailEdge: number;
}

/** One video part of a request: what the encoder gave and how the prompt sizes it. */
export interface RequestVideo {
  clip: VideoClip;
  layout: VideoLayout;
  unprunedTokens: number;
}

/** The video parts' payloads, in message order. */
export function videoSources(messages: readonly ChatMessage<unknown, unknown>[]): VideoSource[] {
  const out: VideoSource[] = [];
  for (const m of messages) {
    if (typeof m.content === 'string') continue;
    for (const p of m.content) if (p.type === 'video') out.push(p.video as VideoSource);
  }
  return out;
}

/** Sample and decode (or find) every video, and size each one's prompt (counts before any encoding). */
export async function prepareVideos(
  media: MediaEncoder,
  sources: readonly VideoSource[],
  requestId: number,
  imageSeqLen: number,
  options: VideoIntakeOptions,
): Promise<RequestVideo[]> {
  const settled = await Promise.allSettled(sources.map((s) => media.prepareVideo(s, requestId, { thumbnailEdge: options.thumbnailEdge })));
  const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  const clips = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  if (failed) {
    for (const c of clips) for (const f of c.frames) media.forget(f.media);
    throw failed.reason;
  }
  return clips.map((clip) => {
    const n = clip.frames.length;
    const tokensPerFrame =
      options.pruneRate > 0 ? evsTokensPerFrame(imageSeqLen, n, options.pruneRate) : Array<number>(n).fill(imageSeqLen);
    return {
      clip,
      layout: { timestamps: clip.frames.map((f) => f.timestamp), duration: clip.meta.duration, tokensPerFrame },
      unprunedTokens: n * imageSeqLen,
    };
  });
}

const runsItem = (runs: PlaceholderRun[]) => ({ offset: runs[0]!.offset, length: runs.reduce((a, r) => a + r.length, 0), runs });

/** The scheduler media items of the planned videos (frames, or one pruned item per video). */
export async function videoMedia(
  media: MediaEncoder,
  videos: readonly RequestVideo[],
  plan: PromptPlan,
  pruneRate: number,
): Promise<RequestMedia[]> {
  const out: RequestMedia[] = [];
  for (const [videoIndex, v] of videos.entries()) {
    const ph = plan.videos[videoIndex]!;
    const tileSize = v.clip.frames[0]!.media.layout!.tileSize;
    if (pruneRate > 0) {
      const runs = ph.frameRuns.filter((r): r is PlaceholderRun => r !== undefined);
      const prepared = await media.compositeOf(
        v.clip.frames.map((f) => f.media),
        pruneRate,
        ph.length,
      );
      out.push({ prepared, placeholder: runsItem(runs), longestEdge: tileSize, video: { videoIndex } });
      continue;
    }
    v.clip.frames.forEach((f, frame) => {
      const item: RequestMedia = {
        prepared: f.media,
        placeholder: runsItem([ph.frameRuns[frame]!]),
        longestEdge: tileSize,
        video: { videoIndex, frame },
      };
      if (f.cached) {
        item.data = f.cached.data;
        item.source = f.cached.source;
      }
      out.push(item);
    });
  }
  return out;
}

/** What the response reports per video part. */
export function videoInfo(videos: readonly RequestVideo[]): VideoInfo[] {
  return videos.map((v) => ({
    ...(v.clip.clipKey ? { clipKey: v.clip.clipKey } : {}),
    source: v.clip.source,
    ...v.clip.meta,
    frames: v.clip.frames.map((f) => ({
      index: f.index,
      timestamp: f.timestamp,
      label: frameTimestamp(f.timestamp),
      key: f.media.key,
      ...(f.thumbnail ? { thumbnail: f.thumbnail } : {}),
    })),
    tokens: v.layout.tokensPerFrame.reduce((a, b) => a + b, 0),
    unprunedTokens: v.unprunedTokens,
  }));
}
