// Media work outside a request, under a request id of the engine's: an image part's embeddings
// (engine.imageEmbeddings) and a video part's sampled frames (engine.videoFrames), exactly as a request
// would prepare them, so a request right after finds them in the encoder cache.

import { imageEmbeddingsOf } from '../encoder/image-embeddings';
import type { MediaEncoder } from '../encoder/media-encoder';
import { VideoNotSupportedError } from '../errors';
import { videoInfo } from './intake/intake-video';
import type { MediaPolicy } from './intake/media-options';
import { imagePartBytes } from './intake/message-images';
import { fetchVideoUrl, videoSourceOf } from './intake/message-videos';
import { videoOptionsOf } from './intake/video-request';
import type { ChatVideoInput, ImageEmbeddingsResult, VideoInfo } from './types';

export interface MediaPreviewDeps {
  /** The checkpoint, as errors name it. */
  where: string;
  /** Whether it takes video parts (a SmolVLM2 checkpoint's video template; every Qwen-VL checkpoint). */
  takesVideo: boolean;
  media: MediaEncoder;
  policy: MediaPolicy;
  /** A request id of the engine's own, released when done. */
  requestId: number;
}

/** engine.imageEmbeddings(): the bytes or URL read as an image part's are, then encoded (or found cached). */
export async function imageEmbeddings(
  deps: Omit<MediaPreviewDeps, 'where' | 'takesVideo'>,
  image: Uint8Array | ArrayBuffer | Blob | string,
): Promise<ImageEmbeddingsResult> {
  const part =
    typeof image === 'string' ? ({ type: 'image_url', image_url: { url: image } } as const) : ({ type: 'image', image } as const);
  return imageEmbeddingsOf(deps.media, await imagePartBytes(part, 'image', deps.policy), deps.requestId);
}

/**
 * engine.videoFrames(): a video part's sampling and decoding, and (unless encode is false) its frames' encode.
 * A frame is what the request splices as one item: a SmolVLM2 frame, or a Qwen-VL group of two frames (one
 * temporal patch), whose token count is its patch grid's.
 */
export async function videoFrames(
  deps: MediaPreviewDeps,
  video: ChatVideoInput,
  options: { thumbnailEdge?: number; encode?: boolean },
): Promise<VideoInfo> {
  const { media, policy, requestId: id } = deps;
  if (!deps.takesVideo) throw new VideoNotSupportedError(deps.where);
  const { thumbnailEdge } = videoOptionsOf({ messages: [], tessera: { videoThumbnails: options.thumbnailEdge } });
  const source =
    typeof video === 'string'
      ? await fetchVideoUrl(video, 'video', policy, undefined)
      : await videoSourceOf(video, 'video', policy.maxVideoBytes);
  try {
    const clip = await media.prepareVideo(source, id, { thumbnailEdge });
    const pending = clip.frames.filter((f) => !f.cached);
    if (options.encode === false) for (const f of pending) media.forget(f.media);
    else await Promise.all(media.encodeBatch(pending.map((f) => ({ media: f.media, requestId: id }))));
    const tokensPerFrame = clip.frames.map((f) => f.media.numTokens);
    return videoInfo([
      {
        clip,
        layout: { timestamps: clip.frames.map((f) => f.timestamp), duration: clip.meta.duration, tokensPerFrame },
        unprunedTokens: tokensPerFrame.reduce((a, b) => a + b, 0),
      },
    ])[0]!;
  } finally {
    media.release(id);
  }
}
