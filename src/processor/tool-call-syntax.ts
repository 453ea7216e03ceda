// tool-call-syntax.ts: how a checkpoint's chat template says a tool call is written, read from the template
// itself. Templates that offer tools show the model the tools' JSON and then the form of a call; the one
// form read here is the one the Qwen2.5/Qwen3 templates teach (public/models/qwen3_vl-tiny's chat template,
// and vLLM's "hermes" tool parser reads the same):
//
//   <tool_call>
//   {"name": "get_weather", "arguments": {"city": "Oslo"}}
//   </tool_call>
//
// one block per call, blocks separated by a newline, text before the first block the answer's content.
// A template that never reads `tools`, or reads them without teaching this form, has no syntax here, and a
// request with tools is refused by name (ToolsNotSupportedError).

import type { ChatTemplate } from './chat-template';

export interface ToolCallSyntax {
  /** What opens a call ('<tool_call>'). */
  readonly begin: string;
  /** What closes it ('</tool_call>'). */
  readonly end: string;
  /** Between begin and the name: '\n{"name": "'. */
  readonly beforeName: string;
  /** Between the name and the arguments' JSON: '", "arguments": '. */
  readonly beforeArguments: string;
  /** After the arguments: '}\n'. */
  readonly afterArguments: string;
}

export const HERMES_TOOL_CALLS: ToolCallSyntax = {
  begin: '<tool_call>',
  end: '</tool_call>',
  beforeName: '\n{"name": "',
  beforeArguments: '", "arguments": ',
  afterArguments: '}\n',
};

/** The tool-call syntax `template` teaches, or undefined when it offers no tools in a form Tessera reads. */
export function toolCallSyntaxOf(template: ChatTemplate): ToolCallSyntax | undefined {
  if (!template.readsTools) return undefined;
  const s = template.source;
  return s.includes(HERMES_TOOL_CALLS.begin) && s.includes(HERMES_TOOL_CALLS.end) ? HERMES_TOOL_CALLS : undefined;
}
