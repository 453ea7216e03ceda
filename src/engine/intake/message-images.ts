// Turn OpenAI-style messages into the processor's: each image part becomes its encoded bytes, each video
// part what the encoder takes (message-videos.ts). Nothing about an image's identity comes from its URL or
// name: only its bytes are used. Every part is untrusted: a wrong type or a malformed URL is an
// InvalidMessageError naming the part; image_url and video_url downloads go through fetch-media.ts (the
// request's signal, a timeout, a byte cap, optionally no private hosts); every image is measured against
// media.maxImageBytes before it is decoded.

import { InvalidMessageError, InvalidRequestError } from '../../errors';
import type { ContentPart } from '../../processor/messages';
import { dataUrlBytes } from './data-url';
import { fetchMedia } from './fetch-media';
import { givenEmbeddingsOf, type ImagePayload, type RequestMessage } from './given-embeddings';
import type { MediaPolicy } from './media-options';
import { audioSourceOf, audioUrlBytes, inputAudioBytes } from './message-audio';
import { fetchVideoUrl, videoSourceOf } from './message-videos';
import { fromOpenAiMessage } from './openai-message';
import type { ChatCompletionMessage, ChatContentPart } from '../types';

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v !== 'object') return typeof v;
  return (v as object).constructor?.name ?? 'object';
}

/** Bytes of an `image` part: Uint8Array (Node Buffers too), any other ArrayBufferView, ArrayBuffer, or Blob. */
async function givenBytes(img: unknown, where: string, policy: MediaPolicy): Promise<Uint8Array> {
  let size: number;
  if (typeof Blob !== 'undefined' && img instanceof Blob) size = img.size;
  else if (img instanceof ArrayBuffer || (typeof SharedArrayBuffer !== 'undefined' && img instanceof SharedArrayBuffer))
    size = img.byteLength;
  else if (ArrayBuffer.isView(img)) size = img.byteLength;
  else {
    throw new InvalidMessageError(
      `${where}.image is a ${describe(img)}; pass the encoded image bytes (Uint8Array, ArrayBuffer or Blob), or use an image_url part.`,
    );
  }
  if (size > policy.maxImageBytes) {
    throw new InvalidMessageError(
      `${where}.image is ${size} bytes, over media.maxImageBytes (${policy.maxImageBytes}); send a smaller image.`,
    );
  }
  if (typeof Blob !== 'undefined' && img instanceof Blob) return new Uint8Array(await img.arrayBuffer());
  if (ArrayBuffer.isView(img)) return img instanceof Uint8Array ? img : new Uint8Array(img.buffer, img.byteOffset, img.byteLength);
  return new Uint8Array(img as ArrayBuffer);
}

async function urlBytes(part: unknown, where: string, policy: MediaPolicy, signal: AbortSignal | undefined): Promise<Uint8Array> {
  const imageUrl = (part as { image_url?: unknown }).image_url;
  const url = typeof imageUrl === 'string' ? imageUrl : (imageUrl as { url?: unknown } | null)?.url;
  if (typeof url !== 'string') throw new InvalidMessageError(`${where}.image_url.url must be a string, found ${describe(url)}.`);
  if (/^data:/i.test(url)) return dataUrlBytes(url, policy.maxImageBytes, `${where}.image_url.url`);
  return fetchMedia(url, policy, signal);
}

/**
 * The encoded bytes of an `image` or `image_url` part, under the same checks a request's are (a byte cap
 * measured first, image_url downloads through fetch-media.ts).
 */
export function imagePartBytes(part: ChatContentPart, where: string, policy: MediaPolicy, signal?: AbortSignal): Promise<Uint8Array> {
  if (part.type === 'image') return givenBytes(part.image, where, policy);
  if (part.type === 'image_url') return urlBytes(part, where, policy, signal);
  throw new InvalidMessageError(`${where} is a ${part.type} part, not an image`);
}

export async function toProcessorMessages(
  messages: ChatCompletionMessage[],
  policy: MediaPolicy,
  signal?: AbortSignal,
): Promise<RequestMessage[]> {
  if (!Array.isArray(messages) || messages.length === 0) throw new InvalidMessageError('messages must be a non-empty array');
  const out: RequestMessage[] = [];
  for (const [i, message] of messages.entries()) {
    const m = fromOpenAiMessage(message, i);
    const calls = {
      ...(m.toolCalls ? { toolCalls: m.toolCalls } : {}),
      ...(m.toolCallId !== undefined ? { toolCallId: m.toolCallId } : {}),
    };
    if (typeof m.content === 'string') {
      out.push({ role: m.role, content: m.content, ...calls });
      continue;
    }
    const parts: ContentPart<ImagePayload>[] = [];
    for (const [j, p] of m.content.entries()) {
      const where = `messages[${i}].content[${j}]`;
      if (p?.type === 'text') {
        if (typeof p.text !== 'string') throw new InvalidMessageError(`${where}.text must be a string, found ${describe(p.text)}.`);
        parts.push({ type: 'text', text: p.text });
      } else if (p?.type === 'image_url') {
        const detail = (p.image_url as { detail?: unknown } | undefined)?.detail;
        if (detail !== undefined && detail !== 'auto' && detail !== 'high') {
          throw new InvalidRequestError(
            `${where}.image_url.detail`,
            detail,
            "use 'auto' or 'high' (the checkpoint's own resolution) or leave it out; 'low' is not implemented.",
          );
        }
        parts.push({ type: 'image', image: await urlBytes(p, where, policy, signal) });
      } else if (p?.type === 'image') {
        parts.push({ type: 'image', image: await givenBytes(p.image, where, policy) });
      } else if (p?.type === 'video') {
        parts.push({ type: 'video', video: await videoSourceOf(p.video, where, policy.maxVideoBytes) });
      } else if (p?.type === 'audio') {
        parts.push({ type: 'audio', audio: audioSourceOf(p.audio, where, policy) });
      } else if (p?.type === 'input_audio') {
        parts.push({ type: 'audio', audio: inputAudioBytes(p, where, policy) });
      } else if (p?.type === 'audio_url') {
        parts.push({ type: 'audio', audio: await audioUrlBytes(p, where, policy, signal) });
      } else if (p?.type === 'video_url') {
        const url = p.video_url?.url;
        if (typeof url !== 'string') throw new InvalidMessageError(`${where}.video_url.url must be a string, found ${describe(url)}.`);
        parts.push({ type: 'video', video: await fetchVideoUrl(url, `${where}.video_url.url`, policy, signal) });
      } else if (p?.type === 'image_embeds') {
        parts.push({ type: 'image', image: await givenEmbeddingsOf(p, where, policy) });
      } else if (p?.type === 'file') {
        throw new InvalidMessageError(`${where} is a file part; files (PDFs, documents) are not read: send their pages as images.`);
      } else {
        throw new InvalidMessageError(
          `${where}.type is ${JSON.stringify((p as { type?: unknown })?.type)}; use 'text', 'image_url', 'image', 'image_embeds', 'video_url', 'video', 'input_audio', 'audio_url' or 'audio'`,
        );
      }
    }
    out.push({ role: m.role, content: parts, ...calls });
  }
  return out;
}
