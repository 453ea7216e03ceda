// The audio side of intake (intake.ts), for an audio checkpoint (Voxtral): each audio part is decoded by the
// encoder into 30-second chunks (src/encoder/audio/prepare-audio.ts), the prompt is planned from the chunk
// counts (one [AUDIO] run per part, one placeholder per chunk), the context window is checked, and each
// chunk is looked up in the encoder cache tiers as a media item of its own:
//
//   audio parts ──prepareAudio──► chunks (key, tokens) ──plan──► token ids, a run per chunk ──lookup──► ready | pending
//
// Decoding stops early (AudioTooLongError) once a part has more chunks than the window could hold, so a
// 2-hour file is refused after its first minutes, not after decoding it all.

import type { AudioFeatures } from '../../protocol/encoder';
import { ContextLengthError } from '../../errors';
import type { MediaEncoder } from '../../encoder/media-encoder';
import type { ChatMessage } from '../../processor/messages';
import type { RequestMessage } from './given-embeddings';
import type { VoxtralProcessor } from '../../processor/voxtral-processor';
import type { VoxtralPromptOptions } from '../../processor/voxtral-prompt';
import type { AudioSource, PreparedAudio } from '../../protocol/encoder';
import type { AudioInfo } from '../types';
import type { IntakePlan } from './intake-plan';
import type { RequestMedia } from './request-media';

/** The audio parts' payloads, in message order. */
export function audioSources(messages: readonly ChatMessage<unknown, unknown, unknown>[]): AudioSource[] {
  const out: AudioSource[] = [];
  for (const m of messages) {
    if (typeof m.content === 'string') continue;
    for (const p of m.content) if (p.type === 'audio') out.push(p.audio as AudioSource);
  }
  return out;
}

export interface AudioIntakeDeps {
  processor: VoxtralProcessor;
  media: MediaEncoder;
  contextWindow: number;
  contextLimits?: { modelPositions: number; kvCacheTokens: number };
  audioFeatures?: AudioFeatures;
}

export async function intakeAudio(
  deps: AudioIntakeDeps,
  messages: readonly RequestMessage[],
  requestId: number,
  maxTokens: number,
  options: VoxtralPromptOptions = {},
): Promise<IntakePlan> {
  const { processor, media } = deps;
  const sources = audioSources(messages);
  // Chunks one part may bring before the window is certainly full (the rest of the prompt needs tokens too).
  const maxChunks = Math.max(0, Math.floor((deps.contextWindow - maxTokens - 1) / processor.tokensPerChunk));
  const settled = await Promise.allSettled(
    sources.map((s) => media.prepareAudio(s, { maxChunks, contextWindow: deps.contextWindow, features: deps.audioFeatures })),
  );
  const audios = settled.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  try {
    const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
    const plan = processor.planPrompt(
      messages,
      audios.map((a) => a.chunks.length),
      options,
    );
    if (plan.tokenIds.length + maxTokens > deps.contextWindow)
      throw new ContextLengthError(plan.tokenIds.length, maxTokens, deps.contextWindow, deps.contextLimits);
    const items: RequestMedia[] = audios.flatMap((a, audioIndex) =>
      a.chunks.map((c) => {
        const run = plan.audios[audioIndex]!.chunkRuns[c.index]!;
        return { prepared: c.media, placeholder: { ...run, runs: [run] }, longestEdge: 0, audio: { audioIndex, chunk: c.index } };
      }),
    );
    const hits = await Promise.all(items.map((m) => media.lookup(m.prepared, requestId)));
    hits.forEach((h, i) => {
      if (!h) return;
      items[i].data = h.data;
      items[i].source = h.source;
    });
    return { plan, media: items, videos: [], audios };
  } catch (e) {
    for (const a of audios) for (const c of a.chunks) media.forget(c.media);
    media.release(requestId);
    throw e;
  }
}

/** What each audio part of a request became (tessera.audios). */
export function audioInfo(audios: readonly PreparedAudio[], items: readonly RequestMedia[]): AudioInfo[] {
  return audios.map((a, audioIndex) => {
    const chunks = items.filter((m) => m.audio?.audioIndex === audioIndex);
    return {
      ...a.meta,
      chunks: chunks.map((m) => ({ key: m.prepared.key, source: m.source ?? 'encoded', start: a.chunks[m.audio!.chunk]!.start })),
      tokens: chunks.reduce((n, m) => n + m.placeholder.length, 0),
      decodeMs: a.decodeMs,
      featuresMs: a.featuresMs,
    };
  });
}
