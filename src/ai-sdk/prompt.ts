// The AI SDK's prompt (LanguageModelV4Prompt, @ai-sdk/provider 4) as the engine's OpenAI messages:
//
//   { role: 'system', content }                         -> { role: 'system', content }
//   user text part                                      -> { type: 'text', text }
//   user file part, image/* | video/* | audio/*         -> { type: 'image' | 'video' | 'audio', bytes }
//                   (base64 text decoded; a URL part:   -> image_url / video_url / audio_url, fetched by the engine)
//   user file part given as text (text/plain, ...)      -> { type: 'text', text }
//   assistant text and tool-call parts                  -> { role: 'assistant', content, tool_calls }
//   tool-result parts                                    -> { role: 'tool', tool_call_id, content } each
//
// What has no place in a Tessera prompt is refused by name (InvalidMessageError), never dropped: files of
// other media types, provider file references, provider-executed tool results. Reasoning parts of earlier
// assistant turns are left out, as the model never wrote them, and said so in a warning.

import type { LanguageModelV4FilePart, LanguageModelV4Prompt, LanguageModelV4ToolResultOutput, SharedV4Warning } from '@ai-sdk/provider';
import { InvalidMessageError } from '../errors';
import type { ChatCompletionMessage, ChatContentPart, ToolCall } from '../engine/types';

const KINDS = ['image', 'video', 'audio'] as const;
type Kind = (typeof KINDS)[number];

function base64Bytes(text: string): Uint8Array {
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}

function filePart(p: LanguageModelV4FilePart, where: string): ChatContentPart {
  if (p.data.type === 'text') return { type: 'text', text: p.data.text };
  const kind = KINDS.find((k) => p.mediaType.startsWith(`${k}/`)) as Kind | undefined;
  if (!kind) {
    throw new InvalidMessageError(
      `${where} is a file of type ${p.mediaType}; Tessera reads images, videos and audio (image/*, video/*, audio/*): send a document's pages as images.`,
    );
  }
  if (p.data.type === 'url') {
    const url = p.data.url.href;
    if (kind === 'image') return { type: 'image_url', image_url: { url } };
    if (kind === 'video') return { type: 'video_url', video_url: { url } };
    return { type: 'audio_url', audio_url: { url } };
  }
  if (p.data.type !== 'data') {
    throw new InvalidMessageError(`${where} is a provider file reference, which a local engine cannot resolve; send the file's bytes.`);
  }
  const bytes = typeof p.data.data === 'string' ? base64Bytes(p.data.data) : p.data.data;
  if (kind === 'image') return { type: 'image', image: bytes };
  if (kind === 'video') return { type: 'video', video: bytes };
  return { type: 'audio', audio: bytes };
}

/** A tool's result as the text of a 'tool' turn (JSON values as JSON). */
function resultText(o: LanguageModelV4ToolResultOutput, where: string): string {
  switch (o.type) {
    case 'text':
    case 'error-text':
      return o.value;
    case 'json':
    case 'error-json':
      return JSON.stringify(o.value);
    case 'execution-denied':
      return o.reason ?? 'The tool call was denied.';
    case 'content':
      return o.value
        .map((v, k) => {
          if (v.type === 'text') return v.text;
          throw new InvalidMessageError(`${where}.output.value[${k}] is a ${v.type} part; a tool result is text or JSON here.`);
        })
        .join('');
  }
}

/** The engine's messages for `prompt`, and what was left out (as the AI SDK's warnings). */
export function toEngineMessages(prompt: LanguageModelV4Prompt): { messages: ChatCompletionMessage[]; warnings: SharedV4Warning[] } {
  const messages: ChatCompletionMessage[] = [];
  const warnings: SharedV4Warning[] = [];
  for (const [i, m] of prompt.entries()) {
    const at = `prompt[${i}]`;
    if (m.role === 'system') {
      messages.push({ role: 'system', content: m.content });
    } else if (m.role === 'user') {
      messages.push({
        role: 'user',
        content: m.content.map((p, j) => (p.type === 'text' ? { type: 'text', text: p.text } : filePart(p, `${at}.content[${j}]`))),
      });
    } else if (m.role === 'assistant') {
      let text = '';
      const calls: ToolCall[] = [];
      for (const [j, p] of m.content.entries()) {
        const where = `${at}.content[${j}]`;
        if (p.type === 'text') text += p.text;
        else if (p.type === 'tool-call') {
          calls.push({
            id: p.toolCallId,
            type: 'function',
            function: { name: p.toolName, arguments: typeof p.input === 'string' ? p.input : JSON.stringify(p.input) },
          });
        } else if (p.type === 'reasoning' || p.type === 'reasoning-file') {
          warnings.push({ type: 'compatibility', feature: 'reasoning in earlier turns', details: `${where} was left out of the prompt.` });
        } else {
          throw new InvalidMessageError(`${where} is a ${p.type} part, which an assistant turn of a local model never holds.`);
        }
      }
      messages.push({ role: 'assistant', content: text, ...(calls.length ? { tool_calls: calls } : {}) });
    } else {
      for (const [j, p] of m.content.entries()) {
        if (p.type !== 'tool-result') continue; // approvals are the caller's flow, not the model's prompt
        messages.push({ role: 'tool', tool_call_id: p.toolCallId, content: resultText(p.output, `${at}.content[${j}]`) });
      }
    }
  }
  return { messages, warnings };
}
