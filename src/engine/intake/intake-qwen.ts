// The image side of intake (intake.ts) for a Qwen-VL checkpoint: each image is prepared by the encoder
// (content key, smart resize and patch grid, in a worker), the prompt is planned from the grids (token
// counts and M-RoPE positions before any encoding), the context window is checked, and each image is
// looked up in the encoder cache tiers.
//
//   images ──prepare──► keys + patch grids ──plan──► token ids, one pad run per image, positions ──lookup──► ready | pending

import { ContextLengthError, InvalidMessageError } from '../../errors';
import type { MediaEncoder } from '../../encoder/media-encoder';
import type { QwenProcessor } from '../../processor/qwen-processor';
import type { PreparedMedia } from '../../protocol/encoder';
import { imagePayloads, isGivenEmbeddings, type RequestMessage } from './given-embeddings';
import type { IntakePlan } from './intake-plan';
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
): Promise<IntakePlan> {
  const { processor, media } = deps;
  const images = imagePayloads(messages);
  const given = images.findIndex(isGivenEmbeddings);
  if (given >= 0) {
    throw new InvalidMessageError(
      `image part ${given} carries image_embeds, which a ${processor.modelType} checkpoint does not take yet (its rows need the image's patch grid); send the image itself.`,
    );
  }
  const settled = await Promise.allSettled(images.map((b) => media.prepare(b as Uint8Array)));
  const prepared = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  try {
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    const plan = processor.planPrompt(
      messages,
      prepared.map((p) => gridOf(p)),
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
    return { plan, media: items, videos: [], audios: [] };
  } catch (e) {
    for (const p of prepared) media.forget(p);
    media.release(requestId);
    throw e;
  }
}

function gridOf(p: PreparedMedia) {
  if (!p.grid) throw new InvalidMessageError(`the encoder prepared image ${p.key} without a patch grid; it is not a Qwen-VL encoder`);
  return p.grid;
}
