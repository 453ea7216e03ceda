// The remote engine's local encoder over a media encoder started alone (startNodeMediaEncoder,
// startBrowserMediaEncoder): images encoded here, each under a request id of its own and under the
// encoder's stall watchdog when it has one.

import { imageEmbeddingsOf } from '../encoder/image-embeddings';
import type { MediaEncoderStats } from '../encoder/media-encoder';
import type { StandaloneMediaEncoder } from '../engine/standalone-encoder';
import type { LocalImageEncoder } from './image-parts';

export type StatsLocalEncoder = LocalImageEncoder & { stats(): MediaEncoderStats; destroy(): void };

export function localImageEncoder(local: Pick<StandaloneMediaEncoder, 'media' | 'watch' | 'destroy'>): StatsLocalEncoder {
  const media = local.media;
  let nextId = 1;
  return {
    identity: media.info.identity,
    hiddenSize: media.info.hiddenSize,
    imageSeqLen: media.info.imageSeqLen,
    embeddings: (bytes) => local.watch(imageEmbeddingsOf(media, bytes, nextId++)),
    stats: () => media.stats(),
    destroy: () => local.destroy(),
  };
}
