// messages.ts: the chat message shape the processor accepts, and its validation.
// OpenAI/HF-like: { role, content: string | [{type: 'text', text} | {type: 'image', image}] }. A string
// content is one text part (the Idefics3 template indexes content as a list).

import { InvalidMessageError } from '../errors';
import { ROLES, type Role, type TemplateMessage } from './chat-template';
import type { RawImage } from './image-decode';

/** Encoded image bytes (PNG, JPEG, ...) or already-decoded pixels. */
export type ImageInput = Uint8Array | ArrayBuffer | RawImage;

export interface TextPart {
  type: 'text';
  text: string;
}

export interface ImagePart<I = ImageInput> {
  type: 'image';
  image: I;
}

export type ContentPart<I = ImageInput> = TextPart | ImagePart<I>;

export interface ChatMessage<I = ImageInput> {
  role: Role;
  content: string | ReadonlyArray<ContentPart<I>>;
}

/**
 * Validates messages; returns what the template sees and the image parts' payloads in message order.
 * `requireImages: false` accepts image parts without a payload (planning from sizes alone).
 */
export function splitMessages<I>(
  messages: ReadonlyArray<ChatMessage<I>>,
  requireImages = true,
): { templateMessages: TemplateMessage[]; images: I[] } {
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new InvalidMessageError('messages must be a non-empty array of {role, content}.');
  }
  const images: I[] = [];
  const templateMessages = messages.map((m, i): TemplateMessage => {
    if (!m || !(ROLES as readonly string[]).includes(m.role)) {
      throw new InvalidMessageError(`messages[${i}].role is ${JSON.stringify(m?.role)}; use one of ${ROLES.join(', ')}.`);
    }
    const parts = typeof m.content === 'string' ? [{ type: 'text' as const, text: m.content }] : m.content;
    if (!Array.isArray(parts)) {
      throw new InvalidMessageError(`messages[${i}].content must be a string or an array of parts.`);
    }
    return {
      role: m.role,
      content: parts.map((p, j) => {
        if (p?.type === 'text') {
          if (typeof p.text !== 'string') throw new InvalidMessageError(`messages[${i}].content[${j}].text must be a string.`);
          return { type: 'text' as const, text: p.text };
        }
        if (p?.type === 'image') {
          if (requireImages && (p.image === undefined || p.image === null)) {
            throw new InvalidMessageError(`messages[${i}].content[${j}] is an image part without an image.`);
          }
          images.push(p.image);
          return { type: 'image' as const };
        }
        throw new InvalidMessageError(
          `messages[${i}].content[${j}].type is ${JSON.stringify((p as { type?: unknown })?.type)}; use 'text' or 'image'.`,
        );
      }),
    };
  });
  return { templateMessages, images };
}
