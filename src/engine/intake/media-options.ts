// Limits on the media a request brings (images today), set once per engine. A request is untrusted
// input: these bound what one request can make the engine fetch, hold and decode.

import type { AudioFeatures } from '../../protocol/encoder';
import { InvalidRequestError } from '../../errors';

export interface MediaOptions {
  /** Most image parts per request (default 16); counted before any image is fetched or decoded. */
  maxImagesPerRequest?: number;
  /**
   * Largest encoded image in bytes (default 32 MiB): an image_url download stops reading past it, and
   * data: URLs and image bytes given directly are measured before they are decoded.
   */
  maxImageBytes?: number;
  /** Largest video in bytes (default 1 GiB): a video_url download stops reading past it; data: URLs are measured first. */
  maxVideoBytes?: number;
  /**
   * Largest encoded audio in bytes (default 1 GiB): an audio_url download stops reading past it; data: URLs,
   * input_audio data and bytes given directly are measured first.
   */
  maxAudioBytes?: number;
  /** Time one image_url fetch may take, body included (default 30 000 ms). */
  fetchTimeoutMs?: number;
  /**
   * Refuse image_url hosts on private, loopback and link-local addresses, and redirects to them
   * (default false). Turn it on when the messages come from users you do not trust (a server passing
   * chat messages through), so they cannot make the engine fetch from your network. In Node, host names
   * are resolved and every address checked; in browsers only literal addresses and `localhost` are
   * checked (the browser does not reveal DNS answers or redirect targets: a redirect is refused).
   */
  blockPrivateNetwork?: boolean;
  /**
   * Take image_embeds parts: embeddings computed elsewhere (by a remote engine, or vLLM's disaggregated
   * encoder), spliced as given and cached under their uuid (default false). Only for callers you trust:
   * the embeddings are checked for shape, not for what they say.
   */
  acceptEmbeddings?: boolean;
  /**
   * How an audio part's 30-second chunks get their log-mel features (default 'whole-clip': the log-mel of
   * the whole clip, cut into chunks, as HF's VoxtralProcessor and vLLM make them, so answers match theirs).
   * 'per-chunk' makes each chunk's on its own, as soon as its samples are in (for live streaming); it
   * departs from those references at every chunk edge and in quiet chunks.
   */
  audioFeatures?: AudioFeatures;
}

/** Resolves a host name to its IP addresses (Node: dns.lookup with all: true). */
export type ResolveHost = (hostname: string) => Promise<string[]>;

/** MediaOptions with every default applied, plus how to reach the network (set by the engine factories). */
export interface MediaPolicy extends Required<MediaOptions> {
  fetchImpl?: typeof fetch;
  resolveHost?: ResolveHost;
}

const DEFAULT_MEDIA_OPTIONS: Required<MediaOptions> = {
  maxImagesPerRequest: 16,
  maxImageBytes: 32 * 2 ** 20,
  maxVideoBytes: 2 ** 30,
  maxAudioBytes: 2 ** 30,
  fetchTimeoutMs: 30_000,
  blockPrivateNetwork: false,
  acceptEmbeddings: false,
  audioFeatures: 'whole-clip',
};

export function mediaPolicy(options: MediaOptions = {}, net: { fetchImpl?: typeof fetch; resolveHost?: ResolveHost } = {}): MediaPolicy {
  const o = { ...DEFAULT_MEDIA_OPTIONS, ...options };
  for (const key of ['maxImagesPerRequest', 'maxImageBytes', 'maxVideoBytes', 'maxAudioBytes', 'fetchTimeoutMs'] as const) {
    if (!Number.isSafeInteger(o[key]) || o[key] < 1)
      throw new InvalidRequestError(`media.${key}`, o[key], 'it must be a positive integer.');
  }
  for (const key of ['blockPrivateNetwork', 'acceptEmbeddings'] as const) {
    if (typeof o[key] !== 'boolean') throw new InvalidRequestError(`media.${key}`, o[key], 'it must be true or false.');
  }
  if (o.audioFeatures !== 'whole-clip' && o.audioFeatures !== 'per-chunk') {
    throw new InvalidRequestError('media.audioFeatures', o.audioFeatures, "it must be 'whole-clip' or 'per-chunk'.");
  }
  return { ...o, ...net };
}
