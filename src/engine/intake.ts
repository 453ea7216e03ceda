// What happens to a request before the scheduler sees it: every image is prepared by the encoder (content
// key + tile layout, in a worker), the prompt is planned from the layouts (token counts before any
// encoding: DESIGN invariant 2), the context window is checked, and each image is looked up in the encoder
// cache tiers. Nothing is encoded here: items the caches do not hold are left for the scheduler to start
// under its encoder budget.
//
//   images ──prepare──► keys + layouts ──plan──► token ids, placeholder runs ──lookup──► ready | pending

import { ContextLengthError } from '../errors';
import type { MediaEncoder } from '../encoder/media-encoder';
import type { PreparedMedia } from '../protocol/encoder';
import type { ChatMessage } from '../processor/messages';
import type { Idefics3Processor } from '../processor/processor';
import type { ImagePlaceholder, PromptPlan } from '../processor/prompt';
import type { MediaInfo } from './types';

/** One image of a request: its key and layout, where its placeholders are, and its embeddings once known. */
export interface RequestMedia {
  prepared: PreparedMedia;
  placeholder: ImagePlaceholder;
  /** size.longest_edge it was prepared at (lower after a reduced-resolution retry). */
  longestEdge: number;
  /** [numTokens, hidden] f32 on the host, shared with the cache: never modify it. */
  data?: Float32Array;
  source?: MediaInfo['source'];
}

export interface IntakeDeps {
  processor: Idefics3Processor;
  media: MediaEncoder;
  /** Tokens (prompt + max_tokens) one request may reach. */
  contextWindow: number;
}

export interface IntakePlan {
  plan: PromptPlan;
  media: RequestMedia[];
}

/** The image payloads of the messages, in message order. */
export function imageBytes(messages: readonly ChatMessage[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const m of messages) {
    if (typeof m.content === 'string') continue;
    for (const p of m.content) if (p.type === 'image') out.push(p.image as Uint8Array);
  }
  return out;
}

export function withoutImages(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map((m) => (typeof m.content === 'string' ? m : { ...m, content: m.content.filter((p) => p.type !== 'image') }));
}

/**
 * Prepare (or re-prepare at `longestEdges`) the images, plan the prompt, check the window, and take cache
 * hits for `requestId`. On any failure, prepared pixels are dropped and no cache reference is left.
 */
export async function intake(
  deps: IntakeDeps,
  messages: readonly ChatMessage[],
  requestId: number,
  maxTokens: number,
  longestEdges?: readonly number[],
): Promise<IntakePlan> {
  const images = imageBytes(messages);
  const defaultEdge = deps.processor.config.image.longestEdge;
  const edges = images.map((_, i) => longestEdges?.[i] ?? defaultEdge);
  const prepared = await Promise.all(images.map((b, i) => deps.media.prepare(b, edges[i] === defaultEdge ? undefined : { longestEdge: edges[i] })));
  try {
    const plan = deps.processor.planPrompt(messages, prepared.map((m) => m.layout));
    if (plan.tokenIds.length + maxTokens > deps.contextWindow) throw new ContextLengthError(plan.tokenIds.length, maxTokens, deps.contextWindow);
    const media: RequestMedia[] = prepared.map((p, i) => ({ prepared: p, placeholder: plan.placeholders[i], longestEdge: edges[i] }));
    const hits = await Promise.all(media.map((m) => deps.media.lookup(m.prepared, requestId)));
    hits.forEach((h, i) => {
      if (!h) return;
      media[i].data = h.data;
      media[i].source = h.source;
    });
    return { plan, media };
  } catch (e) {
    for (const p of prepared) deps.media.forget(p);
    deps.media.release(requestId);
    throw e;
  }
}
