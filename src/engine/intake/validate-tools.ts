// OpenAI's tools, tool_choice and parallel_tool_calls, checked (validate-request.ts calls this for every
// request). Whether the checkpoint can take tools at all is the engine's question (its template's tool-call
// syntax); here only the fields' shapes:
//
//   tools                 up to 128 { type: 'function', function: { name, description?, parameters?, strict? } },
//                         names 1-64 of [A-Za-z0-9_-], each once; parameters a JSON Schema object
//   tool_choice           'auto' (default with tools) | 'none' | 'required' | { type: 'function', function: { name } }
//                         naming one of the tools; with no tools only 'none' (or absent)
//   parallel_tool_calls   boolean (default true): false allows at most one call per answer
//
// `functions` and `function_call` (OpenAI's deprecated form) stay refused and point at tools.

import { InvalidRequestError } from '../../errors';
import type { TemplateTool } from '../../processor/chat-template';

/** The most tools one request may offer (OpenAI's limit). */
const MAX_TOOLS = 128;

type ToolChoice = 'auto' | 'none' | 'required' | { name: string };

export interface ToolRequest {
  /** The tools, as the chat template reads them. */
  tools: TemplateTool[];
  choice: ToolChoice;
  /** false: at most one call. */
  parallel: boolean;
}

const NAME = /^[A-Za-z0-9_-]{1,64}$/;
const absent = (v: unknown) => v === undefined || v === null;
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function tool(v: unknown, i: number): TemplateTool {
  const at = `tools[${i}]`;
  const want = 'each tool must be { type: "function", function: { name, description?, parameters? } }.';
  if (!isObject(v)) throw new InvalidRequestError(at, v, want);
  if (v.type !== 'function') throw new InvalidRequestError(`${at}.type`, v.type, `${want} Only function tools exist on the device.`);
  const f = v.function;
  if (!isObject(f)) throw new InvalidRequestError(`${at}.function`, f, want);
  if (typeof f.name !== 'string' || !NAME.test(f.name)) {
    throw new InvalidRequestError(`${at}.function.name`, f.name, 'it must be 1 to 64 letters, digits, underscores or dashes.');
  }
  if (!absent(f.description) && typeof f.description !== 'string')
    throw new InvalidRequestError(`${at}.function.description`, f.description, 'it must be a string.');
  if (!absent(f.parameters) && !isObject(f.parameters))
    throw new InvalidRequestError(`${at}.function.parameters`, f.parameters, 'it must be a JSON Schema object.');
  if (!absent(f.strict) && typeof f.strict !== 'boolean')
    throw new InvalidRequestError(`${at}.function.strict`, f.strict, 'it must be true or false.');
  return {
    type: 'function',
    function: {
      name: f.name,
      ...(typeof f.description === 'string' ? { description: f.description } : {}),
      ...(isObject(f.parameters) ? { parameters: f.parameters } : {}),
    },
  };
}

function choice(v: unknown, names: readonly string[]): ToolChoice {
  const want = "it must be 'auto', 'none', 'required' or { type: 'function', function: { name } }.";
  if (absent(v)) return names.length > 0 ? 'auto' : 'none';
  if (v === 'auto' || v === 'none' || v === 'required') {
    if (v !== 'none' && names.length === 0)
      throw new InvalidRequestError('tool_choice', v, 'it needs tools: offer at least one, or leave tool_choice out.');
    return v;
  }
  if (!isObject(v) || v.type !== 'function' || !isObject(v.function) || typeof v.function.name !== 'string') {
    throw new InvalidRequestError('tool_choice', v, want);
  }
  const name = v.function.name;
  if (!names.includes(name)) {
    throw new InvalidRequestError(
      'tool_choice.function.name',
      name,
      names.length ? `it must name one of the tools: ${names.join(', ')}.` : 'it needs tools: offer that function in tools.',
    );
  }
  return { name };
}

/** The request's tool fields checked; undefined when it offers none (and tool_choice is absent or 'none'). */
export function validateTools(r: Record<string, unknown>): ToolRequest | undefined {
  const list = r.tools;
  if (!absent(list) && !Array.isArray(list)) throw new InvalidRequestError('tools', list, 'it must be an array of function tools.');
  const given = (list as unknown[] | null | undefined) ?? [];
  if (given.length > MAX_TOOLS) throw new InvalidRequestError('tools', `${given.length} tools`, `offer at most ${MAX_TOOLS}.`);
  const tools = given.map(tool);
  const names = tools.map((t) => t.function.name);
  const twice = names.find((n, i) => names.indexOf(n) !== i);
  if (twice !== undefined) throw new InvalidRequestError('tools', twice, 'each function name may be offered once.');
  if (!absent(r.parallel_tool_calls) && typeof r.parallel_tool_calls !== 'boolean')
    throw new InvalidRequestError('parallel_tool_calls', r.parallel_tool_calls, 'it must be true or false.');
  const c = choice(r.tool_choice, names);
  if (tools.length === 0) return undefined;
  return { tools, choice: c, parallel: r.parallel_tool_calls !== false };
}
