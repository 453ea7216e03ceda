// What decodes a clip where the encoder runs: WebCodecs in a browser worker (decode-browser.ts), ffmpeg
// and sharp in Node (decode-node.ts). A backend opens a clip (container metadata only), then decodes just
// the frames sampling kept, one at a time: the caller turns each frame into a tile and drops it before
// the next is decoded, so memory holds one decoded frame however long the clip is.

import type { RawImage } from '../../processor/image-decode';
import type { VideoMetaInfo } from '../../protocol/encoder';

/** What a backend reads from a clip's container (the decoder's name is added by prepare-video.ts). */
export type ClipMeta = Omit<VideoMetaInfo, 'decoder'>;

export interface OpenedClip {
  readonly meta: ClipMeta;
  /** Decodes the frames at these indices (ascending, distinct), in order, one at a time. */
  frames(indices: readonly number[]): AsyncGenerator<RawImage>;
  close(): void;
}

export interface VideoBackendOptions {
  /** Node: the ffmpeg program to run (default 'ffmpeg', found on PATH). */
  ffmpegPath?: string;
}

export interface VideoBackend {
  /** 'webcodecs' (browser) or 'ffmpeg+sharp' (Node): part of the whole-clip cache key (decoders differ in pixels). */
  readonly name: string;
  open(source: Uint8Array | Blob, options?: VideoBackendOptions): Promise<OpenedClip>;
}

/**
 * A backend whose code (and its demuxer library) loads on the first clip: apps that never send video do not
 * download it on their main thread. `name` must be the loaded backend's name (it is part of cache keys).
 */
export function lazyVideoBackend(name: string, load: () => Promise<VideoBackend>): VideoBackend {
  let loading: Promise<VideoBackend> | undefined;
  return {
    name,
    async open(source, options) {
      const backend = await (loading ??= load());
      return backend.open(source, options);
    },
  };
}

/** GIF87a / GIF89a, or RIFF....WEBP: an animated image (decoded by sharp in Node), not a video container. */
export async function isAnimatedImage(source: Uint8Array | Blob): Promise<'gif' | 'webp' | undefined> {
  const head = source instanceof Uint8Array ? source.subarray(0, 12) : new Uint8Array(await source.slice(0, 12).arrayBuffer());
  const text = String.fromCharCode(...head);
  if (text.startsWith('GIF87a') || text.startsWith('GIF89a')) return 'gif';
  if (text.startsWith('RIFF') && text.slice(8, 12) === 'WEBP') return 'webp';
  return undefined;
}
