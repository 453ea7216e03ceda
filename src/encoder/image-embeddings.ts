// An image's embeddings outside a request: prepared and encoded (or found in a cache tier) by the media
// encoder under a request id of the caller's, released after. engine.imageEmbeddings() and the remote
// engine's local encoder both go through here.

import type { ImageEmbeddingsResult } from '../engine/types';
import type { MediaEncoder } from './media-encoder';

export async function imageEmbeddingsOf(media: MediaEncoder, bytes: Uint8Array, requestId: number): Promise<ImageEmbeddingsResult> {
  try {
    const prepared = await media.prepare(bytes);
    const r = await media.embeddings(prepared, requestId);
    const layout = prepared.layout!;
    const seqLen = media.info.imageSeqLen;
    return {
      key: prepared.key,
      grid: [layout.rows, layout.cols],
      shape: [layout.numTiles, seqLen, r.data.length / (layout.numTiles * seqLen)],
      data: r.data,
      source: r.source,
    };
  } finally {
    media.release(requestId);
  }
}
