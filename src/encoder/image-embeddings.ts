// An image's embeddings outside a request: prepared and encoded (or found in a cache tier) by the media
// encoder under a request id of the caller's, released after. engine.imageEmbeddings() and the remote
// engine's local encoder both go through here.

import type { ImageEmbeddingsResult } from '../engine/types';
import { UnsupportedModelError } from '../errors';
import type { MediaEncoder } from './media-encoder';

export async function imageEmbeddingsOf(media: MediaEncoder, bytes: Uint8Array, requestId: number): Promise<ImageEmbeddingsResult> {
  // An image_embeds part is a tile grid of image_seq_len rows each; a Qwen-VL image has a patch grid instead.
  if (media.info.modality === 'vision' && media.info.imageSeqLen === 0) {
    throw new UnsupportedModelError(
      'image embeddings outside a request (engine.imageEmbeddings(), the remote engine) take Idefics3 checkpoints (SmolVLM, SmolVLM2) for now; this is a Qwen-VL encoder: send its images in a request.',
    );
  }
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
