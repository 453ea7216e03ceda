// OpenAI's message shapes read as the chat template's: 'developer' is 'system'; an assistant turn with no
// content (null or absent) is empty, and its refusal (parts or the `refusal` field) is its text. What the
// template cannot show and Tessera cannot do is refused by name, never dropped: participant names, tool and
// function calls and their results, audio output references.
//
//   { role: 'developer', content }                          -> { role: 'system', content }
//   { role: 'assistant', content: null, refusal: 'No.' }    -> { role: 'assistant', content: 'No.' }
//   { role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] } -> [{ type: 'text', text: 'No.' }]
//   { role: 'tool', ... }, { name: 'ann', ... }, tool_calls  -> InvalidRequestError naming the field

import { InvalidMessageError, InvalidRequestError } from '../../errors';
import type { ChatCompletionMessage, ChatContentPart } from '../types';

export type TemplateRole = 'system' | 'user' | 'assistant';

const ROLES = ['system', 'developer', 'user', 'assistant'];

const present = (v: unknown) => v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0);

/** Message `i` as the processor takes it (its parts still to be read). */
export function fromOpenAiMessage(m: ChatCompletionMessage, i: number): { role: TemplateRole; content: string | ChatContentPart[] } {
  const at = `messages[${i}]`;
  if (m === null || typeof m !== 'object') throw new InvalidMessageError(`${at} must be an object {role, content}.`);
  if (m.role === 'tool' || m.role === 'function') {
    throw new InvalidRequestError(
      `${at}.role`,
      m.role,
      'tool and function results need tool calling, which Tessera does not do yet; leave them out.',
    );
  }
  if (!ROLES.includes(m.role)) {
    throw new InvalidMessageError(`${at}.role is ${JSON.stringify(m.role)}; use one of system, developer, user, assistant.`);
  }
  if (present(m.name)) {
    throw new InvalidRequestError(
      `${at}.name`,
      m.name,
      "the chat template has no place for a participant's name; leave it out (or say it in the text).",
    );
  }
  for (const field of ['tool_calls', 'function_call', 'audio'] as const) {
    if (present(m[field]))
      throw new InvalidRequestError(`${at}.${field}`, m[field], 'tool calls and audio outputs are not supported yet; leave it out.');
  }
  const role: TemplateRole = m.role === 'developer' ? 'system' : m.role;
  if (role !== 'assistant') {
    if (typeof m.content !== 'string' && !Array.isArray(m.content)) {
      throw new InvalidMessageError(`${at}.content must be a string or an array of parts.`);
    }
    return { role, content: m.content as string | ChatContentPart[] };
  }
  if (m.content === undefined || m.content === null) return { role, content: m.refusal ?? '' };
  if (typeof m.content === 'string') return { role, content: m.content };
  if (!Array.isArray(m.content)) throw new InvalidMessageError(`${at}.content must be a string, an array of parts, or null.`);
  return {
    role,
    content: m.content.map((p) =>
      p?.type === 'refusal'
        ? { type: 'text' as const, text: typeof p.refusal === 'string' ? p.refusal : String(p.refusal) }
        : (p as ChatContentPart),
    ),
  };
}
