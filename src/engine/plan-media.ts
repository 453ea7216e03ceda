// The part of a request that runs before it takes the GPU: every image is prepared (key + layout) by
// the encoder, the prompt is planned from the layouts (token counts before any encoding), the context
// window is checked, then the embeddings are fetched from the cache tiers or encoded. Runs concurrently
// with other requests' decoding.
//
// Failure policy (DESIGN invariant 8), per request:
//   GPU out of memory while encoding + tessera.allowReducedResolution -> one retry with half the
//     longest edge (fewer tiles), re-planned;
//   any encoder failure + tessera.textOnlyFallback -> the images are dropped, the prompt re-planned
//     without them, and the response flagged degraded: 'text-only';
//   otherwise the request fails with the encoder's named error.

import { ContextLengthError, EncoderOutOfMemoryError, ImageTokenMismatchError, RequestAbortedError } from '../errors';
import type { EmbeddingSource } from '../encoder/media-encoder';
import type { PreparedMedia } from '../protocol/encoder';
import type { ChatMessage } from '../processor/messages';
import type { PromptPlan } from '../processor/prompt';
import type { Engine } from './engine';
import type { ChatCompletionRequest, MediaInfo } from './types';

export interface PlannedRequest {
  requestId: number;
  plan: PromptPlan;
  /** One per image, in placeholder order: [numTokens, hidden] f32. */
  embeddings: Float32Array[];
  mediaInfo: MediaInfo[];
  degraded?: 'text-only';
  processMs: number;
  encodeMs: number;
}

function imageBytes(messages: ChatMessage[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const m of messages) {
    if (typeof m.content === 'string') continue;
    for (const p of m.content) if (p.type === 'image') out.push(p.image as Uint8Array);
  }
  return out;
}

function withoutImages(messages: ChatMessage[]): ChatMessage[] {
  return messages.map((m) => (typeof m.content === 'string' ? m : { ...m, content: m.content.filter((p) => p.type !== 'image') }));
}

export async function planMedia(
  engine: Engine,
  messages: ChatMessage[],
  requestId: number,
  req: ChatCompletionRequest,
  maxTokens: number,
): Promise<PlannedRequest> {
  const t0 = performance.now();
  const images = imageBytes(messages);
  const defaultEdge = engine.processor.config.image.longestEdge;
  const edges = images.map(() => defaultEdge);
  let prepared = await Promise.all(images.map((b) => engine.media.prepare(b)));
  const planFor = (media: PreparedMedia[], msgs: ChatMessage[]) => {
    const plan = engine.planPrompt(msgs, media);
    const window = engine.contextWindow();
    if (plan.tokenIds.length + maxTokens > window) throw new ContextLengthError(plan.tokenIds.length, maxTokens, window);
    return plan;
  };
  let plan: PromptPlan;
  try {
    plan = planFor(prepared, messages);
  } catch (e) {
    for (const p of prepared) engine.media.forget(p);
    throw e;
  }
  const processMs = performance.now() - t0;

  const t1 = performance.now();
  const options = { signal: req.signal, timeoutMs: req.tessera?.encodeTimeoutMs };
  const fetchOne = async (i: number): Promise<{ data: Float32Array; source: EmbeddingSource }> => {
    try {
      return await engine.media.embeddings(prepared[i], requestId, options);
    } catch (e) {
      const tile = engine.processor.config.image.tileSize;
      const reduced = Math.max(tile, Math.floor(edges[i] / 2 / tile) * tile);
      if (!(e instanceof EncoderOutOfMemoryError) || !req.tessera?.allowReducedResolution || reduced >= edges[i]) throw e;
      edges[i] = reduced;
      prepared[i] = await engine.media.prepare(images[i], { longestEdge: reduced });
      return await engine.media.embeddings(prepared[i], requestId, options);
    }
  };
  let results: Array<{ data: Float32Array; source: EmbeddingSource }>;
  let degraded: 'text-only' | undefined;
  try {
    results = await Promise.all(prepared.map((_, i) => fetchOne(i)));
    if (edges.some((e) => e !== defaultEdge)) plan = planFor(prepared, messages);
  } catch (e) {
    if (e instanceof RequestAbortedError || !req.tessera?.textOnlyFallback || images.length === 0) throw e;
    degraded = 'text-only';
    for (const p of prepared) engine.media.forget(p);
    prepared = [];
    results = [];
    plan = planFor([], withoutImages(messages));
  }
  const hidden = engine.media.info.hiddenSize;
  plan.placeholders.forEach((p, i) => {
    if (results[i].data.length !== p.length * hidden) throw new ImageTokenMismatchError(p.length, results[i].data.length / hidden);
  });
  return {
    requestId,
    plan,
    embeddings: results.map((r) => r.data),
    mediaInfo: prepared.map((p, i) => ({ key: p.key, source: results[i].source, numTiles: p.layout.numTiles, longestEdge: edges[i] })),
    degraded,
    processMs,
    encodeMs: performance.now() - t1,
  };
}
