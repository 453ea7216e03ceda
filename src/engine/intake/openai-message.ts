// OpenAI's message shapes read as the chat template's: 'developer' is 'system'; an assistant turn with no
// content (null or absent) is empty, and its refusal (parts or the `refusal` field) is its text; its
// tool_calls and a 'tool' turn's result go to templates that offer tools (the engine refuses them, by name,
// for one that does not). What the template cannot show and Tessera cannot do is refused by name, never
// dropped: participant names, OpenAI's deprecated function calls, audio output references.
//
//   { role: 'developer', content }                          -> { role: 'system', content }
//   { role: 'assistant', content: null, refusal: 'No.' }    -> { role: 'assistant', content: 'No.' }
//   { role: 'assistant', content: [{ type: 'refusal', refusal: 'No.' }] } -> [{ type: 'text', text: 'No.' }]
//   { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments } }] }
//                                                            -> { role: 'assistant', content: '', toolCalls: [{ id, name, arguments }] }
//   { role: 'tool', tool_call_id, content }                 -> { role: 'tool', content, toolCallId }
//   { role: 'function', ... }, { name: 'ann', ... }          -> InvalidRequestError naming the field

import { InvalidMessageError, InvalidRequestError } from '../../errors';
import type { ToolCallInput } from '../../processor/messages';
import type { ChatCompletionMessage, ChatContentPart } from '../types';

type TemplateRole = 'system' | 'user' | 'assistant' | 'tool';

const ROLES = ['system', 'developer', 'user', 'assistant', 'tool'];

const present = (v: unknown) => v !== undefined && v !== null && !(Array.isArray(v) && v.length === 0);

interface OpenAiMessageRead {
  role: TemplateRole;
  content: string | ChatContentPart[];
  toolCalls?: ToolCallInput[];
  toolCallId?: string;
}

function toolCalls(v: unknown, at: string): ToolCallInput[] {
  const want = "each must be { id, type: 'function', function: { name, arguments } } with arguments the call's JSON text.";
  if (!Array.isArray(v)) throw new InvalidRequestError(`${at}.tool_calls`, v, `it must be an array of calls; ${want}`);
  return v.map((c: unknown, k) => {
    const f = (c as { function?: { name?: unknown; arguments?: unknown } } | null)?.function;
    const id = (c as { id?: unknown } | null)?.id;
    if (typeof c !== 'object' || c === null || (c as { type?: unknown }).type !== 'function' || typeof f?.name !== 'string') {
      throw new InvalidRequestError(`${at}.tool_calls[${k}]`, c, want);
    }
    if (typeof f.arguments !== 'string') throw new InvalidRequestError(`${at}.tool_calls[${k}].function.arguments`, f.arguments, want);
    if (id !== undefined && typeof id !== 'string') throw new InvalidRequestError(`${at}.tool_calls[${k}].id`, id, 'it must be a string.');
    return { ...(id !== undefined ? { id } : {}), name: f.name, arguments: f.arguments };
  });
}

/** Message `i` as the processor takes it (its parts still to be read). */
export function fromOpenAiMessage(m: ChatCompletionMessage, i: number): OpenAiMessageRead {
  const at = `messages[${i}]`;
  if (m === null || typeof m !== 'object') throw new InvalidMessageError(`${at} must be an object {role, content}.`);
  if (m.role === 'function') {
    throw new InvalidRequestError(`${at}.role`, m.role, "OpenAI's deprecated function results are not taken; send them as role 'tool'.");
  }
  if (!ROLES.includes(m.role)) {
    throw new InvalidMessageError(`${at}.role is ${JSON.stringify(m.role)}; use one of system, developer, user, assistant, tool.`);
  }
  if (present(m.name)) {
    throw new InvalidRequestError(
      `${at}.name`,
      m.name,
      "the chat template has no place for a participant's name; leave it out (or say it in the text).",
    );
  }
  for (const field of ['function_call', 'audio'] as const) {
    if (present(m[field]))
      throw new InvalidRequestError(
        `${at}.${field}`,
        m[field],
        'function_call and audio outputs are not taken; leave it out (use tool_calls).',
      );
  }
  if (present(m.tool_calls) && m.role !== 'assistant') {
    throw new InvalidRequestError(`${at}.tool_calls`, m.tool_calls, 'only an assistant turn makes tool calls.');
  }
  const role: TemplateRole = m.role === 'developer' ? 'system' : m.role;
  if (role === 'tool') {
    if (!absentOrString(m.tool_call_id)) throw new InvalidRequestError(`${at}.tool_call_id`, m.tool_call_id, 'it must be a string.');
  }
  if (role !== 'assistant') {
    if (typeof m.content !== 'string' && !Array.isArray(m.content)) {
      throw new InvalidMessageError(`${at}.content must be a string or an array of parts.`);
    }
    return {
      role,
      content: m.content as string | ChatContentPart[],
      ...(role === 'tool' && m.tool_call_id ? { toolCallId: m.tool_call_id } : {}),
    };
  }
  const calls = present(m.tool_calls) ? { toolCalls: toolCalls(m.tool_calls, at) } : {};
  if (m.content === undefined || m.content === null) return { role, content: m.refusal ?? '', ...calls };
  if (typeof m.content === 'string') return { role, content: m.content, ...calls };
  if (!Array.isArray(m.content)) throw new InvalidMessageError(`${at}.content must be a string, an array of parts, or null.`);
  return {
    role,
    content: m.content.map((p) =>
      p?.type === 'refusal'
        ? { type: 'text' as const, text: typeof p.refusal === 'string' ? p.refusal : String(p.refusal) }
        : (p as ChatContentPart),
    ),
    ...calls,
  };
}

const absentOrString = (v: unknown) => v === undefined || v === null || typeof v === 'string';
