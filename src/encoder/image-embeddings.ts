// An image's embeddings outside a request: prepared and encoded (or found in a cache tier) by the media
// encoder under a request id of the caller's, released after. engine.imageEmbeddings() and the remote
// engine's local encoder both go through here. An Idefics3 image's are its tiles' rows with the tile grid; a
// Qwen-VL image's are its merged patches' rows with the patch grid, in vLLM's layout (deepstack-layout.ts).

import type { ImageEmbeddingsResult } from '../engine/types';
import { levelsAlongFeatures } from './deepstack-layout';
import type { MediaEncoder } from './media-encoder';

export async function imageEmbeddingsOf(media: MediaEncoder, bytes: Uint8Array, requestId: number): Promise<ImageEmbeddingsResult> {
  try {
    const prepared = await media.prepare(bytes);
    const r = await media.embeddings(prepared, requestId);
    const { hiddenSize: hidden, deepstackLevels: levels } = media.info;
    if (prepared.grid) {
      const { t, h, w } = prepared.grid;
      const n = prepared.numTokens;
      return {
        key: prepared.key,
        grid: [0, 0],
        gridThw: [t, h, w],
        shape: [n, (1 + levels) * hidden],
        data: levelsAlongFeatures(r.data, n, hidden, levels),
        source: r.source,
      };
    }
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
