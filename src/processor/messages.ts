// messages.ts: the chat message shape the processor accepts, and its validation.
// OpenAI/HF-like: { role, content: string | [{type: 'text', text} | {type: 'image', image} | {type: 'video', video}
// | {type: 'audio', audio}] }.
// A string content is one text part (the Idefics3 template indexes content as a list).

import { InvalidMessageError } from '../errors';
import { ROLES, type Role, type TemplateMessage, type TemplateToolCall } from './chat-template';
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

/** One frame of a video given as frames: encoded image bytes or pixels, and where it sits in the clip. */
export interface VideoFrameInput<I = ImageInput> {
  image: I;
  /** Seconds from the start of the clip (printed as "Frame from MM:SS"). */
  timestamp: number;
}

/**
 * A video: an encoded clip (MP4, WebM, animated GIF/WebP) as bytes or a Blob/File, or frames already
 * chosen, with their timestamps (used as given, none dropped; `duration` defaults to the last timestamp plus
 * the spacing of the last two frames, i.e. frames / fps for evenly spaced frames from 0).
 */
export type VideoInput<I = ImageInput> = Uint8Array | ArrayBuffer | Blob | { frames: ReadonlyArray<VideoFrameInput<I>>; duration?: number };

export interface VideoPart<V = VideoInput> {
  type: 'video';
  video: V;
}

/**
 * Audio: an encoded file (WAV, MP3, Ogg/Opus, FLAC, AAC/M4A, WebM, or a video file's first audio track) as
 * bytes or a Blob/File, or samples already decoded: mono, or channels interleaved, at their own rate.
 */
export type AudioInput = Uint8Array | ArrayBuffer | Blob | { pcm: Float32Array; sampleRate: number; channels?: number };

interface AudioPart<A = AudioInput> {
  type: 'audio';
  audio: A;
}

export type ContentPart<I = ImageInput, V = VideoInput, A = AudioInput> = TextPart | ImagePart<I> | VideoPart<V> | AudioPart<A>;

/** A call an assistant turn made: the function's name and its arguments as JSON text. */
export interface ToolCallInput {
  id?: string;
  name: string;
  arguments: string;
}

export interface ChatMessage<I = ImageInput, V = VideoInput, A = AudioInput> {
  /** 'tool': a tool's result (only for a checkpoint whose template offers tools). */
  role: Role;
  content: string | ReadonlyArray<ContentPart<I, V, A>>;
  /** An assistant turn's tool calls (only for a checkpoint whose template offers tools). */
  toolCalls?: readonly ToolCallInput[];
  /** A tool turn: the id of the call it answers. */
  toolCallId?: string;
}

/**
 * Validates messages; returns what the template sees and the media parts' payloads in message order.
 * `requireImages: false` accepts media parts without a payload (planning from sizes alone). `tools: false`
 * (a template that offers no tools) refuses tool turns and tool calls.
 */
export function splitMessages<I, V = VideoInput, A = AudioInput>(
  messages: ReadonlyArray<ChatMessage<I, V, A>>,
  requireImages = true,
  tools = false,
): { templateMessages: TemplateMessage[]; images: I[]; videos: V[]; audios: A[] } {
  if (!Array.isArray(messages) || messages.length === 0) {
    throw new InvalidMessageError('messages must be a non-empty array of {role, content}.');
  }
  const images: I[] = [];
  const videos: V[] = [];
  const audios: A[] = [];
  const templateMessages = messages.map((m, i): TemplateMessage => {
    if (!m || !(ROLES as readonly string[]).includes(m.role)) {
      throw new InvalidMessageError(`messages[${i}].role is ${JSON.stringify(m?.role)}; use one of ${ROLES.join(', ')}.`);
    }
    // A turn of tool calls only has no content (as HF passes content None): templates test it for emptiness.
    const noText = m.content === '' && (m.toolCalls?.length ?? 0) > 0;
    const parts = typeof m.content === 'string' ? (noText ? [] : [{ type: 'text' as const, text: m.content }]) : m.content;
    if (!Array.isArray(parts)) {
      throw new InvalidMessageError(`messages[${i}].content must be a string or an array of parts.`);
    }
    if (!tools && (m.role === 'tool' || m.toolCalls?.length)) {
      throw new InvalidMessageError(
        `messages[${i}] is a tool ${m.role === 'tool' ? 'result' : 'call'}, but this checkpoint's chat template offers no tools; leave it out.`,
      );
    }
    const calls = m.toolCalls?.length
      ? { tool_calls: m.toolCalls.map((c: ToolCallInput, k: number) => templateToolCall(c, `messages[${i}].toolCalls[${k}]`)) }
      : {};
    return {
      role: m.role,
      ...calls,
      ...(m.toolCallId !== undefined ? { tool_call_id: m.toolCallId } : {}),
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
        if (p?.type === 'video') {
          if (requireImages && (p.video === undefined || p.video === null)) {
            throw new InvalidMessageError(`messages[${i}].content[${j}] is a video part without a video.`);
          }
          videos.push(p.video);
          return { type: 'video' as const };
        }
        if (p?.type === 'audio') {
          if (requireImages && (p.audio === undefined || p.audio === null)) {
            throw new InvalidMessageError(`messages[${i}].content[${j}] is an audio part without audio.`);
          }
          audios.push(p.audio);
          return { type: 'audio' as const };
        }
        throw new InvalidMessageError(
          `messages[${i}].content[${j}].type is ${JSON.stringify((p as { type?: unknown })?.type)}; use 'text', 'image', 'video' or 'audio'.`,
        );
      }),
    };
  });
  return { templateMessages, images, videos, audios };
}

function templateToolCall(c: ToolCallInput, where: string): TemplateToolCall {
  if (!c || typeof c.name !== 'string' || typeof c.arguments !== 'string') {
    throw new InvalidMessageError(`${where} must be { name, arguments } with both strings (arguments: the call's JSON text).`);
  }
  return { ...(c.id !== undefined ? { id: c.id } : {}), type: 'function', function: { name: c.name, arguments: c.arguments } };
}
