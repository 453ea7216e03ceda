// Video parts of OpenAI-style messages -> what the encoder takes (protocol VideoSource): clip bytes, a Blob
// (kept as is: a picked File is read lazily by the demuxer, never copied whole onto this thread), or a
// frame list with encoded images as bytes. As for images, nothing about identity comes from a URL or a
// name: the whole-clip key hashes the bytes.

import { InvalidMessageError } from '../../errors';
import type { RawImage } from '../../processor/image-decode';
import type { VideoSource } from '../../protocol/encoder';
import { dataUrlBytes } from './data-url';
import { fetchMedia, videoFetchLimit } from './fetch-media';
import type { MediaPolicy } from './media-options';
import type { VideoFrames } from '../types';

/** The clip at `url`: a data: URL's payload, or an http(s)/blob: download under the request's media policy. */
export async function fetchVideoUrl(url: string, where: string, policy: MediaPolicy, signal: AbortSignal | undefined): Promise<Uint8Array> {
  if (/^data:/i.test(url)) return dataUrlBytes(url, policy.maxVideoBytes, where, 'video');
  return fetchMedia(url, policy, signal, videoFetchLimit(policy));
}

function isRawImage(x: unknown): x is RawImage {
  const r = x as RawImage;
  return (
    !!r && typeof r === 'object' && Number.isInteger(r.width) && Number.isInteger(r.height) && !!r.data && typeof r.channels === 'number'
  );
}

/** A `video` part's payload as the encoder takes it; `where` names the part in errors. */
export async function videoSourceOf(video: unknown, where: string, maxBytes: number): Promise<VideoSource> {
  const size =
    video instanceof Uint8Array || video instanceof ArrayBuffer
      ? video.byteLength
      : typeof Blob !== 'undefined' && video instanceof Blob
        ? video.size
        : 0;
  if (size > maxBytes)
    throw new InvalidMessageError(
      `${where}.video is ${size} bytes, over media.maxVideoBytes (${maxBytes}); send a shorter or smaller clip.`,
    );
  if (video instanceof Uint8Array) return video;
  if (video instanceof ArrayBuffer) return new Uint8Array(video);
  if (typeof Blob !== 'undefined' && video instanceof Blob) return video;
  const list = video as VideoFrames;
  if (list && typeof list === 'object' && Array.isArray(list.frames)) {
    const frames = await Promise.all(
      list.frames.map(async (f, i) => {
        const image = f?.image;
        const timestamp = f?.timestamp;
        if (image instanceof Uint8Array || isRawImage(image)) return { image, timestamp };
        if (image instanceof ArrayBuffer) return { image: new Uint8Array(image), timestamp };
        if (typeof Blob !== 'undefined' && image instanceof Blob) return { image: new Uint8Array(await image.arrayBuffer()), timestamp };
        throw new InvalidMessageError(
          `${where}.video.frames[${i}].image must be encoded image bytes, a Blob, or {width, height, channels, data} pixels.`,
        );
      }),
    );
    return { frames, ...(list.duration !== undefined ? { duration: list.duration } : {}) };
  }
  throw new InvalidMessageError(
    `${where}.video must be video bytes (Uint8Array/ArrayBuffer), a Blob/File, or { frames: [{ image, timestamp }], duration? }.`,
  );
}
