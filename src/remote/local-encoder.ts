// The remote engine's local encoder over a media encoder started alone (startNodeMediaEncoder,
// startBrowserMediaEncoder): images encoded here, each under a request id of its own.

import { imageEmbeddingsOf } from '../encoder/image-embeddings';
import type { MediaEncoder, MediaEncoderStats } from '../encoder/media-encoder';
import type { LocalImageEncoder } from './image-parts';

export type StatsLocalEncoder = LocalImageEncoder & { stats(): MediaEncoderStats; destroy(): void };

export function localImageEncoder(local: { media: MediaEncoder; destroy(): void }): StatsLocalEncoder {
  const media = local.media;
  let nextId = 1;
  return {
    identity: media.info.identity,
    hiddenSize: media.info.hiddenSize,
    imageSeqLen: media.info.imageSeqLen,
    embeddings: (bytes) => imageEmbeddingsOf(media, bytes, nextId++),
    stats: () => media.stats(),
    destroy: () => local.destroy(),
  };
}
