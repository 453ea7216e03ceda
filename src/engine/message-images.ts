// Turn OpenAI-style messages into the processor's: each image part becomes its encoded bytes, each video
// part what the encoder takes (message-videos.ts). Nothing about an image's identity comes from its URL or
// name: only its bytes are used.

import { ImageDecodeError, InvalidMessageError } from '../errors';
import type { ChatMessage, ContentPart } from '../processor/messages';
import { dataUrlBytes } from './data-url';
import { fetchVideoUrl, videoSourceOf } from './message-videos';
import type { ChatCompletionMessage } from './types';

async function urlBytes(url: string, fetchImpl: typeof fetch): Promise<Uint8Array> {
  if (url.startsWith('data:')) {
    const bytes = dataUrlBytes(url);
    if (!bytes) throw new ImageDecodeError('the image data: URL has no comma before its payload');
    return bytes;
  }
  let res: Response;
  try {
    res = await fetchImpl(url);
  } catch (e) {
    throw new ImageDecodeError(`could not fetch the image at ${url}: ${(e as Error).message}`, { cause: e });
  }
  if (!res.ok) throw new ImageDecodeError(`fetching the image at ${url} failed with HTTP ${res.status}`);
  return new Uint8Array(await res.arrayBuffer());
}

export async function toProcessorMessages(
  messages: ChatCompletionMessage[],
  fetchImpl: typeof fetch = fetch,
): Promise<ChatMessage[]> {
  if (!Array.isArray(messages) || messages.length === 0) throw new InvalidMessageError('messages must be a non-empty array');
  const out: ChatMessage[] = [];
  for (const [i, m] of messages.entries()) {
    if (typeof m?.content === 'string') {
      out.push({ role: m.role, content: m.content });
      continue;
    }
    if (!Array.isArray(m?.content)) throw new InvalidMessageError(`messages[${i}].content must be a string or an array of parts`);
    const parts: ContentPart[] = [];
    for (const [j, p] of m.content.entries()) {
      if (p?.type === 'text') parts.push({ type: 'text', text: p.text });
      else if (p?.type === 'image_url') {
        const url = p.image_url?.url;
        if (typeof url !== 'string') throw new InvalidMessageError(`messages[${i}].content[${j}].image_url.url must be a string`);
        parts.push({ type: 'image', image: await urlBytes(url, fetchImpl) });
      } else if (p?.type === 'image') {
        const img = p.image;
        const bytes =
          typeof Blob !== 'undefined' && img instanceof Blob
            ? new Uint8Array(await img.arrayBuffer())
            : img instanceof ArrayBuffer
              ? new Uint8Array(img)
              : (img as Uint8Array);
        parts.push({ type: 'image', image: bytes });
      } else if (p?.type === 'video') {
        parts.push({ type: 'video', video: await videoSourceOf(p.video, `messages[${i}].content[${j}]`) });
      } else if (p?.type === 'video_url') {
        const url = p.video_url?.url;
        if (typeof url !== 'string') throw new InvalidMessageError(`messages[${i}].content[${j}].video_url.url must be a string`);
        parts.push({ type: 'video', video: await fetchVideoUrl(url, fetchImpl) });
      } else {
        throw new InvalidMessageError(
          `messages[${i}].content[${j}].type is ${JSON.stringify((p as { type?: unknown })?.type)}; use 'text', 'image_url', 'image', 'video_url' or 'video'`,
        );
      }
    }
    out.push({ role: m.role, content: parts });
  }
  return out;
}
